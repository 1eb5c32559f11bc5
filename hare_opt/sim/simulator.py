"""The event-driven simulator: time, events, and the rules a policy's decisions must obey.

The authoritative state is a ``ClusterState`` (the list-scheduling engine the
heuristics share), so the spec's placement rules live in one place and the
executed schedule comes out of it. The simulator adds what a list scheduler
does not have: a clock. A policy may only start work on a GPU that is idle
*now*, on a job that has *arrived*; setups begin no earlier than the decision.
Events are job arrivals, GPU frees (task ends), round barriers (round ends)
and wake-ups a policy asks for (periodic ticks).

Runs (``start_run``): a gang policy that can show its decision would not change
at a job's round ends commits n identical rounds of the job on the same GPUs in
one step; the simulator skips their round-end events and, at the first other
event (or a round end of two runs at one time), *settles* every run: the rounds
started before that time are placed, the running round's events are posted as
usual, the later rounds are withdrawn, and the policy decides again. The result
is the task-by-task simulation's (tested for every policy).
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from hare_opt.heuristics.listsched import INF, ClusterState
from hare_opt.model import Instance
from hare_opt.model.limits import MAX_TASKS, check_size
from hare_opt.sim.events import ARRIVE, BARRIER, FREE, SETTLE, WAKE, Events, SimulationError
from hare_opt.sim.policy import Policy, get_policy
from hare_opt.sim.results import SimResult

__all__ = ["Events", "SimulationError", "Simulator", "simulate"]


class Simulator:
    """One run of one policy on one instance. Policies call ``start``/``start_gang``."""

    def __init__(self, instance: Instance, policy: Policy, *, max_events: int | None = None,
                 max_time: int | None = None, runs: bool = False):
        check_size("simulator", instance.name, instance.num_tasks, MAX_TASKS,
                   advice="every task is an event")
        self.inst = instance
        self.runs_enabled = runs  # False: every round ends in events (the reference)
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
        #: job -> (gpus, first start, period, rounds) of each committed run
        self.runs: dict[int, _Run] = {}                 # job -> its committed run
        self.run_rounds = 0                             # rounds placed by runs
        self._epoch = 0
        self._marks: list[tuple[tuple[int, int], ...]] = []
        self._deciding = False
        self._pending: list[tuple[int, int, int, int]] = []
        self._started_now: dict[int, tuple[list[int], int]] = {}
        self._converted: set[int] = set()
        self._touched: list[int] = []                   # GPUs given work in this decision
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

    def start_times(self, job: int) -> np.ndarray:
        """(M,) ``start_time(job, g)`` for every GPU (``INF`` where it cannot run)."""
        inst, st = self.inst, self.state
        start = st.starts(job)
        floor = self.now + np.where(st.last == job, 0, inst.overhead[job])
        return np.where(start < INF, np.maximum(start, floor), INF)

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
        gpus = self._gang_check(job, gpus)
        start = max(self.start_time(job, g) for g in gpus)
        for g in gpus:
            self._place(job, g, start)
        self._started_now[job] = (gpus, start)
        return start

    def _gang_check(self, job: int, gpus: list[int] | np.ndarray) -> list[int]:
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
        return gpus

    def started_gpus(self, job: int) -> np.ndarray:
        """GPUs of the gang round ``job`` started in this decision."""
        return np.asarray(self._started_now[job][0], dtype=np.int64)

    def run_gpus(self) -> list[np.ndarray]:
        """GPUs of the runs and of the gang rounds started in this decision."""
        return [r.gpus for r in self.runs.values()] + \
            [np.asarray(g, dtype=np.int64) for g, _ in self._started_now.values()]

    def extend_run(self, job: int, rounds: int, order: np.ndarray | None = None) -> None:
        """Make the gang round of ``job`` just started (``start_gang``, in this decision)
        the first of ``rounds`` identical rounds on the same GPUs, each at the previous
        barrier: a run, placed in one step when it ends.

        The policy vouches that, called at those rounds' ends and at nothing else, it
        would restart the job on the same GPUs at once and start nothing else; it ends
        the run (``end_run``) in a later decision that changes this, and the simulator
        ends it when another job takes one of its GPUs or another event falls on one of
        the run's round ends.
        """
        gpus, start = self._started_now[job]
        total = min(int(rounds), self.remaining_rounds(job) + 1)
        if total <= 1 or job in self.runs or not self.runs_enabled:
            return
        g = np.asarray(gpus if order is None else order, dtype=np.int64)
        if sorted(g.tolist()) != sorted(gpus):
            raise SimulationError(f"policy {self.policy.name!r}: a run of job "
                                  f"{self.inst.jobs[job].id!r} must keep its GPUs {gpus}")
        p = self.inst.proc[job, g]
        run = _Run(g, p, start, int((p + self.inst.sync[job, g]).max()), total, self._epoch)
        self._epoch += 1
        self.runs[job] = run
        self._converted.add(job)
        self._mark(start + (total - 1) * run.period + 1, (job,))  # just after its last start
        for other, o in self.runs.items():  # round ends of two runs at one time
            if other != job:
                t = _first_common(start + run.period, run.period, total - 1,
                                  o.base + o.period, o.period, o.total - 1)
                if t is not None:
                    self._mark(t, (job, other))

    def _mark(self, t: int, jobs: tuple[int, ...]) -> None:
        """A decision point the runs of ``jobs`` would otherwise skip at ``t``."""
        self._marks.append(tuple((j, self.runs[j].epoch) for j in jobs))
        heapq.heappush(self._heap, (int(t), SETTLE, len(self._marks) - 1))

    def _materialise(self, job: int, run: _Run, t: int) -> None:
        """Place the run's rounds that start before ``t``."""
        done = max(1, min(run.total, (t - run.base - 1) // run.period + 1))
        if done > run.placed:
            n = done - run.placed
            self.state.place_rounds(job, run.gpus.tolist(), run.base + run.placed * run.period,
                                    run.period, n)
            self.gpu_busy[run.gpus] += n * run.proc
            self.tasks_done[job] += n * len(run.gpus)
            self.busy[job] += n * int(run.proc.sum())
            self.run_rounds += n
            run.placed = done

    def _settle(self, job: int, t: int) -> None:
        """End the run of ``job`` at ``t``: its rounds started before ``t`` stay, its
        running round's events still to come are posted, the later rounds are dropped."""
        run = self.runs.pop(job)
        self._materialise(job, run, t)
        last = run.base + (run.placed - 1) * run.period
        for gpu, pg in zip(run.gpus.tolist(), run.proc.tolist()):
            if last + pg >= t:  # earlier ends were decisions the policy vouched were no-ops
                heapq.heappush(self._heap, (last + pg, FREE, gpu))
        heapq.heappush(self._heap, (int(self.state.barrier[job]), BARRIER, job))

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
        if self.runs:
            self._touched.append(gpu)
        self._post(start + p, FREE, gpu, job)
        if s.round[job] != r_before:  # the round is complete: its barrier is known
            self._post(int(s.barrier[job]), BARRIER, job, job)
        return start

    def end_run(self, job: int) -> None:
        """End ``job``'s run now (its policy no longer vouches for it)."""
        if job in self.runs:
            self._settle(job, self.now)

    def _post(self, t: int, kind: int, x: int, job: int) -> None:
        if self._deciding:  # held until the decision ends: the round may become a run
            self._pending.append((t, kind, x, job))
        else:
            heapq.heappush(self._heap, (t, kind, x))

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
            items = []
            while heap and heap[0][0] == t:
                items.append(heapq.heappop(heap))
            if self.runs:
                items = self._runs_at(t, items)
            if not items:
                continue  # only the runs' own (skipped) decision points
            ev = Events(t)
            for _, kind, x in sorted(items):
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
                self._decide(ev)
        return SimResult.from_simulator(self, time.perf_counter() - t0)

    def _runs_at(self, t: int, items: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """Settle the runs a decision at ``t`` concerns; the real events at ``t`` after that."""
        marks = [x for _, kind, x in items if kind == SETTLE]
        real = [it for it in items if it[1] != SETTLE]
        named = {j for m in marks for j, e in self._marks[m]
                 if all(jj in self.runs and self.runs[jj].epoch == ee
                        for jj, ee in self._marks[m])}
        if not real and not named:
            return []
        for job in [j for j, r in self.runs.items() if j in named or r.ends_at(t)]:
            self._settle(job, t)
        while self._heap and self._heap[0][0] == t:
            real.append(heapq.heappop(self._heap))
        for job, run in self.runs.items():  # the state at t, for the decision
            self._materialise(job, run, t)
        return [it for it in real if it[1] != SETTLE]

    def _decide(self, ev: Events) -> None:
        """The policy's decision (it ends the runs it no longer vouches for), then: a run
        whose GPU another job took ends now; the events of the rounds started are posted
        (those of rounds that became runs are not)."""
        self._deciding = True
        try:
            self.policy.decide(self, ev)
        finally:
            self._deciding = False
        if self.runs and self._touched:  # a run's GPU taken by another job: it ends now
            touched = set(self._touched)
            for job, run in list(self.runs.items()):
                if job not in self._converted and touched.intersection(run.gpus.tolist()) \
                        and (self.state.last[run.gpus] != job).any():
                    self._settle(job, self.now)
        self._touched.clear()
        for tt, kind, x, job in self._pending:
            if job not in self._converted:
                heapq.heappush(self._heap, (tt, kind, x))
        self._pending.clear()
        self._started_now.clear()
        self._converted.clear()

    def _stuck(self, why: str) -> None:
        waiting = [j for j in range(self.inst.num_jobs) if not self.finished[j]]
        names = ", ".join(
            f"{self.inst.jobs[j].id!r} (round {int(self.state.round[j])} of "
            f"{int(self.inst.rounds[j])}, arrived {int(self.inst.release[j])})"
            for j in waiting[:5])
        more = f" and {len(waiting) - 5} more" if len(waiting) > 5 else ""
        raise SimulationError(f"policy {self.policy.name!r} left job {names}{more} waiting "
                              f"forever: {why} at time {self.now}")


class _Run:
    """A committed run: ``total`` gang rounds on ``gpus``, round i at base + i * period;
    ``placed`` of them are in the state."""

    __slots__ = ("gpus", "proc", "base", "period", "total", "epoch", "placed")

    def __init__(self, gpus: np.ndarray, proc: np.ndarray, base: int, period: int, total: int,
                 epoch: int):
        self.gpus, self.proc, self.base, self.period = gpus, proc, base, period
        self.total, self.epoch, self.placed = total, epoch, 1

    def ends_at(self, t: int) -> bool:
        """Whether one of its skipped events (a round end or a GPU free) falls at ``t``."""
        d = t - self.base
        if d > 0 and d % self.period == 0 and d // self.period <= self.total - 1:
            return True
        e = d - self.proc
        return bool(((e >= 0) & (e % self.period == 0) & (e // self.period <= self.total - 2))
                    .any())


def _first_common(a: int, da: int, na: int, b: int, db: int, nb: int) -> int | None:
    """Smallest t in {a + i da : 0 <= i < na} and {b + k db : 0 <= k < nb}, or None."""
    if na <= 0 or nb <= 0:
        return None
    g = math.gcd(da, db)
    if (b - a) % g:
        return None
    # i da = b - a (mod db): i = i0 (mod db / g)
    m = db // g
    i0 = ((b - a) // g * pow(da // g, -1, m)) % m if m > 1 else 0
    lo = max(0, -((a - b) // da))  # smallest i with a + i da >= b
    i = i0 + -(-(lo - i0) // m) * m if lo > i0 else i0
    if i >= na or (a + i * da - b) // db >= nb:
        return None
    return a + i * da


def simulate(instance: Instance, policy: str | Policy, *, progress=None,
             max_events: int | None = None, max_time: int | None = None, runs: bool = False,
             **options) -> SimResult:
    """Run ``policy`` (a name or an object) on ``instance``; the schedule is checked.

    ``runs=True`` lets gang policies commit runs of identical rounds (same result,
    tested; fewer events, but each decision costs more: it pays only when few jobs
    compete, see docs/simulator.md); the default ends every round in its events."""
    pol = get_policy(policy, **options) if isinstance(policy, str) else policy
    return Simulator(instance, pol, max_events=max_events, max_time=max_time,
                     runs=runs).run(progress)
