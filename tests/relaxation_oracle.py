"""An independent oracle for the relaxation: the former pairwise MILP (tests only).

Hare_Sched_RL with y binary has the per-GPU inequality
sum_i p_i (y_i x_i) >= sum_{i<k} p_i p_k (y_i y_k); this model linearises both
products, w ~ y x (w <= x, w <= U y) and one z ~ y_i y_k per pair of tasks
that may share a GPU (z >= y_i + y_k - 1, z >= 0). It is O(T^2 M), so only for
small instances; the package's compact model must reach the same optimum.
Written apart from ``hare_opt.heuristics.relaxation`` on purpose: it shares no
model-building code with it.
"""

from __future__ import annotations

import numpy as np

from hare_opt.heuristics.rules import solve_eft
from hare_opt.model import Instance


def pairwise_optimum(inst: Instance, time_limit: float = 60.0) -> tuple[float, bool]:
    """Objective of the pairwise MILP and whether HiGHS proved it optimal."""
    import highspy

    d = np.where(inst.eligible, inst.proc + inst.sync, np.inf)
    dmin = d.min(axis=1)
    w = inst.weight.astype(float)
    upper = float(solve_eft(inst.without_setups()).objective)
    lb_c = inst.release + inst.rounds * dmin
    horizon = (upper - (w * lb_c).sum() + w * lb_c) / w
    tasks = [
        (n, r)
        for n, job in enumerate(inst.jobs)
        for r in range(job.rounds)
        for _ in range(job.tasks_per_round)
    ]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("time_limit", time_limit)
    inf = highspy.kHighsInf

    def var(lo: float, hi: float, cost: float = 0.0, integer: bool = False) -> int:
        h.addVar(lo, hi)
        j = h.getNumCol() - 1
        if cost:
            h.changeColCost(j, cost)
        if integer:
            h.changeColIntegrality(j, highspy.HighsVarType.kInteger)
        return j

    def row(terms: dict[int, float], lo: float = -inf, hi: float = inf) -> None:
        h.addRow(
            lo,
            hi,
            len(terms),
            np.array(list(terms), dtype=np.int32),
            np.array(list(terms.values()), dtype=float),
        )

    x, y, wc = [], {}, {}
    for i, (n, r) in enumerate(tasks):
        cap = horizon[n] - (inst.rounds[n] - r) * dmin[n]
        x.append(var(float(inst.release[n]), max(cap, float(inst.release[n]))))
        for m in np.flatnonzero(inst.eligible[n]).tolist():
            y[i, m] = var(0, 1, integer=True)
            wc[i, m] = var(0, cap)
            row({wc[i, m]: 1.0, x[i]: -1.0}, hi=0.0)
            row({wc[i, m]: 1.0, y[i, m]: -cap}, hi=0.0)
        row({y[i, m]: 1.0 for m in np.flatnonzero(inst.eligible[n]).tolist()}, 1.0, 1.0)
    first = 0
    for n, job in enumerate(inst.jobs):
        k = job.tasks_per_round
        for r in range(job.rounds):
            last = r == job.rounds - 1
            b = var(0.0, inf, cost=float(w[n]) if last else 0.0)
            for i in range(first + r * k, first + (r + 1) * k):
                terms = {b: 1.0, x[i]: -1.0}
                terms.update({y[i, m]: -float(d[n, m]) for m in np.flatnonzero(inst.eligible[n])})
                row(terms, lo=0.0)
                if not last:
                    row({x[i + k]: 1.0, b: -1.0}, lo=0.0)
        first += job.num_tasks
    for m in range(inst.num_gpus):
        on = [i for i in range(len(tasks)) if (i, m) in y]
        terms = {wc[i, m]: float(inst.proc[tasks[i][0], m]) for i in on}
        for a, i in enumerate(on):
            for k in on[a + 1 :]:
                z = var(0, 1)
                row({z: 1.0, y[i, m]: -1.0, y[k, m]: -1.0}, lo=-1.0)
                terms[z] = -float(inst.proc[tasks[i][0], m] * inst.proc[tasks[k][0], m])
        row(terms, lo=0.0)
    h.run()
    optimal = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return float(h.getInfo().objective_function_value), optimal
