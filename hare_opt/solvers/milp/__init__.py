"""Exact MILP solver (PuLP; HiGHS or CBC): time-indexed, aggregated per GPU type.

Names load on first use: the size check (``windows.fits``) needs no PuLP.
"""

from typing import TYPE_CHECKING

from hare_opt.util.lazy import lazy_exports

_EXPORTS = {
    "MAX_VARS": "hare_opt.solvers.milp.windows",
    "ModelTooLargeError": "hare_opt.solvers.milp.windows",
    "lp_relaxation_bound": "hare_opt.solvers.milp.solver",
    "solve_milp": "hare_opt.solvers.milp.solver",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from hare_opt.solvers.milp.solver import lp_relaxation_bound, solve_milp
    from hare_opt.solvers.milp.windows import MAX_VARS, ModelTooLargeError

__all__ = ["MAX_VARS", "ModelTooLargeError", "lp_relaxation_bound", "solve_milp"]
