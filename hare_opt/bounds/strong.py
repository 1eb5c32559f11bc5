"""``strong_bound``: a time-bucketed LP over GPU types that sees jobs compete for GPUs,
the round structure that makes mixing types slow, and the time a job's work takes.

Why: on paper-size instances the best bound was each job's critical path (the job alone
on the idle cluster): it ignores that two jobs running at the same time cannot both
use all eight V100s. Time is cut into buckets [t_l, t_l+1); per job j, GPU type k and
bucket l, y_jkl is the GPU time of type k that j uses in the bucket:

* capacity: sum_j y_jkl <= m_k (t_l+1 - t_l);
* a job runs at most K_j tasks at once (one round at a time) and at most m_k on type
  k, and nothing before r_j + o_j; it does all its tasks (work per type below);
* rounds: z_jp >= 0 rounds of j with type counts p (p_k tasks on type k, sum K_j),
  sum_p z_jp = R_j, the GPU time on type k is sum_p z_jp p_k t_jk, and every round
  lasts at least d_p = max over its types of ceil(p_k / m_k) t_jk + s_jk, so
  C_j >= r_j + o_j + sum_p z_jp d_p (a round mixing types lasts as long as its
  slowest part, which fluid work would not see);
* mean busy time: C_j >= (work-weighted mean of the bucket starts of j's tasks)
  + N_j / (2 rho_j) + min sync, rho_j the most tasks per time unit j can run (its
  K_j fastest GPUs at once);
* completion share: X_jl (the share of j complete by t_l+1) is non-decreasing, 0 while
  t_l+1 is below j's critical path, 1 from j's latest completion on, N_j X_jl <= work
  done by t_l+1, and C_j >= sum_l (X_jl - X_j,l-1) max(t_l, cp_j); and C_j >= cp_j;
* objective sum_j w_j C_j.

Any schedule scoring at most ``upper`` gives a solution with objective at most its own
(docs/theory.md (b), LB5), so the LP optimum is a lower bound. Size: jobs x (types x
buckets + patterns).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from hare_opt.bounds.combinatorial import critical_path
from hare_opt.model import Instance

#: A job with more type-count patterns than this gets no round rows (they stay valid).
MAX_PATTERNS = 5000


def round_patterns(inst: Instance, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Every way to split one round of job j over its eligible types: (P, T) task counts
    and (P,) the least time such a round lasts (its tasks on type k spread over the m_k
    GPUs, ceil(count / m_k) tasks back to back, then the sync). Empty if more than
    ``MAX_PATTERNS``."""
    types = np.flatnonzero(inst.eligible_by_type[j])
    k = int(inst.tasks_per_round[j])
    if math.comb(k + len(types) - 1, len(types) - 1) > MAX_PATTERNS:
        return np.zeros((0, len(inst.gpu_types)), np.int64), np.zeros(0, np.int64)
    rows: list[list[int]] = []

    def split(i: int, left: int, part: list[int]) -> None:
        if i == len(types) - 1:
            rows.append(part + [left])
            return
        for c in range(left + 1):
            split(i + 1, left - c, part + [c])

    split(0, k, [])
    counts = np.zeros((len(rows), len(inst.gpu_types)), np.int64)
    counts[:, types] = rows
    m, p, s = inst.type_count, inst.proc_by_type[j], inst.sync_by_type[j]
    last = np.where(counts > 0, -(-counts // m) * p + s, 0)
    return counts, last.max(axis=1)


def max_task_rate(inst: Instance) -> np.ndarray:
    """(N,) tasks per time unit job j can run at most: its K_j fastest eligible GPUs."""
    out = np.zeros(inst.num_jobs)
    for j in range(inst.num_jobs):
        rate = np.repeat(
            1.0 / inst.proc_by_type[j][inst.eligible_by_type[j]],
            inst.type_count[inst.eligible_by_type[j]],
        )
        out[j] = np.sort(rate)[::-1][: int(inst.tasks_per_round[j])].sum()
    return out


class _Rows:
    """A sparse constraint matrix built row block by row block."""

    def __init__(self) -> None:
        self.r: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.rhs: list[np.ndarray] = []
        self.n = 0

    def add(self, terms: list, rhs: np.ndarray) -> None:
        """Rows n .. n + len(rhs): each term (columns, values[, first row]) lays one entry
        per row from its first row on (default the block's first)."""
        for cols, vals, *first in terms:
            self.r.append(self.n + (first[0] if first else 0) + np.arange(len(cols)))
            self.cols.append(np.asarray(cols))
            self.vals.append(np.broadcast_to(vals, len(cols)).astype(float))
        self.rhs.append(np.asarray(rhs, float))
        self.n += len(rhs)

    def one(self, cols: np.ndarray, vals: np.ndarray, rhs: float) -> None:
        """One row sum(vals * x[cols]) <= / == rhs."""
        self.r.append(np.full(len(cols), self.n))
        self.cols.append(np.asarray(cols))
        self.vals.append(np.asarray(vals, float))
        self.rhs.append(np.array([rhs], float))
        self.n += 1

    def matrix(self, ncol: int):
        from scipy.sparse import coo_matrix

        return (
            coo_matrix(
                (np.concatenate(self.vals), (np.concatenate(self.r), np.concatenate(self.cols))),
                shape=(self.n, ncol),
            ).tocsr(),
            np.concatenate(self.rhs),
        )


def strong_bound(
    inst: Instance, upper: int, *, buckets: int = 400, time_limit: float | None = 60.0
) -> float | None:
    """The LP's value (a float: round it with ``model.ceil_bound``), None if HiGHS gives no
    optimum in time. ``upper``: a proved upper bound on OPT (it caps every completion and
    so the horizon)."""
    lp = strong_lp(inst, upper, buckets=buckets, time_limit=time_limit)
    return lp.value if lp is not None and math.isfinite(lp.value) else None


@dataclass(frozen=True)
class StrongLP:
    """The LP's optimum: its value (``math.inf``: no schedule in the branch scores at most
    ``upper``), each job's completion C_j and completion shares X_jl, the bucket ends."""

    value: float
    completion: np.ndarray
    share: np.ndarray
    ends: np.ndarray


def strong_lp(
    inst: Instance,
    upper: int,
    *,
    buckets: int = 400,
    time_limit: float | None = 60.0,
    completion: Mapping[int, tuple[float, float]] | None = None,
) -> StrongLP | None:
    """``strong_bound``'s LP and its solution; None if HiGHS gives no optimum in time.

    ``completion``: job -> (lo, hi), the schedules in which job j completes within
    [lo, hi] only (a branch: C_j >= lo, nothing of X_j before lo, all of it from hi on),
    so that the least value over branches that cover every schedule is a bound too.
    """
    from scipy.optimize import linprog  # SciPy loads only when a bound needs it

    n, types = inst.num_jobs, len(inst.gpu_types)
    cp = critical_path(inst).astype(float)
    w = inst.weight.astype(float)
    late = (upper - (w @ cp - w * cp)) / w  # C_j <= late_j in any optimum
    cuts = np.linspace(float(min(inst.release.min(), cp.min())), float(late.max()), buckets + 1)
    lo, hi = cuts[:-1], cuts[1:]
    length, L = hi - lo, buckets
    ok = inst.eligible_by_type
    p = np.where(ok, inst.proc_by_type, 1).astype(float)
    tasks = (inst.rounds * inst.tasks_per_round).astype(float)
    begin = (inst.release + inst.overhead).astype(float)
    k_cap = np.minimum(inst.tasks_per_round[:, None], inst.type_count[None, :]).astype(float)
    rate = max_task_rate(inst)
    smin = np.where(ok, inst.sync_by_type, np.iinfo(np.int64).max).min(axis=1).astype(float)
    patterns = [round_patterns(inst, j) for j in range(n)]

    # columns: y[j,k,l], X[j,l], W[j,l] (tasks done by t_l+1), C[j], then z[j,p]
    ny = n * types * L

    def yc(j, k):  # noqa: E306 - column indices of y[j, k, :]
        return (j * types + k) * L + np.arange(L)

    def xc(j):  # noqa: E306
        return ny + j * L + np.arange(L)

    def wc(j):  # noqa: E306
        return ny + n * L + j * L + np.arange(L)

    cc = ny + 2 * n * L
    zoff = cc + n + np.cumsum([0] + [len(d) for _, d in patterns])
    ncol = int(zoff[-1])
    lb, ub = np.zeros(ncol), np.full(ncol, np.inf)
    for j in range(n):
        usable = np.clip(hi - np.maximum(lo, begin[j]), 0.0, None)
        usable[lo >= late[j]] = 0.0  # nothing after the job's latest end
        for k in range(types):
            ub[yc(j, k)] = k_cap[j, k] * usable if ok[j, k] else 0.0
        ub[xc(j)] = np.where(hi >= cp[j], 1.0, 0.0)
        ub[xc(j)[-1]] = lb[xc(j)[-1]] = 1.0
        lb[xc(j)[hi >= late[j]]] = 1.0  # done by its latest completion
        ub[wc(j)] = tasks[j]
    lb[cc : cc + n] = cp
    for j, (c_lo, c_hi) in (completion or {}).items():
        lb[cc + j], ub[cc + j] = max(lb[cc + j], c_lo), min(ub[cc + j], c_hi)
        ub[xc(j)[hi < c_lo]] = 0.0  # not complete before lo
        lb[xc(j)[hi >= c_hi]] = 1.0  # complete by hi
    cost = np.zeros(ncol)
    cost[cc : cc + n] = w

    le, eq = _Rows(), _Rows()
    for k in range(types):  # capacity per type and bucket
        le.add([(yc(j, k), 1.0) for j in range(n) if ok[j, k]], inst.type_count[k] * length)
    for j in range(n):  # one round at a time: at most K_j tasks of j run at once
        le.add(
            [(yc(j, k), 1.0) for k in range(types) if ok[j, k]], inst.tasks_per_round[j] * length
        )
    for j in range(n):
        # N_j X_jl - W_jl <= 0: done by t_l+1 means all work done by then
        le.add([(xc(j), tasks[j]), (wc(j), -1.0)], np.zeros(L))
        le.add([(xc(j)[:-1], 1.0), (xc(j)[1:], -1.0)], np.zeros(L - 1))  # X non-decreasing
        # sum_l (X_l - X_l-1) c_l - C_j <= 0, with c_l = max(t_l, cp_j)
        c = np.maximum(lo, cp[j])
        le.one(np.r_[xc(j), cc + j], np.r_[c[:-1] - c[1:], c[-1], -1.0], 0.0)
        # mean busy time: sum_kl (y_jkl / t_jk) t_l / N_j - C_j <= -(N_j / 2 rho_j + s_j)
        cols = np.concatenate([yc(j, k) for k in range(types) if ok[j, k]])
        vals = np.concatenate([lo / p[j, k] / tasks[j] for k in range(types) if ok[j, k]])
        le.one(np.r_[cols, cc + j], np.r_[vals, -1.0], -(tasks[j] / (2 * rate[j]) + smin[j]))
        counts, least = patterns[j]
        if len(least):  # rounds last: r_j + o_j + sum_p z_jp d_p - C_j <= 0
            z = np.arange(zoff[j], zoff[j + 1])
            le.one(np.r_[z, cc + j], np.r_[least, -1.0], -begin[j])
            eq.one(z, np.ones(len(z)), float(inst.rounds[j]))  # sum_p z_jp = R_j
            for k in range(types):  # GPU time on type k = sum_p z_jp p_k t_jk
                if ok[j, k]:
                    eq.one(np.r_[yc(j, k), z], np.r_[np.ones(L), -counts[:, k] * p[j, k]], 0.0)
        # W_jl - W_j,l-1 - sum_k y_jkl / t_jk = 0 (W_j,-1 = 0)
        eq.add(
            [
                (wc(j), 1.0),
                (wc(j)[:-1], -1.0, 1),
                *((yc(j, k), -1.0 / p[j, k]) for k in range(types) if ok[j, k]),
            ],
            np.zeros(L),
        )
    a_ub, b_ub = le.matrix(ncol)
    a_eq, b_eq = eq.matrix(ncol)
    options: dict[str, bool | float] = {"presolve": True}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = linprog(
        cost,
        A_ub=a_ub,
        b_ub=b_ub,
        A_eq=a_eq,
        b_eq=b_eq,
        bounds=np.column_stack([lb, ub]),
        method="highs",
        options=options,
    )
    if res.status == 2:  # infeasible: the branch holds no schedule scoring <= upper
        return StrongLP(math.inf, np.zeros(0), np.zeros((0, L)), hi)
    if res.status != 0 or not math.isfinite(res.fun):
        return None
    x = res.x
    return StrongLP(float(res.fun), x[cc : cc + n], x[ny : ny + n * L].reshape(n, L), hi)
