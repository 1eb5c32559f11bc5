"""The a-priori guarantee of ``hare``: objective <= U(instance) <= (1 + 2 rho) * load bound.

U is the value of a one-machine recurrence over jobs, computed from the
instance alone (the heuristic is never run for it); docs/theory.md (b) proves
that the schedule ``hare`` returns never scores more.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from hare_opt.bounds.combinatorial import cluster_work, load_lp
from hare_opt.model import Instance


def solo_span(inst: Instance) -> np.ndarray:
    """(N,) P_j = o_j + R_j * round_time_next_j: the most a job placed after every GPU is
    free (and after its release) can take with min-barrier rounds (Lemma 1)."""
    return inst.overhead + inst.rounds * inst.round_time_next


def sequential_bound(inst: Instance, order: np.ndarray) -> int:
    """U(order) = sum_k w_k C^_k with C^_k = max(C^_{k-1}, r_k) + P_k along ``order``."""
    span = solo_span(inst)
    t, total = 0, 0
    for j in np.asarray(order).tolist():
        t = max(t, int(inst.release[j])) + int(span[j])
        total += int(inst.weight[j]) * t
    return total


def lp_order(inst: Instance) -> np.ndarray:
    """Jobs by mean busy time in the load bound's preemptive schedule (ties: index)."""
    busy, _ = load_lp(inst)
    return np.array(sorted(range(inst.num_jobs), key=lambda j: (busy[j], j)), dtype=np.int64)


def guarantee_plan(inst: Instance) -> tuple[np.ndarray, int]:
    """The order with the smallest U among a few cheap candidates, and that U.

    Candidates: the load LP's order (needed by the closed form), Smith's order
    on P_j / w_j, and release order. Any order keeps Lemma 2 true.
    """
    span = solo_span(inst)
    cands = [
        lp_order(inst),
        np.lexsort((np.arange(inst.num_jobs), inst.release, span / inst.weight)),
        np.lexsort((np.arange(inst.num_jobs), span / inst.weight, inst.release)),
    ]
    values = [sequential_bound(inst, o) for o in cands]
    best = int(np.argmin(values))
    return cands[best], values[best]


def rho(inst: Instance) -> float:
    """max_j P_j / V_j with V_j = cluster_work_j / M: the closed-form factor is 1 + 2 rho."""
    return float(
        max(
            Fraction(int(p) * inst.num_gpus, int(w))
            for p, w in zip(solo_span(inst), cluster_work(inst))
        )
    )
