"""``gavel-las``: Gavel's heterogeneity-aware max-min fairness (LAS) policy, round-based.

Source: Narayanan et al., "Heterogeneity-Aware Cluster Scheduling Policies for
Deep Learning Workloads", OSDI '20. An LP gives each active job j a time
fraction X[j, t] on each GPU type t, maximising min_j (throughput_j(X) /
best throughput_j) / w_j, with sum_t X[j, t] <= 1 and sum_j K_j X[j, t] <= count_t.
Gavel's round-based mechanism then runs the (job, type) pairs with the highest
priority X[j, t] / (fraction of time j has received on t so far).
Simplified: throughput on a type is one round per (task time + sync time) on K
GPUs of that type; the LP is re-solved when the set of active jobs changes; a
"round" of Gavel is a decision at each arrival and round end (no fixed length);
gang, all K tasks of a round on one type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import linprog

from hare_opt.sim.events import Events
from hare_opt.sim.policies.gang import GangPolicy, single_type_fits

if TYPE_CHECKING:
    from hare_opt.sim.simulator import Simulator


class GavelLASPolicy(GangPolicy):
    name = "gavel-las"

    def reset(self, sim: Simulator) -> None:
        inst = sim.inst
        self.fits = single_type_fits(sim, self.name)
        span = (inst.proc_by_type + inst.sync_by_type).astype(float)
        self.thr = np.where(self.fits, 1.0 / np.maximum(span, 1), 0.0)
        self.received = np.zeros_like(self.thr)  # time spent on each type
        self.alloc: dict[int, np.ndarray] = {}
        self.waiting: set[int] = set()

    def _solve_lp(self, sim: Simulator) -> None:
        inst = sim.inst
        jobs = sorted(sim.active)
        n, t = len(jobs), len(inst.gpu_types)
        if not n:
            self.alloc = {}
            return
        thr = self.thr[jobs]
        norm = thr / thr.max(axis=1, keepdims=True) / inst.weight[jobs][:, None]
        nv = n * t + 1                        # X (row-major by job), then z
        c = np.zeros(nv)
        c[-1] = -1.0                          # maximise z
        a, b = [], []
        for i in range(n):                    # z <= sum_t norm X
            row = np.zeros(nv)
            row[i * t:(i + 1) * t] = -norm[i]
            row[-1] = 1.0
            a.append(row)
            b.append(0.0)
            row = np.zeros(nv)                # sum_t X <= 1
            row[i * t:(i + 1) * t] = 1.0
            a.append(row)
            b.append(1.0)
        k = inst.tasks_per_round[jobs].astype(float)
        for tt in range(t):                   # capacity of each type
            row = np.zeros(nv)
            row[tt:n * t:t] = k
            a.append(row)
            b.append(float(inst.type_count[tt]))
        bounds = [(0.0, 1.0 if self.fits[j, tt] else 0.0) for j in jobs for tt in range(t)]
        res = linprog(c, A_ub=np.array(a), b_ub=np.array(b), bounds=bounds + [(0, None)],
                      method="highs")
        x = res.x[:-1].reshape(n, t) if res.status == 0 else self.fits[jobs] / t
        self.alloc = {j: x[i] for i, j in enumerate(jobs)}

    def decide(self, sim: Simulator, events: Events) -> None:
        self.waiting.update(events.arrived)
        self.waiting.update(events.opened)
        if events.arrived or events.finished:
            self._solve_lp(sim)
        if not self.waiting:
            return
        inst = sim.inst
        idle = sim.idle_gpus()
        if not len(idle):
            return
        pairs = []
        for j in self.waiting:
            age = max(1, sim.now - int(inst.release[j]))
            for t in np.flatnonzero(self.fits[j]).tolist():
                share = self.received[j, t] / age
                prio = self.alloc[j][t] / max(share, 1e-9)
                pairs.append((-prio, int(inst.release[j]), j, t))
        pairs.sort()
        free = self.idle_by_type(sim)
        for _, _, j, tt in pairs:
            if self.start_on_type(sim, j, tt, free):
                self.received[j, tt] += float(inst.proc_by_type[j, tt] + inst.sync_by_type[j, tt])
