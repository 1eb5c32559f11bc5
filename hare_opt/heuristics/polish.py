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
from collections.abc import Iterator
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
    around = _rounds_around(plan)
    evals = moves = 0
    improved = True
    while improved:
        improved = False
        gpu = plan.gpu.copy()
        for i, g, p in _moves(inst, plan, prio, around):
            if (
                budget < n
                or time.perf_counter() >= deadline
                or (stop is not None and stop.is_set())
            ):
                return Polished(plan.schedule(inst), best, moves, evals)
            kept = gpu[i], prio[i]
            gpu[i], prio[i] = g, p  # the move in place, undone below unless it is kept
            shifted = left_shift(inst, Plan(plan.job, plan.rnd, plan.task, gpu, prio))
            budget -= n
            evals += 1
            value = plan_objective(inst, shifted)
            if value < best:
                best, plan, improved = value, shifted, True
                prio = 2 * _ranks(prio)
                moves += 1
                break
            gpu[i], prio[i] = kept
    return Polished(plan.schedule(inst), best, moves, evals)


def _moves(
    inst: Instance, plan: Plan, prio: np.ndarray, around: list[tuple[np.ndarray, np.ndarray]]
) -> Iterator[tuple[int, int, int]]:
    """Every single-task move (task, GPU, odd list slot) in scan order, except those that
    leave the schedule as it is (the task next to itself on its own GPU)."""
    for i in range(len(prio)):
        lo, hi = _window(prio, *around[i])
        for g in np.flatnonzero(inst.proc[plan.job[i]] > 0).tolist():
            for p in range(lo | 1, hi, 2):  # odd slots strictly between lo and hi
                if g != plan.gpu[i] or abs(p - prio[i]) != 1:
                    yield i, g, p


def _ranks(keys: np.ndarray) -> np.ndarray:
    """0..n-1 in the order of ``keys`` (ties: index)."""
    out = np.empty(len(keys), dtype=np.int64)
    out[np.argsort(keys, kind="stable")] = np.arange(len(keys))
    return out


def _rounds_around(plan: Plan) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per task, the rows of its job's previous and next round (moves never change them)."""
    rows: dict[tuple[int, int], list[int]] = {}
    for i, key in enumerate(zip(plan.job.tolist(), plan.rnd.tolist())):
        rows.setdefault(key, []).append(i)
    return [
        (
            np.asarray(rows.get((j, r - 1), []), np.int64),
            np.asarray(rows.get((j, r + 1), []), np.int64),
        )
        for j, r in zip(plan.job.tolist(), plan.rnd.tolist())
    ]


def _window(prio: np.ndarray, before: np.ndarray, after: np.ndarray) -> tuple[int, int]:
    """Open interval of list positions a task may move to: after its job's previous round
    (rows ``before``), before its next (``after``); positions of other tasks are even, so
    any odd one inside is free."""
    lo = int(prio[before].max()) if len(before) else -1
    hi = int(prio[after].min()) if len(after) else 2 * len(prio) + 1
    return lo, hi
