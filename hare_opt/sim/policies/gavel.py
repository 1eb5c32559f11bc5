"""Gavel's round mechanism, as its simulator runs it (``gavel-fifo`` and ``gavel-las``
under the ``lease`` semantics).

Source: Narayanan et al., OSDI '20, and its public simulator (stanford-futuredata/gavel
at commit c4fa400, ``scheduler/scheduler.py``, ``policies/fifo.py``,
``policies/max_min_fairness.py``). Its simulator runs the whole cluster in rounds: at a
round start every scheduled job gets its GPUs for one round of ``time_per_iteration``
(360 s): the training steps that fit in it; the round ends when the last of them ends, and
GPUs a job leaves early stay idle until then. Jobs that arrive during a round join at its
end. A policy computes an *allocation* (a time fraction of each job on each GPU type) at
most every ``minimum_time_between_allocation_resets`` (1920 s), and only when the jobs
changed; between two computations the mechanism picks a round's jobs by priority, the
allocated share over the share of time received since the last computation. What
follows transcribes that loop over our simulator's state, in our own code:

* ``RoundState`` (``engine.state``) is what a decision reads (both engines fill it);
  ``GavelRounds.decide`` returns the gangs to start, each on GPUs of one type, for a
  lease of one Gavel round.
* Time received: each job is credited ``lease / 2`` on every type when it arrives and at
  every recomputation (Gavel's initial value), and a round's time when the round ends,
  measured from the end of the round before (Gavel's ``current_round_start_time``, which
  an idle gap between rounds does not move).
* Deficits (should have received less received, per type) break ties in priority.
* A job that arrived since the last computation has no allocation: Gavel ranks it (last)
  but gives it no GPUs until the next computation.
* FIFO (``fifo_perf``): at each computation, jobs in arrival order, each on the type with
  its highest throughput among those with enough GPUs not yet allocated; the first job
  that fits no type blocks the rest. A round runs only jobs with a positive priority.
* Max-min fairness (``max_min_fairness_perf``): the LP max min_j sum_t c_jt X_jt with
  c_jt = throughput_jt x K_j / (weight_j x throughput_j under an equal split of the
  cluster), sum_t X_jt <= 1, sum_j K_j X_jt <= count_t (HiGHS here; Gavel: ECOS).
* Placement: a job keeps last round's GPUs when they are of the same type and free (Gavel's
  lease extension: no setup in our engine), else the lowest-numbered free GPUs of the type.
  Gavel's simulator charges nothing for a move; our engine charges the instance's setup.
* When a round starts nothing while every job has arrived, Gavel forces a recomputation
  (``_last_reset_time = 0``); so does this.

The type order rounds fill is Gavel's fixed ``v100, p100, k80`` generalised: fastest
type first (mean, over the jobs that can use it, of its throughput relative to the job's
best type).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

from hare_opt.model import Instance
from hare_opt.sim.engine.state import RoundState
from hare_opt.sim.semantics import lease_units

if TYPE_CHECKING:
    from hare_opt.sim.engine.reference import Simulator

#: Gavel's public repository and the commit its defaults were read at.
GAVEL_SOURCE = "stanford-futuredata/gavel@c4fa40097339e9608ab71fd64c8bdea96a5e4a4c"
#: ``time_per_iteration`` (scheduler.py and its simulator drivers): one round, seconds.
GAVEL_ROUND_S = 360.0
#: ``minimum_time_between_allocation_resets`` (scheduler.py), seconds.
GAVEL_RESET_S = 1920.0


def round_state(sim: Simulator) -> RoundState:
    """The reference loop's ``RoundState`` (the compiled core fills its own)."""
    idle = np.maximum(sim.state.free, sim.hold) <= sim.now
    return RoundState(sim.now, sim.arrived, sim.finished, sim.state.barrier, idle)


def throughputs(inst: Instance) -> np.ndarray:
    """(N, T) rounds per time unit of each job on each type (0 where it cannot run): one
    over the round's span, task plus sync, Gavel's steps/s up to a factor per job."""
    span = (inst.proc_by_type + inst.sync_by_type).astype(float)
    return np.where(inst.eligible_by_type, 1.0 / np.maximum(span, 1.0), 0.0)


