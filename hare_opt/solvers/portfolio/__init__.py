"""Exact portfolio: the registered members in-process and in parallel, sharing what they
prove (names load on first use)."""

from typing import TYPE_CHECKING

from hare_opt.util.lazy import lazy_exports

_EXPORTS = {"solve_portfolio": "hare_opt.solvers.portfolio.solver"}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from hare_opt.solvers.portfolio.solver import solve_portfolio

__all__ = ["solve_portfolio"]
