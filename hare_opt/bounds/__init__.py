"""Lower bounds on the optimum and the a-priori guarantee of ``hare``.

Every bound is valid for every instance (proofs: docs/theory.md (b)), and
``lower_bound`` is the best of them, rounded up to an integer because every
objective is one.
"""

from hare_opt.bounds.approx import approx_factor, approx_terms, geometric_bound
from hare_opt.bounds.claims import guarantee, hare_claim, paper_claim
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
from hare_opt.bounds.lower import all_bounds, lower_bound
from hare_opt.bounds.lp import lp_bound
from hare_opt.bounds.strong import strong_bound

__all__ = ["all_bounds", "approx_factor", "approx_terms", "cluster_work", "critical_path",
           "critical_path_bound", "geometric_bound", "guarantee", "guarantee_plan", "hare_claim",
           "load_bound", "lower_bound", "lp_bound", "lp_order", "paper_claim", "preemptive_wspt",
           "rho", "sequential_bound", "solo_span", "strong_bound"]
