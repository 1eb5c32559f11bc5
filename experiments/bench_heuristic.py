"""Benchmark of the ``hare`` heuristic on paper-like instances of 10^4 .. 10^6 tasks.

Instances: ``paper_jobs`` (200 jobs, the paper's Fig. 14 scale; GPU demand
uniform in 1..16 so that rounds have several tasks) bound to a 160-GPU
cluster of the paper's four types, every job's rounds scaled by one factor
to reach the target task count. It first prints the one-off numba cost of the
round engine (first call in this process: a cache load, or a compile; and a cold
compile in a subprocess with an empty cache), kept out of the timings below. For
each size it times, best of ``--repeat`` runs,

* ``core``: one schedule (interleaved dispatch, fluid-Smith order) plus the
  guarantee's a-priori bound, i.e. ``solve_hare(improve=False)``;
* ``default``: ``solve_hare()`` with its bounded improvement step;
* ``check``: the independent checker on the same schedule;

and the peak Python memory of one ``core`` run (tracemalloc, in a separate
untimed run). Prints a table and writes experiments/results/bench_heuristic.csv.

Heuristic quality (objective / OPT) is measured by experiments/quality.py.

    python experiments/bench_heuristic.py [--sizes 10000 100000 1000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from hare_opt.checker import check
from hare_opt.generators import build_instance, paper_jobs
from hare_opt.heuristics.hare import HareOptions, solve_hare
from hare_opt.heuristics.rounds import warm_up
from hare_opt.model import Instance

RESULTS = Path(__file__).resolve().parent / "results"
CLUSTER = "V100:64,T4:48,K80:24,M60:24"
N_JOBS = 200


def bench_instance(num_tasks: int, seed: int = 0) -> Instance:
    """200 paper-like jobs whose rounds are scaled so the total is about ``num_tasks``."""
    jobs = paper_jobs(seed, N_JOBS, demand="uniform", max_gpus=16, mean_interarrival=60.0)
    base = sum(j.rounds * j.tasks_per_round for j in jobs)
    scale = num_tasks / base
    jobs = [dataclasses.replace(j, rounds=max(1, round(j.rounds * scale))) for j in jobs]
    return build_instance(jobs, CLUSTER, name=f"bench-hare-{num_tasks}")


#: One schedule and the guarantee, no search (the ``core`` column).
CORE = HareOptions(improve=False)


def best_time(fn, repeat: int):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def cold_compile_s() -> float:
    """``engine.warm_up`` in a fresh process whose numba cache folder is empty."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                "from hare_opt.heuristics.rounds import warm_up; print(warm_up())",
            ],
            env={**os.environ, "NUMBA_CACHE_DIR": tmp},
            capture_output=True,
            text=True,
            check=True,
        )
    return float(out.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc run")
    ap.add_argument("--out", type=Path, default=RESULTS / "bench_heuristic.csv")
    args = ap.parse_args()
    print(
        f"numba first call (cache load, or compile if no cache): {warm_up():.2f} s; "
        f"cold compile (empty cache, subprocess): {cold_compile_s():.2f} s",
        flush=True,
    )
    rows = []
    for n in args.sizes:
        inst = bench_instance(n)
        _ = inst.round_time_next, inst.proc  # instance views are cached model facts, not hare
        core_s, core = best_time(lambda inst=inst: solve_hare(inst, options=CORE), args.repeat)
        full_s, full = best_time(lambda inst=inst: solve_hare(inst), args.repeat)
        check_s, rep = best_time(lambda inst=inst, s=core.schedule: check(inst, s), args.repeat)
        assert rep.feasible and rep.objective == core.objective, rep.violations[:3]
        peak = float("nan")
        if not args.no_memory:
            tracemalloc.start()
            solve_hare(inst, options=CORE)
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
        rows.append(
            {
                "tasks": inst.num_tasks,
                "jobs": inst.num_jobs,
                "gpus": inst.num_gpus,
                "rounds": int(inst.rounds.sum()),
                "core_s": round(core_s, 3),
                "tasks_per_s": round(inst.num_tasks / core_s),
                "default_s": round(full_s, 3),
                "default_evals": full.stats["evaluations"],
                "check_s": round(check_s, 3),
                "core_over_check": round(core_s / check_s, 2),
                "peak_mib": round(peak, 1),
                "objective_core": core.objective,
                "objective_default": full.objective,
                "guarantee_bound": core.stats["guarantee_bound"],
            }
        )
        print(rows[-1], flush=True)
    for a, b in zip(rows, rows[1:]):
        b["growth_vs_prev"] = round(b["core_s"] / a["core_s"], 2)
    keys = list(rows[0]) + ["growth_vs_prev"]
    print("  ".join(f"{k:>15s}" for k in keys))
    for r in rows:
        print("  ".join(f"{r.get(k, ''):>15}" for k in keys))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
