"""``lower_bound``: the best of the lower bounds, as an integer (objectives are integers)."""

from __future__ import annotations

import math

from hare_opt.bounds.approx import geometric_bound
from hare_opt.bounds.combinatorial import critical_path_bound, load_bound
from hare_opt.bounds.guarantee import guarantee_plan
from hare_opt.bounds.lp import lp_bound
from hare_opt.model import Instance, ceil_bound

#: Bounds that HiGHS computes in floats: rounded with ``ceil_bound``, never a plain ceiling.
FLOATS = ("lp", "strong")


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

    The combinatorial bounds are exact (integers, fractions) and round up exactly; the
    LP's float value goes through ``ceil_bound``. ``bounds``: ``all_bounds``'s output if
    already computed (its load value is then taken as exact).
    """
    if bounds is None:
        exact = max(critical_path_bound(inst), math.ceil(load_bound(inst)),
                    math.ceil(geometric_bound(inst)))
        value = lp_bound(inst, guarantee_plan(inst)[1]) if lp else None
    else:
        exact = max(math.ceil(v) if k not in FLOATS else 0 for k, v in bounds.items())
        value = max((bounds[k] for k in FLOATS if k in bounds), default=None)
    return float(max(exact, ceil_bound(value)) if value is not None else exact)
