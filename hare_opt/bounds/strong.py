"""``strong_bound``: a time-bucketed LP over GPU types that sees jobs compete for GPUs.

Why: on paper-size instances the best bound was each job's critical path (the job alone
on the idle cluster): it ignores that two jobs running at the same time cannot both
use all eight V100s. Here time is cut into buckets [t_l, t_l+1) and, per job j, GPU
type k and bucket l, y_jkl is the GPU time of type k that j uses in the bucket:

* capacity: sum_j y_jkl <= m_k (t_l+1 - t_l);
* a job runs at most K_j tasks at once (one round at a time) and at most m_k on type
  k: sum_k y_jkl <= K_j len_l, y_jkl <= min(K_j, m_k) len_l, and nothing before
  r_j + o_j (every task of j starts after a setup that begins at r_j or later);
* X_jl, the share of job j complete by t_l+1, is non-decreasing, 0 while t_l+1 is
  below j's critical path, 1 at the end; the work done by t_l+1, W_jl = sum over
  l' <= l and k of y_jkl' / p_jk (tasks), is at least N_j X_jl;
* objective sum_j w_j sum_l (X_jl - X_j,l-1) max(t_l, cp_j).

Any schedule gives a solution (y its busy time per bucket, X the indicator of "done by
t_l+1"), with objective at most its own, so the LP optimum is a lower bound
(docs/formulations.md, "A bound that sees contention"). Size: jobs x types x buckets.
"""

from __future__ import annotations

import math

import numpy as np

from hare_opt.bounds.combinatorial import critical_path
from hare_opt.model import Instance


def strong_bound(inst: Instance, upper: int, *, buckets: int = 400,
                 time_limit: float | None = 60.0) -> float | None:
    """The LP's value (a float: round it with ``model.ceil_bound``), None if HiGHS gives no
    optimum in time. ``upper``: a proved upper bound on OPT (it caps every completion and
    so the horizon)."""
    from scipy.optimize import linprog  # SciPy loads only when a bound needs it
    from scipy.sparse import coo_matrix

    n, types = inst.num_jobs, len(inst.gpu_types)
    cp = critical_path(inst).astype(float)
    w = inst.weight.astype(float)
    late = (upper - (w @ cp - w * cp)) / w                  # C_j <= late_j in any optimum
    t0 = float(min(inst.release.min(), cp.min()))
    top = float(late.max())
    cuts = np.linspace(t0, top, buckets + 1)
    lo, hi = cuts[:-1], cuts[1:]
    length = hi - lo
    L = buckets
    ok = inst.eligible_by_type
    p = np.where(ok, inst.proc_by_type, 1).astype(float)
    tasks = (inst.rounds * inst.tasks_per_round).astype(float)
    begin = (inst.release + inst.overhead).astype(float)
    k_cap = np.minimum(inst.tasks_per_round[:, None], inst.type_count[None, :]).astype(float)

    # columns: y[j,k,l] (n*T*L), then X[j,l] (n*L), then W[j,l] (n*L: tasks done by t_l+1)
    ny = n * types * L
    def yc(j, k):  # noqa: E306 - column index of y[j, k, :]
        return (j * types + k) * L + np.arange(L)
    def xc(j):  # noqa: E306
        return ny + j * L + np.arange(L)
    def wc(j):  # noqa: E306
        return ny + n * L + j * L + np.arange(L)
    ncol = ny + 2 * n * L
    ub = np.zeros(ncol)
    for j in range(n):
        usable = np.clip(hi - np.maximum(lo, begin[j]), 0.0, None)
        usable[lo >= late[j]] = 0.0                         # nothing after the job's latest end
        for k in range(types):
            if ok[j, k]:
                ub[yc(j, k)] = k_cap[j, k] * usable
        ub[xc(j)] = np.where(hi >= cp[j], 1.0, 0.0)
        ub[xc(j)[-1]] = 1.0
        ub[wc(j)] = tasks[j]
    lb = np.zeros(ncol)
    for j in range(n):
        lb[xc(j)[-1]] = 1.0
        lb[xc(j)[hi >= late[j]]] = 1.0                      # done by its latest completion
    # objective: sum_l (X_l - X_l-1) c_l = sum_l X_l (c_l - c_l+1) + X_L c_L
    cost = np.zeros(ncol)
    for j in range(n):
        c = w[j] * np.maximum(lo, cp[j])
        cost[xc(j)[:-1]] = c[:-1] - c[1:]
        cost[xc(j)[-1]] = c[-1]

    rows, cols, vals, rhs = [], [], [], []
    r = 0
    for k in range(types):  # capacity per type and bucket
        for j in range(n):
            if ok[j, k]:
                rows.append(r + np.arange(L))
                cols.append(yc(j, k))
                vals.append(np.ones(L))
        rhs.append(inst.type_count[k] * length)
        r += L
    for j in range(n):  # one round at a time: at most K_j tasks of j run at once
        for k in range(types):
            if ok[j, k]:
                rows.append(r + np.arange(L))
                cols.append(yc(j, k))
                vals.append(np.ones(L))
        rhs.append(inst.tasks_per_round[j] * length)
        r += L
    for j in range(n):  # N_j X_jl - W_jl <= 0: done by t_l+1 means all work done by then
        rows += [r + np.arange(L), r + np.arange(L)]
        cols += [xc(j), wc(j)]
        vals += [np.full(L, tasks[j]), -np.ones(L)]
        rhs.append(np.zeros(L))
        r += L
    for j in range(n):  # X non-decreasing: X_l - X_l+1 <= 0
        rows += [r + np.arange(L - 1), r + np.arange(L - 1)]
        cols += [xc(j)[:-1], xc(j)[1:]]
        vals += [np.ones(L - 1), -np.ones(L - 1)]
        rhs.append(np.zeros(L - 1))
        r += L - 1
    a_ub = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(r, ncol)).tocsr()
    # W_jl - W_j,l-1 - sum_k y_jkl / p_jk = 0 (W_j,-1 = 0)
    rows, cols, vals = [], [], []
    for j in range(n):
        base = j * L
        rows += [base + np.arange(L), base + np.arange(1, L)]
        cols += [wc(j), wc(j)[:-1]]
        vals += [np.ones(L), -np.ones(L - 1)]
        for k in range(types):
            if ok[j, k]:
                rows.append(base + np.arange(L))
                cols.append(yc(j, k))
                vals.append(np.full(L, -1.0 / p[j, k]))
    a_eq = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n * L, ncol)).tocsr()
    options: dict[str, bool | float] = {"presolve": True}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = linprog(cost, A_ub=a_ub, b_ub=np.concatenate(rhs), A_eq=a_eq, b_eq=np.zeros(n * L),
                  bounds=np.column_stack([lb, ub]), method="highs", options=options)
    if res.status != 0 or not math.isfinite(res.fun):
        return None
    return float(res.fun)
