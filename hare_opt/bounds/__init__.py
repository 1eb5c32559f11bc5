"""Lower bounds on the optimum and the a-priori guarantee of ``hare``.

Every bound is valid for every instance (proofs: docs/theory.md (b)), and
``lower_bound`` is the best of them, rounded up to an integer because every
objective is one.
"""

from __future__ import annotations

import math

from hare_opt.bounds.approx import approx_factor, approx_terms, geometric_bound
from hare_opt.bounds.combinatorial import (
    cluster_work,
    critical_path,
    critical_path_bound,
    load_bound,
    preemptive_wspt,
)
from hare_opt.bounds.guarantee import (
    guarantee,
    guarantee_plan,
    lp_order,
    rho,
    sequential_bound,
    solo_span,
)
from hare_opt.bounds.lp import lp_bound
from hare_opt.model import Instance

__all__ = ["all_bounds", "approx_factor", "approx_terms", "cluster_work", "critical_path",
           "critical_path_bound", "geometric_bound", "guarantee", "guarantee_plan", "load_bound",
           "lower_bound", "lp_bound", "lp_order", "preemptive_wspt", "rho", "sequential_bound",
           "solo_span"]


def all_bounds(inst: Instance, *, lp: bool = True) -> dict[str, float]:
    """Each lower bound by name; ``lp`` (the slowest) may be left out."""
    out = {"critical_path": float(critical_path_bound(inst)),
           "load": float(load_bound(inst)),
           "geometric": float(geometric_bound(inst))}
    if lp:
        value = lp_bound(inst, guarantee_plan(inst)[1])
        if value is not None:
            out["lp"] = value
    return out


def lower_bound(inst: Instance, *, lp: bool = True, bounds: dict[str, float] | None = None
                ) -> float:
    """The best bound, rounded up (objectives are integers); never above the optimum.

    ``bounds``: the output of ``all_bounds`` if already computed.
    """
    best = max((bounds if bounds is not None else all_bounds(inst, lp=lp)).values())
    return float(math.ceil(best - 1e-9 * max(1.0, best)))
