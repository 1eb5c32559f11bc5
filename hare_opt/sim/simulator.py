"""The event-driven simulator: time, events, and the rules a policy's decisions must obey.

The authoritative state is a ``ClusterState`` (the list-scheduling engine the
heuristics share), so the spec's placement rules live in one place and the
executed schedule comes out of it. The simulator adds what a list scheduler
does not have: a clock. A policy may only start work on a GPU that is idle
*now*, on a job that has *arrived*; setups begin no earlier than the decision.
Events are job arrivals, GPU frees (task ends), round barriers (round ends)
and wake-ups a policy asks for (periodic ticks).
"""

from __future__ import annotations

import heapq
import time

import numpy as np

from hare_opt.heuristics.listsched import INF, ClusterState
from hare_opt.model import Instance
from hare_opt.model.limits import MAX_TASKS, check_size
from hare_opt.sim.events import ARRIVE, BARRIER, FREE, WAKE, Events, SimulationError
from hare_opt.sim.policy import Policy, get_policy
from hare_opt.sim.results import SimResult

__all__ = ["Events", "SimulationError", "Simulator", "simulate"]


class Simulator:
    """One run of one policy on one instance. Policies call ``start``/``start_gang``."""

    def __init__(self, instance: Instance, policy: Policy, *, max_events: int | None = None,
                 max_time: int | None = None):
        check_size("simulator", instance.name, instance.num_tasks, MAX_TASKS,
                   advice="every task is an event")
        self.inst = instance
        self.policy = policy
        self.state = ClusterState(instance)
        self.now = 0
        n = instance.num_jobs
        self.arrived = np.zeros(n, dtype=bool)
        self.finished = np.zeros(n, dtype=bool)
        self.first_start = np.full(n, -1, dtype=np.int64)
        self.tasks_done = np.zeros(n, dtype=np.int64)   # tasks placed (started or reserved)
        self.busy = np.zeros(n, dtype=np.int64)         # processing time placed so far
        self.gpu_busy = np.zeros(instance.num_gpus, dtype=np.int64)
        self.setup_time = np.zeros(n, dtype=np.int64)   # GPU time spent setting the job up
        self.active: set[int] = set()                   # arrived, not finished
        self.num_events = 0
        self._heap: list[tuple[int, int, int]] = []
        # Guards: every schedule that keeps the cluster busy ends long before these.
        serial = int(instance.release.max()) + int(
            (instance.rounds * instance.tasks_per_round
             * (instance.proc.max(axis=1) + instance.sync.max(axis=1)
                + instance.overhead)).sum())
        self.max_time = max_time if max_time is not None else 4 * serial + 1000
        self.max_events = (max_events if max_events is not None
                           else 20 * instance.num_tasks + 4 * n + 10_000)

    # --- queries for policies ----------------------------------------------
    def idle(self, gpu: int) -> bool:
        return bool(self.state.free[gpu] <= self.now)

    def idle_gpus(self) -> np.ndarray:
        return np.flatnonzero(self.state.free <= self.now)

    def ready(self, job: int) -> bool:
        """Arrived, unfinished, and past the barrier before its current round (some tasks
        of that round may already be placed)."""
        return bool(self.arrived[job] and not self.finished[job]
                    and not self.state.done(job) and self.state.barrier[job] <= self.now)

    def gang_ready(self, job: int) -> bool:
        """Ready with no task of the current round placed: a gang may start it."""
        return self.ready(job) and self.state.placed[job] == 0

    def remaining_rounds(self, job: int) -> int:
        """Rounds not yet placed (clairvoyant policies only)."""
        return int(self.inst.rounds[job] - self.state.round[job])

    def start_time(self, job: int, gpu: int) -> int:
        """When ``job``'s next task would start on ``gpu`` if started now."""
        s = self.state
        earliest = s.start_on(job, gpu)
        setup = int(self.inst.overhead[job]) if s.last[gpu] != job else 0
        return max(earliest, self.now + setup)

    def finishes(self, job: int) -> np.ndarray:
        """(M,) processing end of the job's next task on every GPU if started as soon as
        the GPU is free, never before now (``INF`` where it cannot run)."""
        inst, st = self.inst, self.state
        start = st.starts(job)
        floor = self.now + np.where(st.last == job, 0, inst.overhead[job])
        return np.where(start < INF, np.maximum(start, floor) + inst.proc[job], INF)

    # --- decisions ------------------------------------------------------------
    def _check(self, job: int, gpu: int) -> None:
        inst = self.inst
        if not (0 <= job < inst.num_jobs) or not (0 <= gpu < inst.num_gpus):
            raise SimulationError(f"policy {self.policy.name!r}: no job {job} or gpu {gpu}")
        jid, gid = inst.jobs[job].id, inst.gpus[gpu].id
        if not self.arrived[job]:
            raise SimulationError(f"policy {self.policy.name!r} started job {jid!r} at "
                                  f"{self.now}, before its arrival {inst.release[job]}")
        if self.state.done(job):
            raise SimulationError(f"policy {self.policy.name!r}: job {jid!r} has no task left")
        if not self.idle(gpu):
            raise SimulationError(f"policy {self.policy.name!r}: gpu {gid!r} is busy until "
                                  f"{self.state.free[gpu]} at time {self.now}")
        if not inst.eligible[job, gpu]:
            raise SimulationError(f"policy {self.policy.name!r}: job {jid!r} cannot run on "
                                  f"gpu {gid!r}")

    def start(self, job: int, gpu: int) -> int:
        """Start (relaxed) the job's next task on an idle GPU; returns the processing start.

        The start may lie in the future when a setup runs first or the job's round
        barrier has not passed yet; the GPU is reserved until then.
        """
        self._check(job, gpu)
        return self._place(job, gpu, self.start_time(job, gpu))

    def start_gang(self, job: int, gpus: list[int] | np.ndarray) -> int:
        """Start a whole round on K distinct idle GPUs at one common time; returns it."""
        gpus = [int(g) for g in gpus]
        k = int(self.inst.tasks_per_round[job])
        jid = self.inst.jobs[job].id
        if len(gpus) != k or len(set(gpus)) != k:
            raise SimulationError(f"policy {self.policy.name!r}: a gang round of job {jid!r} "
                                  f"needs {k} distinct GPUs, got {gpus}")
        if self.state.placed[job] != 0:
            raise SimulationError(f"policy {self.policy.name!r}: round of job {jid!r} is "
                                  "already partly started")
        for g in gpus:
            self._check(job, g)
        start = max(self.start_time(job, g) for g in gpus)
        for g in gpus:
            self._place(job, g, start)
        return start

    def wake_at(self, t: int) -> None:
        """Ask to be called at time ``t`` (a periodic tick)."""
        if t > self.now:
            heapq.heappush(self._heap, (int(t), WAKE, -1))

    def _place(self, job: int, gpu: int, start: int) -> int:
        s = self.state
        r_before = int(s.round[job])
        if s.last[gpu] != job:
            self.setup_time[job] += int(self.inst.overhead[job])
        s.place(job, gpu, start)
        p = int(self.inst.proc[job, gpu])
        self.gpu_busy[gpu] += p
        if self.first_start[job] < 0:
            self.first_start[job] = start
        self.tasks_done[job] += 1
        self.busy[job] += p
        heapq.heappush(self._heap, (start + p, FREE, gpu))
        if s.round[job] != r_before:  # the round is complete: its barrier is known
            heapq.heappush(self._heap, (int(s.barrier[job]), BARRIER, job))
        return start

    # --- the loop ---------------------------------------------------------------
    def run(self, progress=None) -> SimResult:
        t0 = time.perf_counter()
        inst = self.inst
        for j in np.argsort(inst.release, kind="stable"):
            heapq.heappush(self._heap, (int(inst.release[j]), ARRIVE, int(j)))
        self.policy.reset(self)
        remaining = inst.num_jobs
        heap = self._heap
        while remaining:
            if not heap:
                self._stuck("no event is left")
            t = heap[0][0]
            if t > self.max_time:
                self._stuck(f"simulated time passed the guard {self.max_time}")
            self.now = t
            ev = Events(t)
            while heap and heap[0][0] == t:
                _, kind, x = heapq.heappop(heap)
                if kind == ARRIVE:
                    self.arrived[x] = True
                    self.active.add(x)
                    ev.arrived.append(x)
                elif kind == FREE:
                    ev.freed.append(x)
                elif kind == BARRIER:
                    # Later rounds may already be placed (reserved): the job is finished
                    # only at its last barrier.
                    if self.state.done(x) and self.state.barrier[x] == t:
                        self.finished[x] = True
                        self.active.discard(x)
                        ev.finished.append(x)
                        remaining -= 1
                        if progress is not None:
                            progress.update(1)
                    elif not self.state.done(x):
                        ev.opened.append(x)
                else:
                    ev.woken = True
            self.num_events += 1
            if self.num_events > self.max_events:
                self._stuck(f"the number of events passed the guard {self.max_events}")
            if remaining:
                self.policy.decide(self, ev)
        return SimResult.from_simulator(self, time.perf_counter() - t0)

    def _stuck(self, why: str) -> None:
        waiting = [j for j in range(self.inst.num_jobs) if not self.finished[j]]
        names = ", ".join(
            f"{self.inst.jobs[j].id!r} (round {int(self.state.round[j])} of "
            f"{int(self.inst.rounds[j])}, arrived {int(self.inst.release[j])})"
            for j in waiting[:5])
        more = f" and {len(waiting) - 5} more" if len(waiting) > 5 else ""
        raise SimulationError(f"policy {self.policy.name!r} left job {names}{more} waiting "
                              f"forever: {why} at time {self.now}")


def simulate(instance: Instance, policy: str | Policy, *, progress=None,
             max_events: int | None = None, max_time: int | None = None,
             **options) -> SimResult:
    """Run ``policy`` (a name or an object) on ``instance``; the schedule is checked."""
    pol = get_policy(policy, **options) if isinstance(policy, str) else policy
    return Simulator(instance, pol, max_events=max_events, max_time=max_time).run(progress)
