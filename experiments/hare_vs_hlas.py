"""Total weighted JCT of ``hare`` against ``hlas`` (and ``hare-paper``) in the paper regime.

The simulator's relaxed policies on paper-regime workloads
(``sweeps.simulate.simulate_cell``, the cells of the ``ours-hlas`` item: Poisson arrivals
at the regime's rate, Hare switching) on the testbed (40 jobs) and a 75-GPU cluster in
the testbed's proportions (100 jobs), on seeds that are not evaluation seeds
(2000-2004). Prints one line per (setting, seed) and, per setting, each policy's mean
total weighted JCT and its mean ratio to ``hare``'s.

``--idle`` prints, for the interleaved dispatcher's plan (fluid order) of each
workload, work-conserving (``conserve=True``) and in the default form (``conserve=False``),
the V100 time idle while a released round of a job eligible there had not started,
the part of it the dispatcher's rule does not excuse (that job's batch would have
ended sooner on the idle V100 than its round's first batch did), and how often a ready
job waited for a busy GPU (``tests/test_work_conserving.idle_while_waiting``).

``--offline`` also prints ``hare``/OPT on the ours-quality item's kind of instances
(``--opt-seeds``, default 2000-2009; the exact portfolio with a time limit: only proved
optima count).

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


def idle(settings: list[str], seeds: list[int]) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_work_conserving import idle_while_waiting

    from hare_opt.generators import build_instance, get_regime, paper_jobs, parse_cluster
    from hare_opt.heuristics.hare import fluid_order
    from hare_opt.heuristics.rounds import run_interleaved

    reg = get_regime("paper")
    for name in settings:
        cell = SETTINGS[name]
        gap = reg.mean_interarrival(len(parse_cluster(cell["cluster"])))
        for seed in seeds:
            jobs = paper_jobs(seed, cell["n_jobs"], mix=(1, 1, 1, 1), arrival="poisson",
                              mean_interarrival=gap, max_gpus=8, regime=reg)
            inst = build_instance(jobs, cell["cluster"], switching="hare", bandwidth_gbps=25.0,
                                  batch_scale=1.0, unit_ms=None, name=f"sim-s{seed}",
                                  regime=reg)
            out = []
            for conserve in (True, False):
                eng = run_interleaved(inst, fluid_order(inst), conserve=conserve)
                i, u, b = idle_while_waiting(inst, eng.schedule())
                out.append(f"{'work-conserving' if conserve else 'hold'}: objective "
                           f"{eng.objective() / 1e3:.0f} s, V100 idle while a round waits "
                           f"{i / 1e3:.0f} GPU-s ({100 * i / b:.2f}% of busy), unexcused "
                           f"{u / 1e3:.0f}, waits {eng.waited} / {int(inst.rounds.sum())} "
                           "rounds")
            print(f"{name} seed {seed} plan: " + "; ".join(out), flush=True)


def offline(seeds: list[int], limit: float) -> None:
    """hare/OPT on the ours-quality item's random instances (4 jobs, 3 GPUs, 20 tasks and
    6 jobs, 4 GPUs, 30 tasks) on ``seeds``; proved optima only (``portfolio``)."""
    from hare_opt.solvers import solve
    from hare_opt.sweeps.offline import quality_instance

    for n, m, t in ((4, 3, 20), (6, 4, 30)):
        ratios = []
        for seed in seeds:
            inst = quality_instance(seed, n, m, t)
            opt = solve(inst, "portfolio", time_limit=limit)
            if opt.status == "optimal":
                ratios.append(solve(inst, "hare", work_conserving=True).objective
                              / opt.objective)
        if ratios:
            print(f"offline hare/OPT, {n} jobs {m} GPUs: {len(ratios)} proved optima, mean "
                  f"{np.mean(ratios):.4f}, worst {max(ratios):.4f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(2000, 2005)))
    ap.add_argument("--policies", nargs="+",
                    default=["hare", "hare:work_conserving=true", "hlas", "hare-paper"])
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("--idle", action="store_true")
    ap.add_argument("--no-sim", action="store_true", help="skip the simulations")
    ap.add_argument("--opt-seeds", nargs="+", type=int, default=list(range(2000, 2010)))
    ap.add_argument("--opt-limit", type=float, default=10.0)
    args = ap.parse_args()
    rows = [] if args.no_sim else run(args.settings, args.seeds, args.policies)
    if rows:
        summary(rows)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    if args.idle:
        idle(args.settings, args.seeds)
    if args.offline:
        offline(args.opt_seeds, args.opt_limit)


if __name__ == "__main__":
    main()
