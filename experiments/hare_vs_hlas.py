"""Total weighted JCT of ``hare`` against every policy in the paper regime, its CPU a run,
the work its round engine leaves idle, and its quality offline.

The simulator's workloads of the paper regime (built as ``sweeps.simulate.simulate_cell``
builds the ``ours-hlas`` item's: Poisson arrivals at the regime's rate, Hare switching, gang
policies under leases) on the testbed (40 jobs) and a 75-GPU cluster in the testbed's
proportions (100 jobs). Seeds default to 3000-3004, never tuned on (the engine's rules were
chosen on 2000-2009; 1000-1009 are the reproduction's evaluation seeds). Prints one line
per (setting, seed), then per setting each policy's mean total weighted JCT, its mean
ratio to ``hare``'s, hare's paired reduction against it (mean and range of 1 - hare /
policy over the seeds) and on how many seeds hare is lower; CPU seconds per run.

``--sync-scale F`` multiplies every job's sync time by F (rounded) before simulating:
a proxy for a regime with shorter syncs.

``--idle`` prints, for the interleaved dispatcher's plan (fluid order) of each workload,
work-conserving (the default) and in the ``-hold`` form, the V100 time idle while a
released round of a job eligible there had not started, the part of it the dispatcher's
rule does not excuse (that job's batch would have ended sooner on the idle V100 than its
round's first batch did), and how often a ready job waited for a busy GPU
(``tests/test_work_conserving.idle_while_waiting``).

``--engine`` prints, for one dispatch of a whole workload's plan (its first ``--first``
jobs released at time 0, fluid order; testbed, 75 and 160 GPUs), work-conserving and in
the ``-hold`` form: the objective, CPU seconds, the share of rounds placed as repeats and
the waits.

``--offline`` scores ``hare`` on the ``ours-quality`` item's instances
(``sweeps.offline.quality_cell``, the item's own code path; ``--offline-seeds``, default
the item's 1000-1004) against the item's reference (the exact portfolio's proved OPT, else
the best proved bound); ``--refs FILE`` reuses references written by an earlier run
(JSON lines, appended to as they are computed: they take minutes each).

``python experiments/hare_vs_hlas.py --policies hare hlas`` (about 1 CPU min);
``--json FILE`` writes the simulation rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from hare_opt.generators import build_instance, get_regime, paper_jobs, parse_cluster
from hare_opt.generators.clusters import cluster_of
from hare_opt.model import Instance
from hare_opt.model.units import unit_seconds
from hare_opt.sim import simulate
from hare_opt.sim.policy import policy_mode, policy_names
from hare_opt.sim.semantics import DEFAULT_SEMANTICS, switching_for


class Setting(TypedDict):
    """A workload setting: ``cell_instance``'s keyword arguments besides seed and policy."""

    n_jobs: int
    cluster: str


SETTINGS: dict[str, Setting] = {
    "testbed": Setting(n_jobs=40, cluster="V100:8,T4:4,K80:1,M60:2"),
    "75": Setting(n_jobs=100, cluster=cluster_of(75)),
}
SIZES = ((4, 3, 20), (6, 4, 30), (8, 5, 40))  # the ours-quality item's


def cell_instance(*, seed: int, policy: str, n_jobs: int, cluster: str) -> tuple[Instance, str]:
    """The workload ``sweeps.simulate.simulate_cell`` runs ``policy`` on with its defaults
    (paper regime, Poisson arrivals, Hare switching, 25 Gbps, the default semantics), built
    the same way here so that its syncs can be scaled first."""
    reg = get_regime("paper")
    jobs = paper_jobs(
        seed,
        n_jobs,
        mix=(1, 1, 1, 1),
        arrival="poisson",
        mean_interarrival=reg.mean_interarrival(len(parse_cluster(cluster))),
        max_gpus=8,
        regime=reg,
    )
    column = switching_for(policy_mode(policy), DEFAULT_SEMANTICS, "hare")
    return build_instance(
        jobs,
        cluster,
        switching=column,
        bandwidth_gbps=25.0,
        batch_scale=1.0,
        unit_ms=None,
        name=f"sim-s{seed}",
        regime=reg,
    ), column