def type_order(thr: np.ndarray) -> np.ndarray:
    """Types fastest first: mean over the jobs that can use a type of its throughput
    relative to the job's best (ties: type index)."""
    best = thr.max(axis=1, keepdims=True)
    rel = np.where(thr > 0, thr / np.where(best > 0, best, 1.0), 0.0)
    users = (thr > 0).sum(axis=0)
    score = rel.sum(axis=0) / np.maximum(users, 1)
    return np.lexsort((np.arange(thr.shape[1]), -score))


def fifo_perf_allocation(inst: Instance, jobs: list[int], thr: np.ndarray) -> np.ndarray:
    """(len(jobs), T) Gavel's ``fifo_perf``: 1 on the type each job gets, in job order,
    on its fastest type among those with K GPUs not yet allocated (type names in
    alphabetical order break ties); the first job no type fits blocks the rest."""
    t_all = sorted(range(len(inst.gpu_types)), key=lambda t: inst.gpu_types[t])
    avail = inst.type_count.astype(np.int64).copy()
    open_types = [t for t in t_all if avail[t] > 0]
    x = np.zeros((len(jobs), len(inst.gpu_types)))
    for i, j in enumerate(jobs):
        k = int(inst.tasks_per_round[j])
        cand = [t for t in open_types if avail[t] >= k]
        if not cand:
            break
        best = cand[0]
        for t in cand[1:]:
            if thr[j, t] > thr[j, best]:
                best = t
        if thr[j, best] > 0:
            x[i, best] = 1.0
            avail[best] -= k
            if avail[best] == 0:
                open_types.remove(best)
    return x


def max_min_allocation(inst: Instance, jobs: list[int], thr: np.ndarray) -> np.ndarray:
    """(len(jobs), T) Gavel's ``max_min_fairness_perf`` LP (if it fails, an even split over
    the types a job can use). Variables X (row-major by job), then z; per job
    ``z - sum_t c X <= 0`` and ``sum_t X <= 1``; per type ``sum_j K_j X <= count``.

    Its optimum is seldom unique (only the bottleneck jobs are pinned), and which optimal
    point a solver returns moves JCTs by several percent. Gavel solves it with ECOS, an
    interior-point method, whose answer lies inside the optimal face; so this one runs
    HiGHS's interior-point solver without crossover (a simplex vertex gave an average
    JCT 5.5% off Gavel's on one of the committed traces, the interior point 0.8%)."""
    from hare_opt.util.highs import new_highs, run

    n, nt = len(jobs), len(inst.gpu_types)
    th = thr[jobs]
    k = inst.tasks_per_round[jobs].astype(float)
    count = inst.type_count.astype(float)
    equal = th @ count / count.sum()  # throughput under Gavel's proportional split
    c = th * k[:, None] / (inst.weight[jobs][:, None] * np.maximum(equal, 1e-300)[:, None])
    nv, nr = n * nt + 1, 2 * n + nt
    i, tt = np.repeat(np.arange(n), nt), np.tile(np.arange(nt), n)
    rows = np.concatenate([2 * i, 2 * i + 1, 2 * n + tt, 2 * np.arange(n)])
    cols = np.concatenate([np.arange(n * nt)] * 3 + [np.full(n, n * nt)])
    vals = np.concatenate([-c.ravel(), np.ones(n * nt), np.repeat(k, nt), np.ones(n)])
    a = sparse.csr_array((vals, (rows, cols)), shape=(nr, nv))
    b = np.zeros(nr)
    b[1 : 2 * n : 2] = 1.0
    b[2 * n :] = count
    h = new_highs()
    h.setOptionValue("solver", "ipm")
    h.setOptionValue("run_crossover", "off")
    upper = np.append(np.where(th > 0, 1.0, 0.0).ravel(), np.inf)
    h.addVars(nv, np.zeros(nv), upper)
    h.changeColsCost(1, np.array([nv - 1], dtype=np.int32), np.array([-1.0]))
    h.addRows(
        nr,
        np.full(nr, -np.inf),
        b,
        a.nnz,
        a.indptr[:-1].astype(np.int32),
        a.indices.astype(np.int32),
        a.data,
    )
    run(h)
    import highspy

    if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
        x = np.asarray(h.getSolution().col_value)[:-1]
        return np.clip(x.reshape(n, nt), 0.0, 1.0)
    usable = th > 0
    return usable / np.maximum(usable.sum(axis=1, keepdims=True), 1)


