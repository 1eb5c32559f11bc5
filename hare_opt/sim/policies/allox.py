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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import linear_sum_assignment

from hare_opt.sim.events import Events
from hare_opt.sim.policies.gang import GangPolicy, single_type_fits

if TYPE_CHECKING:
    from hare_opt.sim.simulator import Simulator

BIG = 1e18


class AlloXPolicy(GangPolicy):
    name = "allox"

    def __init__(self, *, max_jobs: int = 256):
        self.max_jobs = max_jobs

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
        idle_by_type = np.bincount(inst.gpu_type_index[idle], minlength=len(inst.gpu_types))
        if not idle_by_type.any():
            return
        jobs = sorted(self.waiting, key=lambda j: (int(inst.release[j]), j))[:self.max_jobs]
        n, t = len(jobs), len(inst.gpu_types)
        rem = np.array([sim.remaining_rounds(j) for j in jobs], dtype=float)
        cost_type = np.where(self.fits[jobs], rem[:, None] * self.span[jobs], BIG)
        width = max(1, int(np.median(inst.tasks_per_round[jobs])))
        lanes = np.maximum(1, inst.type_count // width)
        k = np.arange(1, n + 1)
        pos = np.ceil(k[None, :] / lanes[:, None])             # (T, n) slot multiplier
        cost = (cost_type[:, :, None] * pos[None, :, :]).reshape(n, t * n)
        rows, cols = linear_sum_assignment(cost)
        typ, slot = np.divmod(cols, n)
        # On each type, the job in the highest slot (k-th from last) runs first.
        order = np.lexsort((-slot, typ))
        free = self.idle_by_type(sim)
        for i in order:
            if cost[rows[i], cols[i]] < BIG:
                self.start_on_type(sim, jobs[rows[i]], int(typ[i]), free)
