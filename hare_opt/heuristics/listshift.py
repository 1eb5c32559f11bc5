"""A schedule as one list of tasks, and its left shift: the earliest start times a GPU
order allows.

Why here, below the solvers: ``lns`` re-places windows of a schedule and ``cpsat`` turns
its interval solutions into schedules through this left shift, and ``hare``'s polish
evaluates each move with it; one home for the three.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hare_opt.model import Instance, Schedule
from hare_opt.model.rules import earliest_start


@dataclass
class Plan:
    """A schedule as index arrays: job, round, task, GPU, start (one row per task)."""

    job: np.ndarray
    rnd: np.ndarray
    task: np.ndarray
    gpu: np.ndarray
    start: np.ndarray

    @classmethod
    def of(cls, inst: Instance, schedule: Schedule) -> Plan:
        return cls(
            schedule.job_indices(inst),
            schedule.round.copy(),
            schedule.task.copy(),
            schedule.gpu_indices(inst),
            schedule.start.copy(),
        )

    def schedule(self, inst: Instance) -> Schedule:
        return Schedule.from_indices(inst, self.job, self.rnd, self.task, self.gpu, self.start)

    def copy(self) -> Plan:
        return Plan(*(a.copy() for a in (self.job, self.rnd, self.task, self.gpu, self.start)))


def left_shift(inst: Instance, plan: Plan) -> Plan:
    """Every GPU keeps its order; every task starts as early as the spec allows.

    Tasks are taken in order of their current start: a task's GPU predecessor and its
    previous round start earlier, so both are placed before it; by induction no start
    grows, and the result is feasible whenever ``plan`` is.
    """
    out = plan.copy()
    free = np.zeros(inst.num_gpus, dtype=np.int64)
    last = np.full(inst.num_gpus, -1, dtype=np.int64)
    left = inst.tasks_per_round.copy()  # tasks of the open round still to place
    bar = inst.release.copy()  # barrier the open round waits for
    reach = np.zeros(inst.num_jobs, dtype=np.int64)  # max end + sync in the open round
    for i in np.argsort(plan.start, kind="stable").tolist():
        j, g = int(plan.job[i]), int(plan.gpu[i])
        s = earliest_start(
            int(free[g]),
            int(last[g]) == j,
            int(inst.release[j]),
            int(inst.overhead[j]),
            int(bar[j]),
        )
        e = s + int(inst.proc[j, g])
        out.start[i] = s
        free[g], last[g] = e, j
        reach[j] = max(reach[j], e + int(inst.sync[j, g]))
        left[j] -= 1
        if left[j] == 0:
            bar[j], reach[j], left[j] = reach[j], 0, inst.tasks_per_round[j]
    return out


def plan_objective(inst: Instance, plan: Plan) -> int:
    ready = plan.start + inst.proc[plan.job, plan.gpu] + inst.sync[plan.job, plan.gpu]
    done = np.zeros(inst.num_jobs, dtype=np.int64)
    np.maximum.at(done, plan.job, ready)
    return int(inst.weight @ done)
