"""Benchmark of the paper's relaxation Hare_Sched_RL (hare_opt.heuristics.relaxation).

Per instance: its size, the compact model's size (columns, rows, secant cuts up
front + added lazily), the outer-approximation rounds and B&B nodes, the wall
time, what stopped it, the relaxation's incumbent (objective), its proved
lower bound and their relative gap. Rows also go to
experiments/results/bench_relaxation.csv.

    nice -n 10 python experiments/bench_relaxation.py [--time-limit 60] [--node-limit N]
        [--sets paper small:4] [--ladder-ratio 1.05] [--threads T] [--relaxation per-type]
    python experiments/bench_relaxation.py --plan 160 300 [--pairs P] [--milp]

``small:4`` means the first four files of instances/small. With ``--node-limit``
and no ``--time-limit`` (pass 0) every cell is a pure function of its inputs.

``--plan GPUS JOBS``: one plan of the ``hare-paper`` policy's planner on the paper
regime's workload of that size (seed 0) with every job released: the largest residual
a plan of that run can meet. Prints the plan's CPU time per phase (step 1: start,
search, MILP if ``--milp``; steps 2-3), its pairs and blocks, the relaxation's gap, and
whether the MILP or the search changed step 2's order.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import pandas as pd

from hare_opt.heuristics.relaxation import solve_relaxation
from hare_opt.heuristics.relaxation_points import MODES
from hare_opt.io import load_instance

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"


def files(sets: list[str]) -> list[Path]:
    out = []
    for spec in sets:
        name, _, count = spec.partition(":")
        folder = ROOT / "instances" / name
        if not folder.is_dir():
            raise SystemExit(f"no instance set {name!r} under {folder.parent}")
        found = sorted(p for p in folder.glob("*.json") if p.name != "manifest.json")
        out += found[: int(count)] if count else found
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["paper", "small:4"])
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds; 0 = none")
    ap.add_argument("--node-limit", type=int, default=None, help="B&B nodes over all rounds")
    ap.add_argument("--ladder-ratio", type=float, default=1.05)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument(
        "--relaxation",
        choices=MODES,
        default=None,
        help="default: per-gpu (the paper's), per-type with --plan (the planner's)",
    )
    ap.add_argument("--out", default=str(RESULTS / "bench_relaxation.csv"))
    ap.add_argument("--plan", type=int, nargs=2, metavar=("GPUS", "JOBS"), default=None)
    ap.add_argument("--pairs", type=int, default=None, help="--plan: the pair budget")
    ap.add_argument("--milp", action="store_true", help="--plan: with the MILP's root")
    args = ap.parse_args(argv)
    if args.plan:
        one_plan(
            *args.plan, pairs=args.pairs, milp=args.milp, relaxation=args.relaxation or "per-type"
        )
        return
    args.relaxation = args.relaxation or "per-gpu"
    rows = []
    for path in files(args.sets):
        inst = load_instance(path)
        relax = solve_relaxation(
            inst,
            time_limit=args.time_limit or None,
            node_limit=args.node_limit,
            threads=args.threads,
            ladder_ratio=args.ladder_ratio,
            relaxation=args.relaxation,
        )
        s = relax.stats
        rows.append(
            {
                "instance": inst.name,
                "tasks": inst.num_tasks,
                "gpus": inst.num_gpus,
                "model": args.relaxation,
                "columns": s["columns"],
                "rows": s["rows"],
                "cuts": f"{s['initial_cuts']}+{s['cuts'] - s['initial_cuts']}",
                "rounds": s["rounds"],
                "nodes": s["nodes"],
                "time_s": round(relax.runtime_s, 1),
                "status": "optimal" if relax.optimal else s["stopped_by"],
                "objective": round(relax.objective, 1),
                "bound": round(relax.bound, 1) if math.isfinite(relax.bound) else None,
                "gap_pct": round(100 * s["gap"], 2) if math.isfinite(s["gap"]) else None,
                "start": s["start_objective"],
                "time_limit": args.time_limit,
                "node_limit": args.node_limit,
            }
        )
        print(" ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    table = pd.DataFrame(rows)
    print()
    print(table.drop(columns=["time_limit", "node_limit"]).to_string(index=False))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    print(f"\nwrote {args.out}")


def one_plan(gpus: int, jobs: int, *, pairs: int | None, milp: bool, relaxation: str) -> None:
    import time
    from dataclasses import replace

    from hare_opt.generators import paper_instance
    from hare_opt.generators.regimes import REGIMES
    from hare_opt.heuristics.paper_planning import HarePaperPlanner
    from hare_opt.sweeps.items import cluster_of

    inst = paper_instance(
        0,
        jobs,
        cluster_of(gpus),
        regime="paper",
        mean_interarrival=REGIMES["paper"].mean_interarrival(gpus),
    )
    inst = inst.with_jobs([replace(j, release=0) for j in inst.jobs])
    limits: dict[str, Any] = {"max_rounds": 1, "node_limit": 0} if milp else {}
    planner = HarePaperPlanner(pairs=pairs, relaxation=relaxation, **limits)
    HarePaperPlanner(relaxation=relaxation).plan(inst.with_jobs(inst.jobs[:2]), None, 0)  # JIT
    t0 = time.process_time()
    plan = planner.plan(inst, None, 0)
    cpu = time.process_time() - t0
    st = planner.stats()
    gap = st["relaxation_gap_max"]
    print(
        f"one hare-paper plan, {jobs} jobs on {gpus} GPUs (paper regime, seed 0, all "
        f"released): {len(plan)} batches, {cpu:.2f} CPU s (step 1 {st['relaxation_cpu_s']:.2f}"
        f" s, steps 2-3 {cpu - st['relaxation_cpu_s']:.2f} s); {relaxation} relaxation with "
        f"{st['pairs_max']} pairs (budget {st['pairs_budget']}), blocks of "
        f"{st['block_rounds_max']} rounds, {st['blocks_per_job_median_min']} per job "
        f"(median); gap {'-' if gap is None else f'{100 * gap:.1f}%'}; order changed by the "
        f"search {st['order_changed_by_search']}, by the MILP {st['order_changed_by_milp']}"
    )


if __name__ == "__main__":
    main()
