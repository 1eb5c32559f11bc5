"""Exact solver on OR-Tools CP-SAT (formulation: docs/formulations.md).

Names load on first use: the size check (``size.fits``) needs no OR-Tools.
"""

from typing import TYPE_CHECKING

from hare_opt.util.lazy import lazy_exports

_EXPORTS = {
    "Features": "hare_opt.solvers.cpsat.model",
    "build": "hare_opt.solvers.cpsat.model",
    "Tasks": "hare_opt.solvers.cpsat.tasks",
    "solve_cpsat": "hare_opt.solvers.cpsat.solver",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from hare_opt.solvers.cpsat.model import Features, build
    from hare_opt.solvers.cpsat.solver import solve_cpsat
    from hare_opt.solvers.cpsat.tasks import Tasks

__all__ = ["Features", "Tasks", "build", "solve_cpsat"]
