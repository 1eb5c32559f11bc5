"""How far each solver overruns its time limit, from 10 to 10^6 tasks.

Every run is ``hare-opt solve FILE --solver S --time-limit L --json`` in a fresh process,
timed from outside (wall clock, what a user waits). A solver's *start-up* is the wall
time of the same command on the 9-task Fig. 1 instance minus the solve's own runtime
(interpreter, imports, compiled kernels, output); the *overrun* is wall - L - start-up.
The goal is an overrun under 1 s everywhere. A solver that refuses an instance (too
large for it) says so at once, which is within the limit by definition; one that
returns before its limit (proved optimal, or a heuristic that is done) shows a negative
overrun.

    python experiments/bench_overrun.py [--limit 5] [--sizes 1e1 1e2 1e3 1e4 1e5 1e6]
        [--solvers hare,cpsat,...] [--csv experiments/results/bench_overrun.csv]

Instances: ``random_instance`` for 10 tasks, ``paper_instance`` (the paper's models on
testbed-like clusters, 15 to 512 GPUs) for the others, written once to
experiments/results/cache/overrun/. Timings depend on the machine's load: on 2
shared cores, expect a second of noise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from hare_opt.solvers import solver_names

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "experiments" / "results" / "cache" / "overrun"
SOLVERS = solver_names()  # every registered solver: the list cannot go stale
#: target tasks -> (cluster, rounds range) of the paper-like generator
SIZES = {
    "1e2": ("V100:8,T4:4,K80:1,M60:2", (2, 10)),
    "1e3": ("V100:8,T4:4,K80:1,M60:2", (2, 40)),
    "1e4": ("V100:32,T4:16,K80:4,M60:8", (2, 40)),
    "1e5": ("V100:86,T4:43,K80:11,M60:20", (20, 140)),
    "1e6": ("V100:276,T4:138,K80:34,M60:64", (100, 400)),
}


def instance_file(size: str) -> Path:
    """The instance of about ``size`` tasks (generated once, then read from the cache)."""
    from hare_opt.generators import paper_instance, random_instance
    from hare_opt.io import save_instance

    path = CACHE / f"{size}.json"
    if path.is_file():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    if size == "1e1":
        inst = random_instance(1, n_jobs=3, n_gpus=3, max_tasks=10, name="ovr-1e1")
    else:
        cluster, rounds = SIZES[size]
        target, n = float(size), 2
        while True:
            inst = paper_instance(1, n, cluster, rounds=rounds, name=f"ovr-{size}")
            if inst.num_tasks >= 0.9 * target:
                break
            n = max(n + 1, int(n * min(2.0, 0.95 * target / inst.num_tasks)))
    save_instance(inst, path)
    return path


def timed(argv: list[str], timeout: float) -> tuple[float, int | None, str, str]:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            [sys.executable, "-m", "hare_opt.cli.main", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
        )
        return time.perf_counter() - t0, p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, None, "", "timeout"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=float, default=5.0, help="time limit in seconds (5)")
    ap.add_argument("--sizes", nargs="+", default=["1e1", *SIZES])
    ap.add_argument("--solvers", default=",".join(SOLVERS))
    ap.add_argument(
        "--csv", type=Path, default=ROOT / "experiments" / "results" / "bench_overrun.csv"
    )
    args = ap.parse_args()
    solvers = [s for s in args.solvers.split(",") if s]
    fig1 = str(ROOT / "instances" / "fig1.json")
    files = {size: instance_file(size) for size in args.sizes}
    from hare_opt.io import load_instance

    tasks = {size: load_instance(f).num_tasks for size, f in files.items()}
    print(
        f"time limit {args.limit:g} s; instances: "
        + ", ".join(f"{s}: {tasks[s]:,} tasks" for s in args.sizes),
        flush=True,
    )
    start = {}
    for s in solvers:
        runs = [
            timed(["solve", fig1, "--solver", s, "--time-limit", f"{args.limit:g}", "--json"], 300)
            for _ in range(2)
        ]
        # wall time minus the solve itself: interpreter, imports, kernels, output
        start[s] = min(wall - json.loads(out)["runtime_s"] for wall, _, out, _ in runs)
    print("start-up (s): " + ", ".join(f"{s} {start[s]:.1f}" for s in solvers), flush=True)
    rows = []
    for size in args.sizes:
        for s in solvers:
            wall, code, out, err = timed(
                [
                    "solve",
                    str(files[size]),
                    "--solver",
                    s,
                    "--time-limit",
                    f"{args.limit:g}",
                    "--json",
                ],
                args.limit + 600,
            )
            if code == 0:
                summary = json.loads(out)
                status = summary["status"]
            elif code is None:
                status = "TIMEOUT"
            else:
                # exit 2 with one line: refused up front (too large for this solver)
                status = (
                    "refused"
                    if code == 2 and len(err.strip().splitlines()) == 1
                    else "error: " + err.strip()[-80:]
                )
            runtime = json.loads(out)["runtime_s"] if code == 0 else None
            rows.append(
                {
                    "size": size,
                    "tasks": tasks[size],
                    "solver": s,
                    "limit_s": args.limit,
                    "wall_s": round(wall, 2),
                    "startup_s": round(start[s], 2),
                    "overrun_s": round(wall - args.limit - start[s], 2),
                    "runtime_s": runtime,
                    "status": status,
                }
            )
            print(
                f"{size:>4s} {s:10s} wall {wall:7.2f} s  overrun {rows[-1]['overrun_s']:+6.2f}"
                f" s  {status}",
                flush=True,
            )
    df = pd.DataFrame(rows)
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.csv, index=False)

    def cell(r: pd.Series) -> str:
        if r["status"] == "refused":
            return f"refused ({r['wall_s']:.1f} s)"
        if r["status"] not in ("optimal", "feasible", "unknown"):
            return r["status"][:20]
        return f"{r['overrun_s']:+.1f}" + (" (unknown)" if r["status"] == "unknown" else "")

    table = df.assign(cell=df.apply(cell, axis=1)).pivot(
        index="solver", columns="size", values="cell"
    )
    table = table.loc[solvers, args.sizes]
    print(
        f"\noverrun beyond the {args.limit:g} s limit and the solver's start-up (s); "
        f"negative: returned early"
    )
    print("| solver | " + " | ".join(f"{s} ({tasks[s]:,})" for s in args.sizes) + " |")
    print("| --- |" + " --- |" * len(args.sizes))
    for s in solvers:
        print(f"| {s} | " + " | ".join(str(table.loc[s, z]) for z in args.sizes) + " |")
    worst = df[df["status"].isin(["optimal", "feasible", "unknown"])]["overrun_s"].max()
    print(f"\nworst overrun {worst:+.2f} s (goal: < 1 s); rows -> {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
