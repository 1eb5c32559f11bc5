"""Exact portfolio: CP-SAT and the MILP in parallel, the better schedule and the higher bound."""

from hare_opt.solvers.portfolio.solver import solve_portfolio

__all__ = ["solve_portfolio"]
