"""``allox``: AlloX-style min-cost matching of jobs to GPU types, gang.

Source: Le et al., "AlloX: Compute Allocation in Hybrid Clusters", EuroSys '20:
jobs are matched to (resource, position) slots by min-cost bipartite matching
with cost = position x processing time (the classical R||sum C_j reduction of
Horn and Bruno et al.), minimising the average completion time. The Hare paper's
Sched_Allox: heterogeneity-aware, no intra-job parallelism across types.
Simplified: a GPU type with c GPUs is one resource with ``c // K`` parallel
lanes (K: the waiting jobs' median width), so the k-th-from-last slot costs
ceil(k / lanes) x the job's remaining time on that type; the matching is
re-solved at every decision point with scipy.optimize.linear_sum_assignment;
each round runs all K tasks on one GPU type (gang); unweighted, as AlloX.
Leases: whole jobs by default (AlloX places a job on a resource until it
completes; its matching decides the order, not preemptions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from scipy.optimize import linear_sum_assignment

from hare_opt.model import Instance
from hare_opt.model.options import option
from hare_opt.sim.engine.state import GangKernel
from hare_opt.sim.events import Events
from hare_opt.sim.policies.gang import GangOptions, GangPolicy, single_type_fits

if TYPE_CHECKING:
    from hare_opt.sim.engine.reference import Simulator

BIG = 1e18


@dataclass(frozen=True)
class AlloXOptions(GangOptions):
    lease: float | None = option(
        None,
        lo=1e-3,
        doc="seconds a job holds its GPUs under "
        "the lease semantics; null (default): until it completes",
    )
    max_jobs: int = option(256, lo=1, doc="waiting jobs matched per decision (oldest first)")


def allox_pairs(
    inst: Instance,
    waiting: np.ndarray,
    remaining: np.ndarray,
    fits: np.ndarray,
    span: np.ndarray,
    max_jobs: int,
) -> list[tuple[int, int]]:
    """The (job, GPU type) starts to try, in order: the min-cost matching of the oldest
    ``max_jobs`` waiting jobs (``waiting``, ascending) to (type, position) slots; on each
    type the job in the highest slot first. ``remaining``: remaining rounds per job."""
    jobs = waiting[np.lexsort((waiting, inst.release[waiting]))][:max_jobs]
    n, t = len(jobs), len(inst.gpu_types)
    rem = remaining[jobs].astype(float)
    cost_type = np.where(fits[jobs], rem[:, None] * span[jobs], BIG)
    width = max(1, int(np.median(inst.tasks_per_round[jobs])))
    lanes = np.maximum(1, inst.type_count // width)
    k = np.arange(1, n + 1)
    pos = np.ceil(k[None, :] / lanes[:, None])  # (T, n) slot multiplier
    cost = (cost_type[:, :, None] * pos[None, :, :]).reshape(n, t * n)
    rows, cols = linear_sum_assignment(cost)
    typ, slot = np.divmod(cols, n)
    order = np.lexsort((-slot, typ))
    return [(int(jobs[rows[i]]), int(typ[i])) for i in order if cost[rows[i], cols[i]] < BIG]


class AlloXPolicy(GangPolicy):
    name = "allox"
    Options: ClassVar[type[GangOptions]] = AlloXOptions

    def __init__(self, **options):
        super().__init__(**options)
        self.max_jobs = self.options.max_jobs

    def reset(self, sim: Simulator) -> None:
        inst = sim.inst
        # A round on one type: the job must fit in that type's GPUs.
        self.fits = single_type_fits(sim, self.name)
        self.span = inst.proc_by_type + inst.sync_by_type  # a gang round on one type
        self.waiting: set[int] = set()

    def decide(self, sim: Simulator, events: Events) -> None:
        self.waiting.update(events.arrived)
        self.waiting.update(events.opened)
        if not self.waiting:
            return
        inst = sim.inst
        idle = sim.idle_gpus()
        if not len(idle):
            return
        waiting = np.array(sorted(self.waiting), dtype=np.int64)
        pairs = allox_pairs(
            inst, waiting, inst.rounds - sim.state.round, self.fits, self.span, self.max_jobs
        )
        free = self.idle_by_type(sim)
        for job, gpu_type in pairs:
            self.start_on_type(sim, job, gpu_type, free)

    def kernel_state(self, sim: Simulator) -> GangKernel | None:
        """``engine/kernel.py`` transcribes this class's rules (a subclass: none); the
        assignment is called back, as ``decide`` calls it."""
        if type(self) is not AlloXPolicy:
            return None
        inst, fits, span, most = sim.inst, self.fits, self.span, self.max_jobs
        return GangKernel(
            "allox",
            fits=fits,
            pairs=lambda waiting, remaining: allox_pairs(
                inst, waiting, remaining, fits, span, most
            ),
        )
