"""Benchmark of the independent checker on schedules of 10^4 .. 10^6 tasks.

Builds a synthetic cluster (256 GPUs of four types) and enough jobs to reach
each size, lays out a feasible schedule with a few numpy operations, then
times ``check`` (best of ``--repeat`` runs), and saving and loading the
largest schedule as a JSON file (once each). Prints a table and writes
experiments/results/bench_checker.csv.

    python experiments/bench_checker.py [--sizes 10000 100000 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from pathlib import Path

import numpy as np

from hare_opt.checker import check
from hare_opt.io import load_result, save_result
from hare_opt.model import GPU, Instance, Job, Result, Schedule

RESULTS = Path(__file__).resolve().parent / "results"
TYPES = ("V100", "T4", "M60", "K80")
BLOCK = 8  # GPUs per block; a job's K tasks of a round run on the K GPUs of one block


def synthetic(num_tasks: int, num_gpus: int = 256, seed: int = 0) -> Instance:
    """Jobs of 4..20 rounds of 1..8 tasks on ``num_gpus`` GPUs until ``num_tasks`` is reached."""
    rng = np.random.default_rng(seed)
    gpus = tuple(GPU(f"g{i}", TYPES[i % len(TYPES)], f"n{i // BLOCK}") for i in range(num_gpus))
    jobs: list[Job] = []
    total = 0
    while total < num_tasks:
        left = num_tasks - total
        k = min(int(rng.integers(1, BLOCK + 1)), left)
        r = min(int(rng.integers(4, 21)), left // k)
        base = int(rng.integers(5, 50))
        task_time = {t: base * (f + 1) for f, t in enumerate(TYPES)}
        sync = {t: int(rng.integers(0, 5)) for t in TYPES}
        jobs.append(
            Job(
                f"j{len(jobs)}",
                task_time,
                r,
                k,
                weight=int(rng.integers(1, 5)),
                release=int(rng.integers(0, 10 * len(jobs) + 1)),
                sync_time=sync,
                switch_overhead=int(rng.integers(0, 4)),
            )
        )
        total += r * k
    return Instance(gpus, tuple(jobs), f"bench-{num_tasks}")


def layout(inst: Instance) -> Schedule:
    """Feasible by construction: job j owns block j mod B for its whole run, jobs of a
    block run one after another, round k+1 starts at round k's barrier (one setup per job)."""
    n_blocks = inst.num_gpus // BLOCK
    block = np.arange(inst.num_jobs) % n_blocks
    gpus = block[:, None] * BLOCK + np.arange(BLOCK)[None, :]  # (N, BLOCK)
    span = (
        inst.proc[np.arange(inst.num_jobs)[:, None], gpus]
        + inst.sync[np.arange(inst.num_jobs)[:, None], gpus]
    )
    k = inst.tasks_per_round
    period = np.where(np.arange(BLOCK)[None, :] < k[:, None], span, 0).max(axis=1)
    # The only sequential step: per block, a job starts when the previous one completed.
    first = np.empty(inst.num_jobs, dtype=np.int64)
    free = np.zeros(n_blocks, dtype=np.int64)
    for j, (b, rel, o, r, p) in enumerate(
        zip(
            block.tolist(),
            inst.release.tolist(),
            inst.overhead.tolist(),
            inst.rounds.tolist(),
            period.tolist(),
        )
    ):
        first[j] = max(free[b], rel) + o
        free[b] = first[j] + r * p
    size = inst.rounds * k
    job = np.repeat(np.arange(inst.num_jobs), size)
    local = np.arange(len(job)) - np.repeat(np.cumsum(size) - size, size)
    rnd, task = local // k[job], local % k[job]
    start = first[job] + rnd * period[job]
    return Schedule.from_indices(inst, job, rnd, task, gpus[job, task], start)


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**4, 10**5, 10**6])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    print(
        f"{'tasks':>9} {'jobs':>7} {'gpus':>5} {'check s':>9} {'tasks/s':>11} "
        f"{'save s':>8} {'load s':>8}"
    )
    for n in args.sizes:
        inst = synthetic(n)
        sched = layout(inst)
        rep = check(inst, sched)
        if not rep.feasible:
            raise SystemExit(f"layout is infeasible: {rep.violations[:3]}")
        if rep.objective is None:
            raise SystemExit("the checker found the layout feasible but gave no objective")
        secs = best_of(lambda inst=inst, sched=sched: check(inst, sched), args.repeat)
        save_s = load_s = None
        if n == max(args.sizes):  # file I/O once, on the largest schedule
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "bench.schedule.json"
                res = Result("bench", "feasible", sched, rep.objective, instance_name=inst.name)
                save_s = best_of(lambda path=path, res=res: save_result(res, path), 1)
                load_s = best_of(lambda path=path: load_result(path), 1)
        rows.append(
            {
                "tasks": len(sched),
                "jobs": inst.num_jobs,
                "gpus": inst.num_gpus,
                "check_s": round(secs, 4),
                "tasks_per_s": round(len(sched) / secs),
                "save_json_s": None if save_s is None else round(save_s, 3),
                "load_json_s": None if load_s is None else round(load_s, 3),
            }
        )
        r = rows[-1]
        io_s = "" if load_s is None else f"{save_s:.2f} {load_s:>8.2f}"
        print(
            f"{r['tasks']:>9} {r['jobs']:>7} {r['gpus']:>5} {secs:>9.3f} "
            f"{r['tasks_per_s']:>11,} {io_s:>17}"
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "bench_checker.csv"
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
