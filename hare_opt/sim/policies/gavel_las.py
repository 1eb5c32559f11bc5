"""``gavel-las``: Gavel's heterogeneity-aware max-min fairness (LAS) policy.

Source: Narayanan et al., "Heterogeneity-Aware Cluster Scheduling Policies for
Deep Learning Workloads", OSDI '20. Under leases (the default) it runs as Gavel's
simulator runs ``max_min_fairness_perf`` (``hare_opt.sim.policies.gavel``: its LP, its
360 s rounds, priorities, deficits and 1920 s between allocations).

``per-round`` keeps the older reading, the sensitivity case: an LP maximising min_j
(throughput_j(X) / best throughput_j) / w_j, re-solved at every change of the active
jobs (``realloc`` seconds apart at least), and at every round end the (job, type) pairs
by priority X[j, t] / (share of time received on t since arrival), one type per round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from hare_opt.model import Instance
from hare_opt.sim.engine.state import GangKernel
from hare_opt.sim.events import Events
from hare_opt.sim.policies.gang import (
    GangOptions,
    GangPolicy,
    GavelOptions,
    gavel_decide,
    single_type_fits,
)
from hare_opt.sim.policies.gavel import (
    GavelRounds,
    gavel_rounds,
    max_min_allocation,
)
from hare_opt.sim.semantics import lease_units

if TYPE_CHECKING:
    from hare_opt.sim.engine.reference import Simulator


def las_allocation(
    inst: Instance, jobs: list[int], thr: np.ndarray, fits: np.ndarray
) -> np.ndarray:
    """(len(jobs), T) time fractions X of the max-min fairness LP over ``jobs`` (HiGHS);
    if the LP fails, an even split over the types each job fits.

    Variables X (row-major by job), then z; rows per job i: ``z - sum_t norm X <= 0``
    and ``sum_t X <= 1``; then one capacity row per type: ``sum_j K_j X[j, t] <= count``.
    Built sparse (each X[j, t] is in 3 rows, z in n)."""
    n, t = len(jobs), len(inst.gpu_types)
    th = thr[jobs]
    norm = th / th.max(axis=1, keepdims=True) / inst.weight[jobs][:, None]
    nv, nr = n * t + 1, 2 * n + t
    i, tt = np.repeat(np.arange(n), t), np.tile(np.arange(t), n)
    rows = np.concatenate([2 * i, 2 * i + 1, 2 * n + tt, 2 * np.arange(n)])
    cols = np.concatenate([np.arange(n * t)] * 3 + [np.full(n, n * t)])
    vals = np.concatenate(
        [
            -norm.ravel(),
            np.ones(n * t),
            np.repeat(inst.tasks_per_round[jobs].astype(float), t),
            np.ones(n),
        ]
    )
    a = sparse.csc_array((vals, (rows, cols)), shape=(nr, nv))
    b = np.zeros(nr)
    b[1 : 2 * n : 2] = 1.0
    b[2 * n :] = inst.type_count
    c = np.zeros(nv)
    c[-1] = -1.0  # maximise z
    upper = np.append(np.where(fits[jobs], 1.0, 0.0).ravel(), np.inf)
    res = linprog(c, A_ub=a, b_ub=b, bounds=np.column_stack([np.zeros(nv), upper]), method="highs")
    return res.x[:-1].reshape(n, t) if res.status == 0 else fits[jobs] / t


class GavelLASPolicy(GangPolicy):
    name = "gavel-las"
    lease_fits = True  # Gavel's round runs the steps that end within it
    Options: ClassVar[type[GangOptions]] = GavelOptions

    def __init__(self, **options):
        super().__init__(**options)
        self.realloc = self.options.realloc

    def stats(self) -> dict[str, Any]:
        rounds = getattr(self, "rounds", None)
        return dict(rounds.stats) if rounds is not None else {}

    def kernel_state(self, sim: Simulator) -> GangKernel | None:
        """``engine/kernel.py`` transcribes this class's rules (a subclass: none); the
        round decision (leases) or the LP is called back, as ``decide`` calls it."""
        if type(self) is not GavelLASPolicy:
            return None
        if self.rounds is not None:
            return GangKernel("gavel-las", fits=self.fits, rounds=self.rounds.decide)
        inst, thr, fits = sim.inst, self.thr, self.fits
        return GangKernel(
            "gavel-las",
            fits=fits,
            realloc=self.gap,
            allocation=lambda active: las_allocation(inst, active, thr, fits),
        )

    def reset(self, sim: Simulator) -> None:
        inst = sim.inst
        self.rounds: GavelRounds | None = None
        self.fits = single_type_fits(sim, self.name)
        if sim.leases:
            self.rounds = gavel_rounds(sim, self, max_min_allocation, fifo=False)
            return
        seconds = self.realloc if self.realloc is not None else 0.0
        #: least time units between two LP solves
        self.gap = 0 if seconds == 0 else int(lease_units(seconds, inst, self.name) or 0)
        self.solved_at: int | None = None
        span = (inst.proc_by_type + inst.sync_by_type).astype(float)
        self.thr = np.where(self.fits, 1.0 / np.maximum(span, 1), 0.0)
        self.received = np.zeros_like(self.thr)  # time spent on each type
        self.alloc: dict[int, np.ndarray] = {}
        self.stale = False  # the active jobs changed since the last LP
        self.waiting: set[int] = set()

    def _solve_lp(self, sim: Simulator) -> None:
        jobs = sorted(sim.active)
        self.alloc = {}
        if jobs:
            x = las_allocation(sim.inst, jobs, self.thr, self.fits)
            self.alloc = {j: x[i] for i, j in enumerate(jobs)}

    def decide(self, sim: Simulator, events: Events) -> None:
        if self.rounds is not None:
            return gavel_decide(sim, self.rounds)
        self.waiting.update(events.arrived)
        self.waiting.update(events.opened)
        # The LP depends on the active jobs only, which change at arrivals and
        # completions: solved when a decision first needs it, it is the LP of then.
        self.stale |= bool(events.arrived or events.finished)
        if not self.waiting:
            return
        inst = sim.inst
        idle = sim.idle_gpus()
        if not len(idle):
            return
        if self.stale and (self.solved_at is None or sim.now - self.solved_at >= self.gap):
            self._solve_lp(sim)
            self.stale, self.solved_at = False, sim.now
        pairs = []
        for j in self.waiting:
            age = max(1, sim.now - int(inst.release[j]))
            for t in np.flatnonzero(self.fits[j]).tolist():
                share = self.received[j, t] / age
                x = self.alloc[j][t] if j in self.alloc else 0.0  # no share yet
                prio = x / max(share, 1e-9)
                pairs.append((-prio, int(inst.release[j]), j, t))
        pairs.sort()
        free = self.idle_by_type(sim)
        for _, _, j, tt in pairs:
            rounds = self.start_on_type(sim, j, tt, free)
            if rounds:  # time received on the type: every round of the lease
                self.received[j, tt] += float(
                    rounds * int(inst.proc_by_type[j, tt] + inst.sync_by_type[j, tt])
                )
