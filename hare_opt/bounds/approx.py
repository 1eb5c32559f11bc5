"""The a-priori approximation factor of ``geobatch`` (and so of ``hare``): docs/theory.md (c).

``geobatch`` list-schedules geometric batches of jobs, each job on a subset of
its GPU types: those at most theta times slower than its fastest one. For every
theta the schedule scores at most ``4 rho(theta) x geometric_bound <= 4 rho(theta)
x OPT`` with

    rho(theta) = max_j (2 lambda Gamma_j + mu_j),
    lambda  = max_i (max_{k in E'_i} p_ik + o_i) / pmin_i          (heterogeneity, setup)
    mu_j    = (o_j + max_{k in E'_j} (p_jk + s_jk)) / min_{k in E_j} (p_jk + s_jk)   (a round)
    Gamma_j = M / (GPUs of the types in E'_j)                        (eligibility)

E_j are the job's eligible types, E'_j those kept at theta. No term depends on
the number of GPUs or jobs: scaling every type's GPU count by the same factor
changes nothing, and with full eligibility at theta = inf Gamma = 1.

``geometric_bound`` is the lower bound of the proof (valid for every instance);
``bounds.all_bounds`` reports it as ``geometric``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from hare_opt.bounds.combinatorial import cluster_work, critical_path
from hare_opt.model import Instance

#: Most thresholds theta tried when choosing the one with the smallest factor.
MAX_THETAS = 64


def grid_start(inst: Instance) -> int:
    """tau_0 = min_j critical path: no job completes earlier in any schedule."""
    return int(critical_path(inst).min())


def ratio_order(inst: Instance) -> np.ndarray:
    """Jobs by w_j / W_j, largest first (exact rational comparison; ties: index)."""
    work = cluster_work(inst).tolist()
    return np.array(
        sorted(
            range(inst.num_jobs), key=lambda j: (-Fraction(int(inst.weight[j]), int(work[j])), j)
        ),
        dtype=np.int64,
    )


def _fractional_cover(weight: list[int], work: list[int], cap: int) -> Fraction:
    """Best weight of a fractional knapsack whose items are already in ratio order."""
    total, used = Fraction(0), 0
    for w, a in zip(weight, work):
        if used + a <= cap:
            total += w
            used += a
        else:
            return total + Fraction(w * (cap - used), a)
    return total


def covers(inst: Instance) -> list[tuple[int, Fraction]]:
    """(tau_l, Obar_l) for l = 1, 2, ... until Obar_l = W: Obar_l is the fractional-knapsack
    weight of the jobs with critical path <= tau_l in capacity M tau_l (sizes: cluster
    work). The jobs any schedule completes by tau_l fit that knapsack."""
    order = ratio_order(inst).tolist()
    cp, work = critical_path(inst), cluster_work(inst)
    weights = [int(inst.weight[j]) for j in order]
    total = sum(weights)
    tau = grid_start(inst)
    out: list[tuple[int, Fraction]] = []
    while not out or out[-1][1] < total:
        tau *= 2
        keep = [i for i, j in enumerate(order) if cp[j] <= tau]
        cover = _fractional_cover(
            [weights[i] for i in keep], [int(work[order[i]]) for i in keep], inst.num_gpus * tau
        )
        out.append((tau, min(cover, Fraction(total))))
    return out


def geometric_bound(inst: Instance) -> Fraction:
    """sum_j w_j C_j >= tau_0 W + sum_{l>=1} tau_{l-1} (W - Obar_l) for every schedule
    (``covers``; tau_l = tau_0 2^l, and nothing completes before tau_0)."""
    total = int(inst.weight.sum())
    return grid_start(inst) * total + sum(
        ((tau // 2) * (total - c) for tau, c in covers(inst)), Fraction(0)
    )


def restriction(inst: Instance, theta: float = math.inf) -> np.ndarray:
    """(N, T) eligible types at most theta times slower than the job's fastest (E'_j)."""
    pmin = inst.min_task_time.astype(float)
    return inst.eligible_by_type & (inst.proc_by_type <= theta * pmin[:, None])


def approx_terms(inst: Instance, keep: np.ndarray | None = None) -> dict[str, Fraction]:
    """lambda, mu, Gamma (worst job) and rho of the theorem for the restriction ``keep``."""
    keep = inst.eligible_by_type if keep is None else keep
    elig = inst.eligible_by_type
    if not (keep <= elig).all() or not keep.any(axis=1).all():
        raise ValueError("keep must choose a non-empty subset of each job's eligible types")
    p, s, o = inst.proc_by_type, inst.sync_by_type, inst.overhead
    pmin, m = inst.min_task_time, inst.type_count
    big = np.iinfo(np.int64).max
    pmax_keep = np.where(keep, p, 0).max(axis=1)
    round_keep = np.where(keep, p + s, 0).max(axis=1)
    round_min = np.where(elig, p + s, big).min(axis=1)
    gpus_keep = np.where(keep, m[None, :], 0).sum(axis=1)
    lam = max(Fraction(int(a) + int(b), int(c)) for a, b, c in zip(pmax_keep, o, pmin))
    rho, worst = Fraction(0), {"gamma": Fraction(0), "mu": Fraction(0)}
    for j in range(inst.num_jobs):
        gamma = Fraction(inst.num_gpus, int(gpus_keep[j]))
        mu = Fraction(int(o[j]) + int(round_keep[j]), int(round_min[j]))
        r = 2 * lam * gamma + mu
        if j == 0 or r > rho:
            rho, worst = r, {"gamma": gamma, "mu": mu}
    return {"lambda": lam, **worst, "rho": rho, "factor": 4 * rho}


def _thetas(inst: Instance) -> list[float]:
    ratios = np.unique(
        (inst.proc_by_type / inst.min_task_time[:, None].astype(float))[inst.eligible_by_type]
    )
    if len(ratios) > MAX_THETAS:
        ratios = np.unique(
            np.quantile(ratios, np.linspace(0, 1, MAX_THETAS), method="inverted_cdf")
        )
    return [float(x) for x in ratios] + [math.inf]


def _rho_float(inst: Instance, keep: np.ndarray) -> float:
    """rho of ``approx_terms`` in floats, vectorised: only used to rank thresholds."""
    p, s, o = inst.proc_by_type, inst.sync_by_type, inst.overhead
    big = np.iinfo(np.int64).max
    lam = ((np.where(keep, p, 0).max(axis=1) + o) / inst.min_task_time).max()
    gamma = inst.num_gpus / np.where(keep, inst.type_count[None, :], 0).sum(axis=1)
    mu = (o + np.where(keep, p + s, 0).max(axis=1)) / np.where(
        inst.eligible_by_type, p + s, big
    ).min(axis=1)
    return float((2 * lam * gamma + mu).max())


def best_restriction(inst: Instance) -> tuple[float, np.ndarray, dict[str, Fraction]]:
    """(theta, E', terms) with the smallest factor among the thresholds tried.

    Any theta gives a valid theorem, so choosing the best of a few keeps it valid;
    the ranking is in floats, the chosen factor exact.
    """
    thetas = _thetas(inst)
    theta = min(thetas, key=lambda t: _rho_float(inst, restriction(inst, t)))
    keep = restriction(inst, theta)
    return theta, keep, approx_terms(inst, keep)


def approx_factor(inst: Instance) -> float:
    """4 rho(theta*): geobatch (hence hare) scores at most this times OPT, proved a priori.

    A float rounded up, never down.
    """
    return math.nextafter(float(best_restriction(inst)[2]["factor"]), math.inf)


__all__ = [
    "approx_factor",
    "approx_terms",
    "best_restriction",
    "covers",
    "geometric_bound",
    "grid_start",
    "ratio_order",
    "restriction",
]
