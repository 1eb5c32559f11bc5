"""``polish``: single-task moves on a finished schedule, for small instances.

Why: ``hare``'s dispatchers place whole rounds at their earliest barrier, and some optima
put a task where no such rule would: one job's round inside another job's syncs, or a
task on a slow GPU so that a job released later keeps the fast one. Here a schedule is a
GPU per task and one list order of the tasks; ``listshift.left_shift`` turns that into the
earliest start times (the one left shift of the package). A move takes one task to
another eligible GPU and/or list position, the position kept after every task of its
job's previous round and before every task of its next; the first move that lowers the
objective is kept and the scan starts again, until no move helps or the budget (task
placements, so that the result does not depend on the machine) runs out.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from hare_opt.heuristics.listshift import Plan, left_shift, plan_objective
from hare_opt.model import Instance, Schedule

#: Task placements (one left shift costs one per task) the polish may spend, about a
#: second of CPU: on the ours-quality tuning instances (seeds 2000-2029, 4-8 jobs, 20-40
#: tasks) a polish run to its end used at most 398,582.
POLISH_BUDGET = 500_000
#: Larger instances are not polished: a scan of single-task moves grows as tasks^2 x
#: GPUs, and the budget would end it early.
POLISH_TASKS = 200


@dataclass(frozen=True)
class Polished:
    """The polished schedule, its objective, the moves kept and the schedules evaluated."""

    schedule: Schedule
    objective: int
    moves: int
    evaluations: int


def polish(
    inst: Instance,
    schedule: Schedule,
    budget: int = POLISH_BUDGET,
    deadline: float = float("inf"),
    stop: threading.Event | None = None,
) -> Polished | None:
    """First-improvement single-task moves from ``schedule``; None (no polish tried) for an
    instance of more than ``POLISH_TASKS`` tasks. ``deadline`` (``time.perf_counter``) and
    ``stop`` end it early, with the best schedule so far (the run's time limit)."""
    n = len(schedule)
    if n == 0 or n > POLISH_TASKS:
        return None
    plan = left_shift(inst, Plan.of(inst, schedule))
    best = plan_objective(inst, plan)
    prio = 2 * _ranks(plan.start)  # list positions; a move goes to an odd slot between them
    evals = moves = 0
    while budget >= n:
        found = False
        for i in range(n):
            lo, hi = _window(plan, prio, i)
            j = int(plan.job[i])
            for g in np.flatnonzero(inst.proc[j] > 0).tolist():
                for p in range(lo | 1, hi, 2):  # odd slots strictly between lo and hi
                    if g == plan.gpu[i] and abs(p - prio[i]) == 1:
                        continue  # next to itself on its own GPU: the same schedule
                    if time.perf_counter() >= deadline or (stop is not None and stop.is_set()):
                        budget = 0  # out of time: ends every loop below
                    if budget < n:
                        break
                    trial = Plan(plan.job, plan.rnd, plan.task, plan.gpu.copy(), prio.copy())
                    trial.gpu[i], trial.start[i] = g, p
                    shifted = left_shift(inst, trial)
                    budget -= n
                    evals += 1
                    value = plan_objective(inst, shifted)
                    if value < best:
                        best, plan, found = value, shifted, True
                        prio = 2 * _ranks(trial.start)
                        moves += 1
                        break
                if found or budget < n:
                    break
            if found or budget < n:
                break
        if not found:
            break
    return Polished(plan.schedule(inst), best, moves, evals)


def _ranks(keys: np.ndarray) -> np.ndarray:
    """0..n-1 in the order of ``keys`` (ties: index)."""
    out = np.empty(len(keys), dtype=np.int64)
    out[np.argsort(keys, kind="stable")] = np.arange(len(keys))
    return out


def _window(plan: Plan, prio: np.ndarray, i: int) -> tuple[int, int]:
    """Open interval of list positions task i may move to: after its job's previous round,
    before its next (positions of other tasks are even, so any odd one inside is free)."""
    mine = plan.job == plan.job[i]
    before = prio[mine & (plan.rnd == plan.rnd[i] - 1)]
    after = prio[mine & (plan.rnd == plan.rnd[i] + 1)]
    lo = int(before.max()) if len(before) else -1
    hi = int(after.min()) if len(after) else 2 * len(prio) + 1
    return lo, hi
