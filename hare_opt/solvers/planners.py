"""Planners for plan-following simulator policies: our heuristic, or any registered solver.

``get_planner(name)`` returns the registered planner of that name (``hare``: warm
starts from the running cluster) or, for any other solver name, a ``SolverPlanner``
that plans through ``solve()``: its options are checked and every plan is verified.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from hare_opt.model import HareOptError, Instance, Schedule
from hare_opt.model.planning import Planner, Warm
from hare_opt.solvers.base import SOLVERS, solve
from hare_opt.util.registry import Registry


class UnknownPlannerError(HareOptError, ValueError):
    pass


@dataclass(frozen=True)
class PlannerSpec:
    name: str
    target: str | type
    description: str = ""


PLANNERS: Registry[PlannerSpec] = Registry("planner", UnknownPlannerError)
PLANNERS.add(PlannerSpec("hare", "hare_opt.heuristics.planning:HarePlanner",
                         "our heuristic from the running cluster (warm start)"))
PLANNERS.add(PlannerSpec("hare-paper", "hare_opt.heuristics.paper_planning:HarePaperPlanner",
                         "the paper's Algorithm 1 from the running cluster (GPU availability)"))


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
    """The planner registered as ``name``, else a ``SolverPlanner`` for the solver ``name``.

    ``evals``: candidate plans per re-plan, for registered planners that compare
    candidates (a solver plans once per re-plan and ignores it).
    """
    if name in PLANNERS:
        cls = PLANNERS.load(name)
        return cls(**options) if evals is None else cls(evals=evals, **options)
    return SolverPlanner(name, **options)
