"""Planners for plan-following simulator policies: any registered solver.

``get_planner(name)`` returns the planner the solver's spec names (``SolverSpec.planner``:
``hare`` and ``hare-paper`` plan from the running cluster with warm starts) or, for any
other solver, a ``SolverPlanner`` that plans through ``solve()``: its options are
checked and every plan is verified. There is no second list of planners: the solver
registry is the one.
"""

from __future__ import annotations

import time
from typing import Any

from hare_opt.model import Instance, Schedule
from hare_opt.model.planning import Planner, Warm
from hare_opt.solvers.base import SOLVERS, solve
from hare_opt.util.registry import resolve


class SolverPlanner:
    """Plans with ``solve(residual, solver, time_limit=..., **options)``; it sees an
    instance only (no ``Warm``), so busy GPUs reach it as stand-in jobs."""

    warm = False

    def __init__(self, solver: str, **options: Any):
        SOLVERS.spec(solver).parse_options(options)  # a bad option fails before simulating
        self.name, self.options = solver, options
        self.plans = 0

    def plan(self, residual: Instance, warm: Warm | None, deadline: float) -> Schedule:
        self.plans += 1
        left = max(1e-3, deadline - time.perf_counter())
        return solve(residual, self.name, time_limit=left, **self.options).schedule

    def stats(self) -> dict[str, Any]:
        return {"planner": self.name}


def get_planner(name: str, *, evals: int | None = None, **options: Any) -> Planner:
    """The planner the solver ``name`` registers (``SolverSpec.planner``), else a
    ``SolverPlanner`` for it (an unknown name is refused with the list of solvers).

    ``evals``: candidate plans per re-plan, for planners that compare candidates (a
    solver plans once per re-plan and ignores it).
    """
    spec = SOLVERS.spec(name)
    if spec.planner is not None:
        cls = resolve(spec.planner)
        return cls(**options) if evals is None else cls(evals=evals, **options)
    return SolverPlanner(name, **options)