def scale_sync(inst: Instance, factor: float) -> Instance:
    """Every job's sync time times ``factor``, rounded (a map entry by entry)."""
    if factor == 1.0:
        return inst

    def scaled(sync):
        if isinstance(sync, int):
            return round(sync * factor)
        return {k: round(v * factor) for k, v in sync.items()}

    return inst.with_jobs(
        [dataclasses.replace(j, sync_time=scaled(j.sync_time)) for j in inst.jobs]
    )


def run(
    settings: list[str], seeds: list[int], policies: list[str], sync_scale: float
) -> list[dict]:
    rows = []
    for name in settings:
        for seed in seeds:
            got = {}
            for policy in policies:
                inst, _ = cell_instance(seed=seed, policy=policy, **SETTINGS[name])
                inst = scale_sync(inst, sync_scale)
                t0 = time.process_time()
                res = simulate(inst, policy)
                cpu = time.process_time() - t0
                got[policy] = res.metrics["total_weighted_jct"] * (
                    unit_seconds(inst.time_unit) or 1.0
                )
                rows.append(
                    {
                        "setting": name,
                        "seed": seed,
                        "policy": policy,
                        "sync_scale": sync_scale,
                        "wjct_s": got[policy],
                        "cpu_s": cpu,
                    }
                )
            print(
                f"{name} seed {seed}: "
                + ", ".join(
                    f"{p} {v:.0f}"
                    + (f" ({v / got['hare']:.3f}x hare)" if p != "hare" and "hare" in got else "")
                    for p, v in got.items()
                ),
                flush=True,
            )
    return rows


def summary(rows: list[dict]) -> None:
    for name in dict.fromkeys(r["setting"] for r in rows):
        sub = [r for r in rows if r["setting"] == name]
        by: dict[str, dict[int, float]] = {}
        for r in sub:
            by.setdefault(r["policy"], {})[r["seed"]] = r["wjct_s"]
        print(f"{name}:")
        for p, v in by.items():
            cpu = np.mean([r["cpu_s"] for r in sub if r["policy"] == p])
            txt = f"  {p:28s} mean {np.mean(list(v.values())):12.0f} s, {cpu:5.1f} CPU s a run"
            if p != "hare" and "hare" in by:
                red = [1 - by["hare"][s] / v[s] for s in v]
                txt += (
                    f"; {p}/hare {np.mean([v[s] / by['hare'][s] for s in v]):.3f}, "
                    f"hare's reduction {100 * np.mean(red):+.1f}% "
                    f"[{100 * min(red):+.1f}%, {100 * max(red):+.1f}%], hare lower on "
                    f"{sum(x > 0 for x in red)} of {len(red)} seeds"
                )
            print(txt)


def idle(settings: list[str], seeds: list[int]) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_work_conserving import idle_while_waiting

    from hare_opt.heuristics.hare import fluid_order
    from hare_opt.heuristics.rounds import run_interleaved

    for name in settings:
        for seed in seeds:
            inst, _ = cell_instance(seed=seed, policy="hare", **SETTINGS[name])
            out = []
            for conserve in (True, False):
                eng = run_interleaved(inst, fluid_order(inst), conserve=conserve)
                i, u, b = idle_while_waiting(inst, eng.schedule())
                out.append(
                    f"{'work-conserving' if conserve else 'hold'}: objective "
                    f"{eng.objective() / 1e3:.0f} s, V100 idle while a round waits "
                    f"{i / 1e3:.0f} GPU-s ({100 * i / b:.2f}% of busy), unexcused "
                    f"{u / 1e3:.0f}, waits {eng.waited} / {int(inst.rounds.sum())} "
                    "rounds"
                )
            print(f"{name} seed {seed} plan: " + "; ".join(out), flush=True)


