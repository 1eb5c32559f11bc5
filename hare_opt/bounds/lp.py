"""Interval-indexed LP bound over jobs and GPU types (polynomial size, solved by HiGHS).

In the spirit of Hall, Schulz, Shmoys and Wein (1997): time is cut at
geometric points b_0 < b_1 < ...; y[j,k,l] is the share of job j's tasks run on
GPU type k when j completes in (b_{l-1}, b_l]. Jobs released at or after rho and
completing by b_l do all their type-k work in [rho, b_l], at most m_k (b_l - rho)
(one cumulative chain of variables per release threshold rho); a job completing
in interval l has C_j > b_{l-1} and C_j >= its critical path. The optimum
schedule gives a feasible y, so the LP optimum is a lower bound. Type-k work of
job j is y (N_j p_jk + o_j): the setup is paid at least once on any type it uses.
Proof: docs/theory.md (b) (LB3).
"""

from __future__ import annotations

import math

import numpy as np

from hare_opt.bounds.combinatorial import critical_path
from hare_opt.model import Instance


def lp_bound(
    inst: Instance,
    upper: int,
    *,
    max_vars: int = 150_000,
    ratio: float = 1.02,
    time_limit: float | None = 60.0,
) -> float | None:
    """HiGHS's LP value, or None if it gives no optimum in time.

    HiGHS's optimum is exact only to its tolerances: turn it into an integer bound
    with ``model.ceil_bound`` (as ``lower_bound`` does), never with a plain ceiling.

    ``upper`` is any proved upper bound on OPT; it caps each job's completion
    at (upper - sum_{i != j} w_i cp_i) / w_j, which keeps the LP small.
    """
    from scipy.optimize import linprog  # SciPy loads only when a bound needs it
    from scipy.sparse import coo_matrix

    cp = critical_path(inst).astype(float)
    w = inst.weight.astype(float)
    horizon = (upper - (w @ cp - w * cp)) / w  # (N,) C_j <= horizon_j in OPT
    b0, top = float(cp.min()), float(horizon.max())
    pairs = int(inst.eligible_by_type.sum())
    steps = max(1.0, math.log(max(top / b0, 1.0 + 1e-9)))
    ratio = max(ratio, math.exp(steps * pairs / max_vars))  # coarser cuts for big instances
    n_int = int(math.ceil(math.log(max(top / b0, 1.0)) / math.log(ratio))) + 1
    cuts = b0 * ratio ** np.arange(n_int)
    cuts[-1] = max(cuts[-1], top)
    lower = np.concatenate(([-math.inf], cuts[:-1]))  # b_{l-1}

    jj, kk = np.nonzero(inst.eligible_by_type)
    rows_j, rows_l, rows_k, cost, work = [], [], [], [], []
    for j, k in zip(jj.tolist(), kk.tolist()):
        ls = np.flatnonzero((cuts >= cp[j]) & (lower < horizon[j]))
        if len(ls) == 0:  # cannot happen for a valid upper bound; keep the LP feasible
            ls = np.array([n_int - 1])
        rows_j.append(np.full(len(ls), j))
        rows_k.append(np.full(len(ls), k))
        rows_l.append(ls)
        cost.append(w[j] * np.maximum(cp[j], lower[ls]))
        a = int(inst.rounds[j] * inst.tasks_per_round[j]) * int(inst.proc_by_type[j, k])
        work.append(np.full(len(ls), float(a + int(inst.overhead[j]))))
    yj, yk, yl = (np.concatenate(x) for x in (rows_j, rows_k, rows_l))
    cost_y, work_y = np.concatenate(cost), np.concatenate(work)
    ny, n_types = len(yj), len(inst.gpu_types)
    nz = n_types * n_int  # per threshold q: z[q,k,l], type-k work by b_l
    rel = inst.release.astype(float)
    thresholds = np.unique(np.concatenate(([0.0], np.quantile(rel, np.linspace(0, 1, 9)))))

    # Equalities: sum_{k,l} y[j,k,l] = 1, and for each release threshold rho_q
    # z[q,k,l] - z[q,k,l-1] - sum_{j: r_j >= rho_q} a_jk y[j,k,l] = 0.
    n = inst.num_jobs
    rows, cols, vals = [yj], [np.arange(ny)], [np.ones(ny)]
    zk, zl = np.divmod(np.arange(nz), n_int)
    caps = []
    for q, rho_q in enumerate(thresholds.tolist()):
        base, zcol = n + q * nz, ny + q * nz
        late = rel[yj] >= rho_q
        rows += [base + (yk * n_int + yl)[late], base + np.arange(nz), base + np.arange(nz)[zl > 0]]
        cols += [np.arange(ny)[late], zcol + np.arange(nz), zcol + np.arange(nz)[zl > 0] - 1]
        vals += [-work_y[late], np.ones(nz), -np.ones(int((zl > 0).sum()))]
        # type k does at most m_k (b_l - rho_q) of work in [rho_q, b_l]
        caps.append(inst.type_count[zk] * np.maximum(cuts[zl] - rho_q, 0.0))
    nq = len(thresholds)
    a_eq = coo_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n + nq * nz, ny + nq * nz),
    ).tocsr()
    b_eq = np.concatenate([np.ones(n), np.zeros(nq * nz)])
    # a job completing by b_l did its type-k work in [r_j, b_l] on m_k GPUs
    y_cap = np.minimum(1.0, inst.type_count[yk] * np.maximum(cuts[yl] - rel[yj], 0.0) / work_y)
    bounds = np.column_stack([np.zeros(ny + nq * nz), np.concatenate([y_cap, *caps])])
    options: dict[str, bool | float] = {"presolve": True}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = linprog(
        np.concatenate([cost_y, np.zeros(nq * nz)]),
        A_eq=a_eq,
        b_eq=b_eq,
        bounds=bounds,
        method="highs",
        options=options,
    )
    if res.status != 0:
        return None
    return float(res.fun)