Allocator = Callable[[Instance, list[int], np.ndarray], np.ndarray]


class GavelRounds:
    """The state of Gavel's round mechanism over one run and its decision at a round
    start (every GPU idle). ``fifo``: Gavel's FIFO rule that a round runs only jobs with
    a positive priority."""

    def __init__(
        self,
        inst: Instance,
        fits: np.ndarray,
        allocate: Allocator,
        *,
        fifo: bool,
        lease: int,
        reset: int,
    ):
        n, nt = inst.num_jobs, len(inst.gpu_types)
        self.inst, self.fits, self.allocate, self.fifo = inst, fits, allocate, fifo
        self.thr = throughputs(inst)
        self.order = type_order(self.thr)
        self.reset_gap = reset
        self.pad = lease / 2.0  # Gavel's initial time received: half a round
        self.gpus_of_type = [np.flatnonzero(inst.gpu_type_index == t) for t in range(nt)]
        self.received = np.zeros((n, nt))  # Gavel's _job_time_so_far
        self.total = np.zeros(nt)  # Gavel's _worker_time_so_far
        self.deficit = np.zeros((n, nt))
        self.alloc = np.zeros((n, nt))
        self.in_alloc = np.zeros(n, dtype=bool)
        self.known = np.zeros(n, dtype=bool)  # added to the mechanism (arrived by a round)
        self.active = np.zeros(n, dtype=bool)
        self.last_reset = 0
        self.need_update = False
        self.round_end: int | None = None  # end of the last round that ran jobs
        self.running: list[tuple[int, int]] = []  # (job, type) of the current round
        self.assigned: dict[int, np.ndarray] = {}  # last round's GPUs of each job
        self.stats = {"rounds": 0, "allocations": 0, "extensions": 0, "forced": 0}

    def decide(self, st: RoundState) -> list[tuple[int, np.ndarray]]:
        """The gangs to start now, each ``(job, gpus)``; call only when every GPU is idle."""
        self._close_round(st)
        new = np.flatnonzero(st.arrived & ~self.known)
        if len(new):
            self.known[new] = True
            self.active[new] = True
            self.received[new] = self.pad
            self.deficit[new] = 0.0
            self.need_update = True
        if not self.active.any():
            return []
        starts = self._schedule(st)
        if not starts and st.arrived.all():
            self.last_reset = 0  # Gavel: nothing runs and nothing will arrive
            self.stats["forced"] += 1
            starts = self._schedule(st)
        self.running = [(j, int(self.inst.gpu_type_index[g[0]])) for j, g in starts]
        if starts:
            self.stats["rounds"] += 1
        return starts

    def _close_round(self, st: RoundState) -> None:
        if not self.running:
            return
        start = self.round_end if self.round_end is not None else 0
        ends = [int(st.barrier[j]) for j, _ in self.running]
        for (j, t), end in zip(self.running, ends):
            self.received[j, t] += end - start
            self.total[t] += end - start
        self.round_end = max(ends)
        done = [j for j, _ in self.running if st.finished[j]]
        if done:
            self.active[done] = False
            self.need_update = True
        self.running = []

    def _reset(self, now: int) -> None:
        """Gavel's ``_reset_time_run_so_far`` and a new allocation of the active jobs."""
        act = self.active
        elapsed = now - self.last_reset
        should = np.where(self.in_alloc[:, None], self.alloc * elapsed, 0.0)
        self.deficit[act] += should[act] - (self.received[act] - self.pad)
        self.received[act] = self.pad
        self.total[:] = self.pad * act.sum()
        self.last_reset = now
        jobs = np.flatnonzero(act).tolist()
        self.alloc[:] = 0.0
        self.alloc[jobs] = self.allocate(self.inst, jobs, self.thr)
        self.in_alloc[:] = act
        self.need_update = False
        self.stats["allocations"] += 1

    def _priorities(self) -> np.ndarray:
        frac = np.divide(
            self.received, self.total, out=np.zeros_like(self.received), where=self.total > 0
        )
        a = self.alloc
        with np.errstate(divide="ignore", invalid="ignore"):
            prio = np.where(frac > 0, a / np.where(frac > 0, frac, 1.0), a * 1e9)
        prio = np.where((a > 0) & (self.thr > 0), prio, 0.0)
        return np.where(self.in_alloc[:, None], prio, 0.0)

    def _schedule(self, st: RoundState) -> list[tuple[int, np.ndarray]]:
        now = st.now
        if self.need_update and (now - self.last_reset >= self.reset_gap or self.last_reset == 0):
            self._reset(now)
        prio = self._priorities()
        k = self.inst.tasks_per_round
        left = self.inst.type_count.astype(np.int64).copy()
        taken = np.zeros(self.inst.num_jobs, dtype=bool)
        chosen: dict[int, list[int]] = {int(t): [] for t in self.order}
        jobs = np.flatnonzero(self.active)
        for t in self.order.tolist():
            alloc = np.where(self.in_alloc[jobs], self.alloc[jobs, t], 0.0)
            # descending (priority, deficit, allocation); ties keep job order (stable)
            rank = np.lexsort((jobs, -alloc, -self.deficit[jobs, t], -prio[jobs, t]))
            for j in jobs[rank].tolist():
                if left[t] == 0:
                    break
                if (
                    taken[j]
                    or not self.fits[j, t]
                    or (self.fifo and prio[j, t] <= 0)
                    or k[j] > left[t]
                ):
                    continue
                left[t] -= k[j]
                taken[j] = True
                chosen[t].append(j)
        return self._place(chosen, st)

    def _place(self, chosen: dict[int, list[int]], st: RoundState) -> list[tuple[int, np.ndarray]]:
        """GPUs for the chosen jobs, type by type, widest jobs first: last round's GPUs
        when free, else the lowest-numbered free ones."""
        k = self.inst.tasks_per_round
        gtype = self.inst.gpu_type_index
        out: list[tuple[int, np.ndarray]] = []
        assigned: dict[int, np.ndarray] = {}
        for t in self.order.tolist():
            used = ~st.idle.copy()
            jobs = sorted(chosen[t], key=lambda j: -k[j])  # stable: priority order kept
            for width in sorted({int(k[j]) for j in jobs}, reverse=True):
                group = [j for j in jobs if k[j] == width]
                for j in group:
                    prev = self.assigned.get(j)
                    if prev is not None and gtype[prev[0]] == t and not used[prev].any():
                        assigned[j] = prev
                        used[prev] = True
                        self.stats["extensions"] += 1
                for j in group:
                    if j in assigned or not self.in_alloc[j]:
                        continue  # Gavel gives a job without an allocation no GPUs
                    gpus = self.gpus_of_type[t]
                    free = gpus[~used[gpus]][:width]
                    assigned[j] = free
                    used[free] = True
            out.extend((j, assigned[j]) for j in jobs if j in assigned)
        self.assigned = assigned
        return out


def gavel_rounds(sim: Simulator, policy: Any, allocate: Allocator, *, fifo: bool) -> GavelRounds:
    """The mechanism for ``policy`` (its ``fits``, ``lease`` and ``realloc``) on ``sim``."""
    inst = sim.inst
    lease = (
        lease_units(policy.lease if policy.lease is not None else GAVEL_ROUND_S, inst, policy.name)
        or 1
    )
    seconds = policy.realloc if policy.realloc is not None else GAVEL_RESET_S
    reset = int(lease_units(seconds, inst, policy.name) or 0) if seconds > 0 else 0
    return GavelRounds(inst, policy.fits, allocate, fifo=fifo, lease=lease, reset=reset)
