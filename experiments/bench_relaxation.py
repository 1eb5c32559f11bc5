"""Benchmark of the paper's relaxation Hare_Sched_RL (hare_opt.heuristics.relaxation).

Per instance: its size, the compact model's size (columns, rows, secant cuts up
front + added lazily), the outer-approximation rounds and B&B nodes, the wall
time, what stopped it, the relaxation's incumbent (objective), its proved
lower bound and their relative gap. Rows also go to
experiments/results/bench_relaxation.csv.

    nice -n 10 python experiments/bench_relaxation.py [--time-limit 60] [--node-limit N]
        [--sets paper small:4] [--ladder-ratio 1.05] [--threads T]

``small:4`` means the first four files of instances/small. With ``--node-limit``
and no ``--time-limit`` (pass 0) every cell is a pure function of its inputs.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

from hare_opt.heuristics.relaxation import solve_relaxation
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
        out += found[:int(count)] if count else found
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["paper", "small:4"])
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds; 0 = none")
    ap.add_argument("--node-limit", type=int, default=None, help="B&B nodes over all rounds")
    ap.add_argument("--ladder-ratio", type=float, default=1.05)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default=str(RESULTS / "bench_relaxation.csv"))
    args = ap.parse_args(argv)
    rows = []
    for path in files(args.sets):
        inst = load_instance(path)
        relax = solve_relaxation(inst, time_limit=args.time_limit or None,
                                 node_limit=args.node_limit, threads=args.threads,
                                 ladder_ratio=args.ladder_ratio)
        s = relax.stats
        rows.append({
            "instance": inst.name, "tasks": inst.num_tasks, "gpus": inst.num_gpus,
            "columns": s["columns"], "rows": s["rows"],
            "cuts": f"{s['initial_cuts']}+{s['cuts'] - s['initial_cuts']}",
            "rounds": s["rounds"], "nodes": s["nodes"], "time_s": round(relax.runtime_s, 1),
            "status": "optimal" if relax.optimal else s["stopped_by"],
            "objective": round(relax.objective, 1),
            "bound": round(relax.bound, 1) if math.isfinite(relax.bound) else None,
            "gap_pct": round(100 * s["gap"], 2) if math.isfinite(s["gap"]) else None,
            "start": s["start_objective"], "time_limit": args.time_limit,
            "node_limit": args.node_limit})
        print(" ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    table = pd.DataFrame(rows)
    print()
    print(table.drop(columns=["time_limit", "node_limit"]).to_string(index=False))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
