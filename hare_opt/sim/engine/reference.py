"""The reference engine: the rules a policy's decisions obey, and the event loop.

The authoritative state is a ``ClusterState`` (the list-scheduling engine the
heuristics share), so the spec's placement rules live in one place and the
executed schedule comes out of it. The simulator adds what a list scheduler
does not have: a clock. A policy may only start work on a GPU that is idle
*now*, on a job that has *arrived*; setups begin no earlier than the decision.
Events are job arrivals, GPU frees (task ends), round barriers (round ends)
and wake-ups a policy asks for (periodic ticks).

Under the ``lease`` semantics (``hare_opt.sim.semantics``) a gang start holds its GPUs
for the policy's lease: the lease's rounds are placed in one step
(``ClusterState.place_rounds``, each round at the previous barrier), the GPUs stay
held until the last barrier, and that barrier is the lease's only event.

``Policy`` is the contract between this loop and a policy, so it lives here; the
compiled cores (``compiled``, ``relaxed``) give the same schedules for the built-in
policies, and ``hare_opt.sim.simulator`` chooses among them.
"""

from __future__ import annotations

import heapq
import time
from typing import Any, Protocol

import numpy as np

from hare_opt.heuristics.listsched import INF, ClusterState
from hare_opt.model import Instance
from hare_opt.model.limits import MAX_TASKS, check_size
from hare_opt.sim.events import (
    ARRIVE,
    BARRIER,
    FREE,
    WAKE,
    Events,
    SimulationError,
    waiting_forever,
)
from hare_opt.sim.results import RunRecord, SimResult
from hare_opt.sim.semantics import (
    DEFAULT_SEMANTICS,
    Mode,
    check_semantics,
    holds_leases,
    lease_of,
    lease_rounds,
    lease_units,
)

__all__ = ["Mode", "Policy", "Simulator"]


class Policy(Protocol):
    """A policy: ``name``, ``mode`` (``"relaxed"`` or ``"gang"``), ``reset``, ``decide``
    and ``stats``. At every event time the loop calls ``decide``; the policy starts work
    through ``sim.start`` (one task) or ``sim.start_gang`` (a whole round), and may
    ``sim.wake_at`` a later time. The simulator enforces every rule, so a policy cannot
    produce an invalid schedule; it can only leave work undone, which the simulator
    reports as an error. A built-in policy may also have ``kernel_state()``
    (``engine.state``): what a compiled core needs to run it."""

    name: str
    mode: Mode

    def reset(self, sim: Simulator) -> None:
        """Called once before the first event (pre-compute per-instance tables here)."""

    def decide(self, sim: Simulator, events: Events) -> None:
        """Start work on idle GPUs at ``events.time``."""

    def stats(self) -> dict[str, Any]:
        """Figures reported with the run (re-plans made, ...); may be empty."""


