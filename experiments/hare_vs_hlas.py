"""Total weighted JCT of ``hare`` against ``hlas`` (and ``hare-paper``) in the paper regime.

The simulator's relaxed policies on paper-regime workloads
(``sweeps.simulate.simulate_cell``, the cells of the ``ours-hlas`` item: Poisson arrivals
at the regime's rate, Hare switching) on the testbed (40 jobs) and a 75-GPU cluster in
the testbed's proportions (100 jobs), on seeds that are not evaluation seeds
(2000-2004). Prints one line per (setting, seed) and, per setting, each policy's mean
total weighted JCT and its mean ratio to ``hare``'s.

``--offline`` also prints ``hare``/OPT on small instances (``--opt-seeds``; the exact
solver with a time limit: only proved optima count).

``python experiments/hare_vs_hlas.py`` (about 3 CPU min; ``--policies hare hlas`` skips
the slow ``hare-paper``); ``--json FILE`` writes the rows.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from hare_opt.generators.clusters import cluster_of
from hare_opt.sweeps.simulate import simulate_cell

SETTINGS = {"testbed": dict(n_jobs=40, cluster="V100:8,T4:4,K80:1,M60:2"),
            "75": dict(n_jobs=100, cluster=cluster_of(75))}


def run(settings: list[str], seeds: list[int], policies: list[str]) -> list[dict]:
    rows = []
    for name in settings:
        for seed in seeds:
            got = {}
            for policy in policies:
                t0 = time.process_time()
                row = simulate_cell(seed=seed, policy=policy, **SETTINGS[name])[0]
                got[policy] = row["total_weighted_jct_s"]
                rows.append({"setting": name, "seed": seed, "policy": policy,
                             "wjct_s": row["total_weighted_jct_s"],
                             "cpu_s": time.process_time() - t0})
            print(f"{name} seed {seed}: " + ", ".join(
                f"{p} {v:.0f}" + (f" ({v / got['hare']:.3f}x hare)" if p != "hare"
                                  and "hare" in got else "") for p, v in got.items()),
                flush=True)
    return rows


def summary(rows: list[dict]) -> None:
    for name in dict.fromkeys(r["setting"] for r in rows):
        sub = [r for r in rows if r["setting"] == name]
        by = {}
        for r in sub:
            by.setdefault(r["policy"], {})[r["seed"]] = r["wjct_s"]
        line = []
        for p, v in by.items():
            mean = np.mean(list(v.values()))
            cpu = np.mean([r["cpu_s"] for r in sub if r["policy"] == p])
            txt = f"{p} mean {mean:.0f} s ({cpu:.1f} CPU s a run)"
            if p != "hare" and "hare" in by:
                ratio = [v[s] / by["hare"][s] for s in v]
                txt += (f", {p}/hare mean {np.mean(ratio):.3f} "
                        f"[{min(ratio):.3f}, {max(ratio):.3f}]")
            line.append(txt)
        print(f"{name}: " + "; ".join(line))


def offline(seeds: list[int], limit: float) -> None:
    """hare/OPT on small random instances (proved optima only)."""
    from hare_opt.generators import random_instance
    from hare_opt.solvers import solve

    ratios = []
    for seed in seeds:
        inst = random_instance(seed, n_jobs=5, n_gpus=3, rounds=(1, 4), tasks_per_round=(1, 3),
                               heterogeneity=1.5, release_spread=10, sync=(0, 3),
                               switch_overhead=(0, 2))
        opt = solve(inst, "exact", time_limit=limit)
        if opt.status != "optimal":
            continue
        ratios.append(solve(inst, "hare").objective / opt.objective)
    if ratios:
        print(f"offline hare/OPT on {len(ratios)} small instances: mean "
              f"{np.mean(ratios):.4f}, worst {max(ratios):.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(2000, 2005)))
    ap.add_argument("--policies", nargs="+", default=["hare", "hlas", "hare-paper"])
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("--opt-seeds", nargs="+", type=int, default=list(range(10)))
    ap.add_argument("--opt-limit", type=float, default=20.0)
    args = ap.parse_args()
    rows = run(args.settings, args.seeds, args.policies)
    summary(rows)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    if args.offline:
        offline(args.opt_seeds, args.opt_limit)


if __name__ == "__main__":
    main()
