"""Lower bounds on the optimum and the a-priori guarantee of ``hare``.

Every bound is valid for every instance (proofs: docs/theory.md (b)), and
``lower_bound`` is the best of the registered bounds (``BOUNDS``), rounded up to an
integer because every objective is one. The names below load on first use: the LP
bounds need SciPy, which a small solve should not pay for.
"""

from typing import TYPE_CHECKING

from hare_opt.util.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(["approx_factor", "approx_terms", "geometric_bound"], "hare_opt.bounds.approx"),
    **dict.fromkeys(["guarantee", "hare_claim", "paper_claim"], "hare_opt.bounds.claims"),
    **dict.fromkeys(
        ["cluster_work", "critical_path", "critical_path_bound", "load_bound", "preemptive_wspt"],
        "hare_opt.bounds.combinatorial",
    ),
    **dict.fromkeys(
        ["guarantee_plan", "lp_order", "rho", "sequential_bound", "solo_span"],
        "hare_opt.bounds.guarantee",
    ),
    **dict.fromkeys(
        ["BOUNDS", "BoundSpec", "UnknownBoundError", "all_bounds", "lower_bound", "register_bound"],
        "hare_opt.bounds.lower",
    ),
    "lp_bound": "hare_opt.bounds.lp",
    "strong_bound": "hare_opt.bounds.strong",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

# ``guarantee`` is both a submodule and a function: importing the submodule (which any
# bound does) would bind the name to the module, so the function is bound here, after it.
from hare_opt.bounds.claims import guarantee  # noqa: E402

if TYPE_CHECKING:
    from hare_opt.bounds.approx import approx_factor, approx_terms, geometric_bound
    from hare_opt.bounds.claims import hare_claim, paper_claim
    from hare_opt.bounds.combinatorial import (
        cluster_work,
        critical_path,
        critical_path_bound,
        load_bound,
        preemptive_wspt,
    )
    from hare_opt.bounds.guarantee import (
        guarantee_plan,
        lp_order,
        rho,
        sequential_bound,
        solo_span,
    )
    from hare_opt.bounds.lower import (
        BOUNDS,
        BoundSpec,
        UnknownBoundError,
        all_bounds,
        lower_bound,
        register_bound,
    )
    from hare_opt.bounds.lp import lp_bound
    from hare_opt.bounds.strong import strong_bound

__all__ = [
    "BOUNDS",
    "BoundSpec",
    "UnknownBoundError",
    "all_bounds",
    "approx_factor",
    "approx_terms",
    "cluster_work",
    "critical_path",
    "critical_path_bound",
    "geometric_bound",
    "guarantee",
    "guarantee_plan",
    "hare_claim",
    "load_bound",
    "lower_bound",
    "lp_bound",
    "lp_order",
    "paper_claim",
    "preemptive_wspt",
    "register_bound",
    "rho",
    "sequential_bound",
    "solo_span",
    "strong_bound",
]
