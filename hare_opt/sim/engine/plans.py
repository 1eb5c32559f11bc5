"""A plan as a plan follower executes it: runs of tasks, queued per GPU (or per type).

A planner's schedule of 10^6 tasks comes out of the round engine as a few 10^4 runs
(one job on one GPU: ``count`` tasks back to back in each of ``rounds`` rounds, a
period apart), and a plan follower re-plans at every arrival, so a plan is kept as
runs, never as one row per task. A strict follower keeps one queue per GPU: the plan's
tasks on that GPU in the order (planned start, round in the plan, position in the
plan). Which GPU of a type matters as soon as switching a GPU between jobs costs a
setup: a type's queue served by whichever GPU of the type was idle paid a setup on
30% of its tasks where the plan paid one on 0.06% (testbed seed 1000, Table 3's
``default`` switching; docs/reproduction.md). A run's
tasks come one after another in that order, and its tasks take one stretch of the
plan's positions (a periodic run with the runs of the same rounds on the job's other
GPUs: tasks at equal start and round there are of one job and round, so equal queue
entries). So ordering runs by (start of the next task, round, run index) gives the
queue task by task. ``PlanRuns.queues`` builds the reference engine's queues (one
entry per task); the compiled engine keeps a heap of runs per GPU
(``hare_opt.sim.engine.relaxed_kernel``). A work-conserving follower takes the first entry of
its type's queue that is ready now, so it keeps each type's queue split by job
(``PlanRuns.job_queues``; the compiled engine: a heap of runs per type and job).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PlanRuns:
    """Runs of a plan, in plan order; every field is an (R,) int64 array.

    ``job``: instance index; ``rnd``: the job's first round (instance numbering);
    ``key``: that round in the plan's own numbering (the queue's second key);
    ``gtype``: GPU type; in each of ``rounds`` rounds, ``period`` apart from ``start``,
    ``count`` tasks are planned ``step`` apart; ``gpu``: the GPU the plan put them on."""

    job: np.ndarray
    rnd: np.ndarray
    key: np.ndarray
    gtype: np.ndarray
    start: np.ndarray
    step: np.ndarray
    count: np.ndarray
    period: np.ndarray
    rounds: np.ndarray
    gpu: np.ndarray

    @classmethod
    def empty(cls) -> PlanRuns:
        z = np.zeros(0, dtype=np.int64)
        return cls(z, z, z, z, z, z, z, z, z, z)

    @property
    def tasks(self) -> int:
        return int(self.count @ self.rounds)

    def _tasks(self, by: np.ndarray) -> tuple[np.ndarray, ...]:
        """Every task of the plan: (queue, start, job, round), and the queue order;
        ``by`` (R,): each run's queue (its GPU type, or its GPU)."""
        size = self.count * self.rounds
        run = np.repeat(np.arange(len(self.job)), size)
        nth = np.arange(len(run)) - np.repeat(np.cumsum(size) - size, size)
        r, n = nth // self.count[run], nth % self.count[run]  # round, task within it
        start = self.start[run] + r * self.period[run] + n * self.step[run]
        job, queue, key, rnd = self.job[run], by[run], self.key[run] + r, self.rnd[run] + r
        order = np.lexsort((key, start, queue))  # ties: position in the plan (see above)
        return queue, start, job, rnd, order

    def queues(self, gpus: int) -> list[deque[tuple[int, int, int]]]:
        """Per GPU, the deque of its tasks (planned start, job, round) in queue order."""
        gpu, start, job, rnd, order = self._tasks(self.gpu)
        bounds = np.searchsorted(gpu[order], np.arange(gpus + 1))
        return [
            deque(zip(start[sel].tolist(), job[sel].tolist(), rnd[sel].tolist()))
            for sel in (order[a:b] for a, b in zip(bounds[:-1], bounds[1:]))
        ]

    def job_queues(self, types: int) -> list[dict[int, deque[tuple[int, int]]]]:
        """Per GPU type, per job, the deque of the job's tasks in that type's queue as
        (position in the queue, round), by round and then position: the job's first
        entry of a round is the head once its earlier rounds' entries are gone."""
        typ, _, job, rnd, order = self._tasks(self.gtype)
        pos = np.empty(len(order), dtype=np.int64)
        pos[order] = np.arange(len(order))  # positions of one type's tasks keep their order
        by = np.lexsort((pos, rnd, job, typ))
        t, j = typ[by], job[by]
        cuts = np.flatnonzero((t[1:] != t[:-1]) | (j[1:] != j[:-1])) + 1
        out: list[dict[int, deque[tuple[int, int]]]] = [{} for _ in range(types)]
        for a, b in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(by)]])):
            if b > a:
                sel = by[a:b]
                out[int(t[a])][int(j[a])] = deque(zip(pos[sel].tolist(), rnd[sel].tolist()))
        return out
