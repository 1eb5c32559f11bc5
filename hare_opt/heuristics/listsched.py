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
        self.free = np.zeros(m, dtype=np.int64)  # GPU idle from this time
        self.last = np.full(m, -1, dtype=np.int64)  # job the GPU ran last (-1: none)
        self.barrier = instance.release.copy()  # earliest start of the job's next round
        self.round = np.zeros(n, dtype=np.int64)  # the job's round being placed
        self.placed = np.zeros(n, dtype=np.int64)  # tasks of that round placed so far
        self.round_end = np.zeros(n, dtype=np.int64)  # max(end + sync) over placed tasks
        # Placed tasks (job, round, task, gpu, start): a growing int64 buffer, not a list of
        # tuples, so that 10^7 tasks fit in memory (40 bytes each).
        self._buf = np.empty((64, 5), dtype=np.int64)
        self._n = 0

    # --- queries -----------------------------------------------------------
    def done(self, job: int) -> bool:
        return bool(self.round[job] >= self.inst.rounds[job])

    def start_on(self, job: int, gpu: int) -> int:
        """Earliest start of ``job``'s next task on ``gpu`` (setup paid on a switch)."""
        return earliest_start(
            int(self.free[gpu]),
            bool(self.last[gpu] == job),
            int(self.inst.release[job]),
            int(self.inst.overhead[job]),
            int(self.barrier[job]),
        )

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

    def finishes_of(self, jobs: np.ndarray) -> np.ndarray:
        """(len(jobs), M): ``finishes`` of each of ``jobs`` at once (one NumPy pass, for
        greedies that compare every job at every placement)."""
        inst, j = self.inst, jobs[:, None]
        switch = np.maximum(self.free, inst.release[j]) + inst.overhead[j]
        start = np.maximum(np.where(self.last == j, self.free, switch), self.barrier[j])
        return np.where(inst.eligible[jobs], start + inst.proc[jobs], INF)

    # --- updates -------------------------------------------------------------
    def place(self, job: int, gpu: int, start: int | None = None) -> int:
        """Run the job's next task on ``gpu`` at ``start`` (default: earliest); returns start."""
        inst = self.inst
        if self.done(job):
            raise SolverError(f"job {inst.jobs[job].id!r} has no task left to place")
        if not inst.eligible[job, gpu]:
            raise SolverError(f"job {inst.jobs[job].id!r} cannot run on gpu {inst.gpus[gpu].id!r}")
        earliest = self.start_on(job, gpu)
        start = earliest if start is None else int(start)
        if start < earliest:
            raise SolverError(
                f"start {start} of job {inst.jobs[job].id!r} on gpu "
                f"{inst.gpus[gpu].id!r} is before its earliest start {earliest}"
            )
        end = start + int(inst.proc[job, gpu])
        if self._n == len(self._buf):
            self._grow(1)
        self._buf[self._n] = (job, self.round[job], self.placed[job], gpu, start)
        self._n += 1
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

    def append(self, rows: np.ndarray) -> None:
        """Record placements (job, round, task, gpu, start) a compiled engine made by these
        rules on this state's arrays (which it updated itself)."""
        if self._n + len(rows) > len(self._buf):
            self._grow(len(rows))
        self._buf[self._n : self._n + len(rows)] = rows
        self._n += len(rows)

    def _grow(self, extra: int) -> None:
        cap = max(2 * len(self._buf), self._n + extra)
        buf = np.empty((cap, 5), dtype=np.int64)
        buf[: self._n] = self._buf[: self._n]
        self._buf = buf

    def place_rounds(self, job: int, gpus: list[int], start: int, period: int, n: int) -> None:
        """``n`` gang rounds of ``job``, one task on each of ``gpus``, round i at
        ``start + i * period``: a run of identical rounds placed in one step.

        The first round is placed task by task (every rule checked); ``period`` must be
        at least the round's span max(p + s) over ``gpus``, so that every next round
        starts after the barrier, on GPUs free and set up for the job: the same tasks
        ``place`` would accept one at a time.
        """
        inst = self.inst
        g = np.asarray(gpus, dtype=np.int64)
        span = int((inst.proc[job, g] + inst.sync[job, g]).max())
        if (
            period < span
            or n < 1
            or self.placed[job] != 0
            or self.round[job] + n > inst.rounds[job]
        ):
            raise ValueError(
                f"job {inst.jobs[job].id!r}: cannot place {n} rounds of period "
                f"{period} (span {span}) from round {int(self.round[job])}"
            )
        for gpu in g.tolist():
            self.place(job, gpu, start)
        if n == 1:
            return
        k, r0 = len(g), int(self.round[job])
        rounds = np.repeat(np.arange(r0, r0 + n - 1, dtype=np.int64), k)
        starts = start + period * (rounds - r0 + 1)
        rows = np.stack(
            [
                np.full(len(rounds), job),
                rounds,
                np.tile(np.arange(k), n - 1),
                np.tile(g, n - 1),
                starts,
            ],
            axis=1,
        )
        self.append(rows)
        last = start + period * (n - 1)
        self.free[g] = last + inst.proc[job, g]
        self.barrier[job] = last + span
        self.round[job] += n - 1

    def completion(self, job: int) -> int:
        """Completion time of a finished job (its last barrier)."""
        if not self.done(job):
            raise SolverError(f"job {self.inst.jobs[job].id!r} is not finished")
        return int(self.barrier[job])

    def objective(self) -> int:
        return int(sum(int(w) * self.completion(j) for j, w in enumerate(self.inst.weight)))

    def rows(self) -> np.ndarray:
        """(n, 5) placements so far: job, round, task, gpu (indices), start."""
        return self._buf[: self._n]

    def schedule(self) -> Schedule:
        if not self._n:
            return Schedule.empty()
        return Schedule.from_indices(self.inst, *self._buf[: self._n].T)

    def result(self, solver: str, runtime_s: float = 0.0, **stats: object) -> Result:
        """A ``feasible`` result (heuristics prove nothing) once every job is placed."""
        unfinished = [self.inst.jobs[j].id for j in range(self.inst.num_jobs) if not self.done(j)]
        if unfinished:
            raise SolverError(f"jobs not fully placed: {unfinished[:5]}")
        return Result(
            solver=solver,
            status=Status.FEASIBLE,
            schedule=self.schedule(),
            objective=self.objective(),
            runtime_s=runtime_s,
            instance_name=self.inst.name,
            stats=dict(stats),
        )
