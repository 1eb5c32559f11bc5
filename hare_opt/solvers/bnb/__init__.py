"""Exact branch and bound over GPU sequences with dominance (docs/formulations.md).

Names load on first use: the size check (``options.fits``) needs no numba.
"""

from typing import TYPE_CHECKING

from hare_opt.util.lazy import lazy_exports

_EXPORTS = {"solve_bnb": "hare_opt.solvers.bnb.solver", "warm_up": "hare_opt.solvers.bnb.solver"}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from hare_opt.solvers.bnb.solver import solve_bnb, warm_up

__all__ = ["solve_bnb", "warm_up"]
