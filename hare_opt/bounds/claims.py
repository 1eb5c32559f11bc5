"""The approximation factors solvers claim: ours (proved) and the paper's (refuted).

A claim is a function ``instance -> factor`` with objective <= factor x OPT; the
solver registry names them, and ``hare-opt falsify`` hunts for instances that break
them (docs/theory.md).
"""

from __future__ import annotations

import math
from fractions import Fraction

from hare_opt.bounds.approx import approx_factor
from hare_opt.bounds.guarantee import guarantee_plan
from hare_opt.bounds.lower import lower_bound
from hare_opt.model import Instance


def guarantee(inst: Instance, lower: float | None = None) -> float:
    """rho such that objective(hare) <= rho * lower_bound(instance), proved a priori."""
    lb = lower_bound(inst) if lower is None else lower
    _, u = guarantee_plan(inst)
    if lb <= 0:
        return math.inf
    return math.nextafter(float(Fraction(u) / Fraction(lb)), math.inf)  # round up, never down


def hare_claim(inst: Instance) -> float:
    """What ``hare`` claims against OPT: the smaller of ``guarantee`` (its schedule is at
    most U <= guarantee x lower_bound) and ``approx_factor`` (it is never worse than
    geobatch's schedule); docs/theory.md (b), (c)."""
    return min(guarantee(inst), approx_factor(inst))


def paper_claim(inst: Instance) -> float:
    """alpha (2 + alpha), alpha the largest heterogeneity ratio: the factor Theorem 4 of the
    Hare paper claims for its Algorithm 1 (refuted in docs/theory.md (a))."""
    a = float(inst.alpha.max())
    return a * (2 + a)
