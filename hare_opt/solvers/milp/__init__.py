"""Exact MILP solver (PuLP; HiGHS or CBC): time-indexed, aggregated per GPU type."""

from hare_opt.solvers.milp.formulation import MAX_VARS, ModelTooLargeError
from hare_opt.solvers.milp.solver import lp_relaxation_bound, solve_milp

__all__ = ["MAX_VARS", "ModelTooLargeError", "lp_relaxation_bound", "solve_milp"]
