"""Exact branch and bound over GPU sequences with dominance (docs/formulations.md)."""

from hare_opt.solvers.bnb.solver import solve_bnb, warm_up

__all__ = ["solve_bnb", "warm_up"]