class Simulator:
    """One run of one policy on one instance. Policies call ``start``/``start_gang``."""

    def __init__(
        self,
        instance: Instance,
        policy: Policy,
        *,
        max_events: int | None = None,
        max_time: int | None = None,
        semantics: str = DEFAULT_SEMANTICS,
    ):
        check_size(
            "simulator",
            instance.name,
            instance.num_tasks,
            MAX_TASKS,
            advice="every task is an event",
        )
        self.inst = instance
        self.policy = policy
        self.semantics = check_semantics(semantics)
        self.leases = holds_leases(policy.mode, self.semantics)
        #: lease length in time units (None: whole jobs); only under leases
        self.lease_len = (
            lease_units(lease_of(policy), instance, policy.name) if self.leases else None
        )
        #: a lease runs the rounds that end within it (else: that start within it)
        self.lease_fits = bool(getattr(policy, "lease_fits", False))
        self.state = ClusterState(instance)
        self.now = 0
        n = instance.num_jobs
        self.arrived = np.zeros(n, dtype=bool)
        self.finished = np.zeros(n, dtype=bool)
        self.first_start = np.full(n, -1, dtype=np.int64)
        self.tasks_done = np.zeros(n, dtype=np.int64)  # tasks placed (started or reserved)
        self.busy = np.zeros(n, dtype=np.int64)  # processing time placed so far
        self.gpu_busy = np.zeros(instance.num_gpus, dtype=np.int64)
        self.setup_time = np.zeros(n, dtype=np.int64)  # GPU time spent setting the job up
        self.hold = np.zeros(instance.num_gpus, dtype=np.int64)  # a lease holds it until
        self.reserved_idle = 0  # GPU time reserved at a decision before it could process
        self.lease_idle = 0  # GPU time a lease held without processing (syncs, gang waits)
        self.num_leases = 0
        self.active: set[int] = set()  # arrived, not finished
        self.num_events = 0
        self._heap: list[tuple[int, int, int]] = []
        # Guards: every schedule that keeps the cluster busy ends long before these.
        serial = int(instance.release.max()) + int(
            (
                instance.rounds
                * instance.tasks_per_round
                * (instance.proc.max(axis=1) + instance.sync.max(axis=1) + instance.overhead)
            ).sum()
        )
        self.max_time = max_time if max_time is not None else 4 * serial + 1000
        self.max_events = (
            max_events if max_events is not None else 20 * instance.num_tasks + 4 * n + 10_000
        )

    # --- queries for policies ----------------------------------------------
    def idle(self, gpu: int) -> bool:
        return bool(max(self.state.free[gpu], self.hold[gpu]) <= self.now)

    def idle_gpus(self) -> np.ndarray:
        return np.flatnonzero(np.maximum(self.state.free, self.hold) <= self.now)

    def ready(self, job: int) -> bool:
        """Arrived, unfinished, and past the barrier before its current round (some tasks
        of that round may already be placed)."""
        return bool(
            self.arrived[job]
            and not self.finished[job]
            and not self.state.done(job)
            and self.state.barrier[job] <= self.now
        )

    def remaining_rounds(self, job: int) -> int:
        """Rounds not yet placed (clairvoyant policies only)."""
        return int(self.inst.rounds[job] - self.state.round[job])

    def start_time(self, job: int, gpu: int) -> int:
        """When ``job``'s next task would start on ``gpu`` if started now."""
        s = self.state
        earliest = s.start_on(job, gpu)
        setup = int(self.inst.overhead[job]) if s.last[gpu] != job else 0
        return max(earliest, self.now + setup)

    def start_times(self, job: int) -> np.ndarray:
        """(M,) ``start_time(job, g)`` for every GPU (``INF`` where it cannot run)."""
        inst, st = self.inst, self.state
        start = st.starts(job)
        floor = self.now + np.where(st.last == job, 0, inst.overhead[job])
        return np.where(start < INF, np.maximum(start, floor), INF)

    def finishes(self, job: int) -> np.ndarray:
        """(M,) processing end of the job's next task on every GPU if started as soon as
        the GPU is free, never before now (``INF`` where it cannot run)."""
        return np.where((s := self.start_times(job)) < INF, s + self.inst.proc[job], INF)

    # --- decisions ------------------------------------------------------------
    def _check(self, job: int, gpu: int) -> None:
        inst = self.inst
        if not (0 <= job < inst.num_jobs) or not (0 <= gpu < inst.num_gpus):
            raise SimulationError(f"policy {self.policy.name!r}: no job {job} or gpu {gpu}")
        jid, gid = inst.jobs[job].id, inst.gpus[gpu].id
        if not self.arrived[job]:
            raise SimulationError(
                f"policy {self.policy.name!r} started job {jid!r} at "
                f"{self.now}, before its arrival {inst.release[job]}"
            )
        if self.state.done(job):
            raise SimulationError(f"policy {self.policy.name!r}: job {jid!r} has no task left")
        if not self.idle(gpu):
            raise SimulationError(
                f"policy {self.policy.name!r}: gpu {gid!r} is busy until "
                f"{max(self.state.free[gpu], self.hold[gpu])} at time "
                f"{self.now}"
            )
        if not inst.eligible[job, gpu]:
            raise SimulationError(
                f"policy {self.policy.name!r}: job {jid!r} cannot run on gpu {gid!r}"
            )

    def start(self, job: int, gpu: int) -> int:
        """Start (relaxed) the job's next task on an idle GPU; returns the processing start.

        The start may lie in the future when a setup runs first or the job's round
        barrier has not passed yet; the GPU is reserved until then.
        """
        if self.leases:
            raise SimulationError(
                f"policy {self.policy.name!r} (gang) starts rounds with "
                "start_gang under the lease semantics"
            )
        self._check(job, gpu)
        return self._place(job, gpu, self.start_time(job, gpu))

    def setup(self, job: int, gpu: int) -> int:
        """Set an idle GPU up for the job now, ahead of its next task (relaxed); returns
        when the GPU is free again. Its next task of the job then starts without one.

        Why: a plan may set a GPU up for a job's next round while the job's current
        round still has tasks to start elsewhere (a task can only be started once its
        round's earlier tasks are), and a plan follower executes that setup on time.
        """
        if self.leases:
            raise SimulationError(f"policy {self.policy.name!r} (gang) sets GPUs up in leases")
        self._check(job, gpu)
        s, setup = self.state, int(self.inst.overhead[job])
        if s.last[gpu] == job or not setup:
            return self.now
        self.setup_time[job] += setup
        s.free[gpu], s.last[gpu] = self.now + setup, job
        heapq.heappush(self._heap, (self.now + setup, FREE, gpu))
        return self.now + setup

    def start_gang(self, job: int, gpus: list[int] | np.ndarray) -> int:
        """Start a whole round on K distinct idle GPUs at one common time; returns it.
        Under leases: the lease's rounds, back to back on these GPUs."""
        gpus = self._gang_check(job, gpus)
        start = max(self.start_time(job, g) for g in gpus)
        if self.leases:
            self._lease(job, gpus, start)
            return start
        for g in gpus:
            self._place(job, g, start)
        return start

    def _gang_check(self, job: int, gpus: list[int] | np.ndarray) -> list[int]:
        gpus = [int(g) for g in gpus]
        k = int(self.inst.tasks_per_round[job])
        jid = self.inst.jobs[job].id
        if len(gpus) != k or len(set(gpus)) != k:
            raise SimulationError(
                f"policy {self.policy.name!r}: a gang round of job {jid!r} "
                f"needs {k} distinct GPUs, got {gpus}"
            )
        if self.state.placed[job] != 0:
            raise SimulationError(
                f"policy {self.policy.name!r}: round of job {jid!r} is already partly started"
            )
        for g in gpus:
            self._check(job, g)
        return gpus

    def _lease(self, job: int, gpus: list[int], start: int) -> None:
        """The lease's rounds on ``gpus`` from ``start``, each at the previous barrier (no
        setup after the first): those starting before the lease ends, at least one (a
        policy with ``lease_fits``: those ending by then, as Gavel's rounds)."""
        inst, st = self.inst, self.state
        g = np.asarray(gpus, dtype=np.int64)
        p = inst.proc[job, g]
        span = int((p + inst.sync[job, g]).max())
        left = self.remaining_rounds(job)
        n = (
            left
            if self.lease_len is None
            else min(
                left, max(1, lease_rounds(self.now + self.lease_len - start, span, self.lease_fits))
            )
        )
        setups = np.where(st.last[g] == job, 0, inst.overhead[job])
        self.setup_time[job] += int(setups.sum())
        reserved = int((start - setups - self.now).sum())
        st.place_rounds(job, gpus, start, span, n)
        end = start + n * span  # the last barrier: the lease ends
        self.hold[g] = end
        self.gpu_busy[g] += n * p
        work = n * int(p.sum())
        self.busy[job] += work
        self.tasks_done[job] += n * len(gpus)
        if self.first_start[job] < 0:
            self.first_start[job] = start
        self.reserved_idle += reserved
        self.lease_idle += len(gpus) * (end - self.now) - work - int(setups.sum()) - reserved
        self.num_leases += 1
        heapq.heappush(self._heap, (end, BARRIER, job))

    def wake_at(self, t: int) -> None:
        """Ask to be called at time ``t`` (a periodic tick)."""
        if t > self.now:
            heapq.heappush(self._heap, (int(t), WAKE, -1))

    def _place(self, job: int, gpu: int, start: int) -> int:
        s = self.state
        r_before = int(s.round[job])
        setup = int(self.inst.overhead[job]) if s.last[gpu] != job else 0
        self.setup_time[job] += setup
        self.reserved_idle += max(0, start - setup - self.now)
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
        """Reset the policy and simulate to the end in this loop."""
        t0 = time.perf_counter()
        self.policy.reset(self)
        return self.loop(progress, t0)

    def loop(self, progress=None, t0: float | None = None) -> SimResult:
        """Simulate to the end, the policy already reset (``t0``: when the run began)."""
        t0 = time.perf_counter() if t0 is None else t0
        inst = self.inst
        for j in np.argsort(inst.release, kind="stable"):
            heapq.heappush(self._heap, (int(inst.release[j]), ARRIVE, int(j)))
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
            while heap and heap[0][0] == t:  # popped in (time, kind, index) order
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
        return self.result(self.record(), time.perf_counter() - t0, "python")

    def record(self) -> RunRecord:
        """This loop's run as an engine hands it back."""
        st = self.state
        return RunRecord(
            st.schedule(),
            st.barrier.copy(),
            self.first_start.copy(),
            self.setup_time.copy(),
            self.gpu_busy.copy(),
            self.num_events,
            self.reserved_idle,
            self.lease_idle,
            self.num_leases,
        )

    def result(self, rec: RunRecord, wall_s: float, engine: str) -> SimResult:
        """The checked result of ``rec``, a run of this simulator's policy by ``engine``."""
        pol = self.policy
        return SimResult.from_record(
            self.inst, pol.name, pol.mode, pol.stats(), rec, self.semantics, wall_s, engine
        )

    def _stuck(self, why: str) -> None:
        raise waiting_forever(
            self.inst, self.policy.name, self.finished, self.state.round, why, self.now
        )