def engine(seeds: list[int], first: list[int]) -> None:
    from hare_opt.heuristics.hare import fluid_order
    from hare_opt.heuristics.rounds import run_interleaved

    sizes = {**SETTINGS, "160": Setting(n_jobs=200, cluster=cluster_of(160))}
    for name, cell in sizes.items():
        for seed in seeds:
            inst, _ = cell_instance(seed=seed, policy="hare", **cell)
            for n in first:
                sub = inst.with_jobs([dataclasses.replace(j, release=0) for j in inst.jobs[:n]])
                out = []
                for conserve in (True, False):
                    run_interleaved(sub, fluid_order(sub), conserve=conserve)  # compiled
                    t0 = time.process_time()
                    eng = run_interleaved(sub, fluid_order(sub), conserve=conserve)
                    out.append(
                        f"{'work-conserving' if conserve else 'hold'} "
                        f"{eng.objective()} in {time.process_time() - t0:.3f} CPU s, "
                        f"repeats {eng.repeated / sub.rounds.sum():.1%}, "
                        f"waits {eng.waited}"
                    )
                print(
                    f"engine {name} seed {seed}, first {n} jobs at 0, "
                    f"{int(sub.rounds.sum())} rounds: " + "; ".join(out),
                    flush=True,
                )


def offline(seeds: list[int], refs: str | None) -> None:
    """hare / reference on the ours-quality item's instances, by the item's own cells."""
    from hare_opt.sweeps.offline import REFERENCE, quality_cell

    known: dict[tuple[int, int], dict] = {}
    if refs and Path(refs).exists():
        for line in Path(refs).read_text().splitlines():
            r = json.loads(line)
            known[r["seed"], r["n_jobs"]] = r
    ratios, on_opt = [], []
    for seed in seeds:
        for n, m, t in SIZES:
            cell: dict[str, Any] = dict(seed=seed, n_jobs=n, n_gpus=m, max_tasks=t, time_limit=30.0)
            ref = known.get((seed, n))
            if ref is None:
                ref = {**quality_cell(**cell, solver=REFERENCE)[0], "seed": seed, "n_jobs": n}
                if refs:
                    with open(refs, "a") as fh:
                        fh.write(json.dumps(ref) + "\n")
            t0 = time.process_time()
            got = quality_cell(**cell, solver="hare")[0]
            ratio = got["objective"] / ref["reference"]
            ratios.append(ratio)
            if ref["reference_kind"] == "opt":
                on_opt.append(ratio)
            print(
                f"offline seed {seed} {n} jobs: hare {got['objective']} / "
                f"{ref['reference_kind']} {ref['reference']:.0f} = {ratio:.4f} "
                f"({time.process_time() - t0:.2f} CPU s)",
                flush=True,
            )
    print(
        f"offline hare/OPT on the {len(on_opt)} proved optima: mean {np.mean(on_opt):.4f}, "
        f"worst {max(on_opt):.4f}; hare/(OPT or bound) on all {len(ratios)}: mean "
        f"{np.mean(ratios):.4f}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(3000, 3005)))
    ap.add_argument(
        "--policies",
        nargs="+",
        default=["hare", "hare:work_conserving=false", *(p for p in policy_names() if p != "hare")],
    )
    ap.add_argument("--sync-scale", type=float, default=1.0)
    ap.add_argument("--json", help="write the simulation rows here")
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("--offline-seeds", nargs="+", type=int, default=list(range(1000, 1005)))
    ap.add_argument("--refs", help="JSON lines of references to reuse and extend")
    ap.add_argument("--idle", action="store_true")
    ap.add_argument("--engine", action="store_true")
    ap.add_argument("--first", nargs="+", type=int, default=[30, 60, 200])
    ap.add_argument("--no-sim", action="store_true", help="skip the simulations")
    args = ap.parse_args()
    rows = [] if args.no_sim else run(args.settings, args.seeds, args.policies, args.sync_scale)
    if rows:
        summary(rows)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    if args.idle:
        idle(args.settings, args.seeds)
    if args.engine:
        engine(args.seeds, args.first)
    if args.offline:
        offline(args.offline_seeds, args.refs)


if __name__ == "__main__":
    main()
