"""Exact solver on OR-Tools CP-SAT (formulation: docs/formulations.md)."""

from hare_opt.solvers.cpsat.model import Features, build
from hare_opt.solvers.cpsat.solver import solve_cpsat
from hare_opt.solvers.cpsat.tasks import Tasks

__all__ = ["Features", "Tasks", "build", "solve_cpsat"]
