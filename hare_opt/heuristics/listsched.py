"""The list-scheduling engine every heuristic shares.

A heuristic decides *which* task goes next and *which* GPU takes it; this
module owns the rules of the spec that make a placement feasible (release,
round barrier with per-GPU sync, switching setup, one task at a time per GPU),
so no heuristic re-derives them. Tasks of a job are placed round by round: a
round's barrier is known once its K tasks are placed.
"""

from __future__ import annotations

import numpy as np

from hare_opt.model import Instance, Result, Schedule, SolverError, Status
from hare_opt.model.rules import earliest_start

INF = np.iinfo(np.int64).max // 4


class ClusterState:
    """GPU availability, the last job on each GPU and each job's progress.

    Fields are public numpy arrays so that fast heuristics can read them in bulk.
    """

    def __init__(self, instance: Instance):
        self.inst = instance
        n, m = instance.num_jobs, instance.num_gpus
        self.free = np.zeros(m, dtype=np.int64)       # GPU idle from this time
        self.last = np.full(m, -1, dtype=np.int64)    # job the GPU ran last (-1: none)
        self.barrier = instance.release.copy()        # earliest start of the job's next round
        self.round = np.zeros(n, dtype=np.int64)      # the job's round being placed
        self.placed = np.zeros(n, dtype=np.int64)     # tasks of that round placed so far
        self.round_end = np.zeros(n, dtype=np.int64)  # max(end + sync) over placed tasks
        self._rows: list[tuple[int, int, int, int, int]] = []

    # --- queries -----------------------------------------------------------
    def done(self, job: int) -> bool:
        return bool(self.round[job] >= self.inst.rounds[job])

    def start_on(self, job: int, gpu: int) -> int:
        """Earliest start of ``job``'s next task on ``gpu`` (setup paid on a switch)."""
        return earliest_start(int(self.free[gpu]), bool(self.last[gpu] == job),
                              int(self.inst.release[job]), int(self.inst.overhead[job]),
                              int(self.barrier[job]))

    def starts(self, job: int) -> np.ndarray:
        """(M,) earliest start on every GPU; ``INF`` where the job cannot run."""
        inst = self.inst
        switch = np.maximum(self.free, inst.release[job]) + inst.overhead[job]
        start = np.where(self.last == job, self.free, switch)
        start = np.maximum(start, self.barrier[job])
        return np.where(inst.eligible[job], start, INF)

    def finishes(self, job: int) -> np.ndarray:
        """(M,) processing end of the job's next task on every GPU (``INF`` if ineligible)."""
        s = self.starts(job)
        return np.where(s < INF, s + self.inst.proc[job], INF)

    # --- updates -------------------------------------------------------------
    def place(self, job: int, gpu: int, start: int | None = None) -> int:
        """Run the job's next task on ``gpu`` at ``start`` (default: earliest); returns start."""
        inst = self.inst
        if self.done(job):
            raise SolverError(f"job {inst.jobs[job].id!r} has no task left to place")
        if not inst.eligible[job, gpu]:
            raise SolverError(f"job {inst.jobs[job].id!r} cannot run on gpu "
                             f"{inst.gpus[gpu].id!r}")
        earliest = self.start_on(job, gpu)
        start = earliest if start is None else int(start)
        if start < earliest:
            raise SolverError(f"start {start} of job {inst.jobs[job].id!r} on gpu "
                             f"{inst.gpus[gpu].id!r} is before its earliest start {earliest}")
        end = start + int(inst.proc[job, gpu])
        self._rows.append((job, int(self.round[job]), int(self.placed[job]), gpu, start))
        self.free[gpu] = end
        self.last[gpu] = job
        self.round_end[job] = max(int(self.round_end[job]), end + int(inst.sync[job, gpu]))
        self.placed[job] += 1
        if self.placed[job] == inst.tasks_per_round[job]:
            self.barrier[job] = self.round_end[job]
            self.round[job] += 1
            self.placed[job] = 0
            self.round_end[job] = 0
        return start

    def completion(self, job: int) -> int:
        """Completion time of a finished job (its last barrier)."""
        if not self.done(job):
            raise SolverError(f"job {self.inst.jobs[job].id!r} is not finished")
        return int(self.barrier[job])

    def objective(self) -> int:
        return int(sum(int(w) * self.completion(j) for j, w in enumerate(self.inst.weight)))

    def schedule(self) -> Schedule:
        if not self._rows:
            return Schedule.empty()
        j, r, k, g, s = (np.array(c, dtype=np.int64) for c in zip(*self._rows))
        return Schedule.from_indices(self.inst, j, r, k, g, s)

    def result(self, solver: str, runtime_s: float = 0.0, **stats: object) -> Result:
        """A ``feasible`` result (heuristics prove nothing) once every job is placed."""
        unfinished = [self.inst.jobs[j].id for j in range(self.inst.num_jobs) if not self.done(j)]
        if unfinished:
            raise SolverError(f"jobs not fully placed: {unfinished[:5]}")
        return Result(solver=solver, status=Status.FEASIBLE, schedule=self.schedule(),
                      objective=self.objective(), runtime_s=runtime_s,
                      instance_name=self.inst.name, stats=dict(stats))
