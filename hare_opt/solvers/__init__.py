"""Solvers behind one contract: a registry of specs and ``solve()``; exact backends live in
sub-packages of the same shape (``cpsat/``, ``milp/``, ``bnb/``, ``portfolio/``)."""

from hare_opt.model import SolverError
from hare_opt.model.options import NoOptions, Options, Run, UnknownOptionError, option
from hare_opt.solvers.base import (
    SOLVERS,
    Solver,
    SolverSpec,
    UnknownSolverError,
    available_solvers,
    check_hint,
    claimed_factor,
    register,
    solve,
    solver_names,
)

__all__ = [
    "SOLVERS",
    "NoOptions",
    "Options",
    "Run",
    "Solver",
    "SolverError",
    "SolverSpec",
    "UnknownOptionError",
    "UnknownSolverError",
    "available_solvers",
    "check_hint",
    "claimed_factor",
    "option",
    "register",
    "solve",
    "solver_names",
]
