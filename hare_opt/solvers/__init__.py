"""Solvers behind one interface; exact backends live in sub-packages of the same shape."""

from hare_opt.solvers.base import (
    EXACT_SOLVERS,
    Solver,
    SolverError,
    UnknownSolverError,
    available_solvers,
    get_solver,
    register,
    solve,
    solver_names,
    verify_result,
)

__all__ = ["EXACT_SOLVERS", "Solver", "SolverError", "UnknownSolverError", "available_solvers",
           "get_solver", "register", "solve", "solver_names", "verify_result"]
