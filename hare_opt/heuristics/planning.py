"""``HarePlanner``: our heuristic as the planner of an online policy, from a running cluster.

A clairvoyant planner may compare its own plans, so it tries ``evals`` schedules of
the residual (its portfolio of orders x dispatchers) and keeps the best planned
objective; with a ``Warm`` it plans only the work left on the cluster as it is
(docs/theory.md, "Warm starts"). With an idle cluster the residual alone is exact, and
the planner runs ``solve_hare`` itself, guarantee step included, checked on its way out.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from hare_opt.checker import verify
from hare_opt.heuristics.hare import DEFAULT_BUDGET, HareOptions, search_hare, solve_hare
from hare_opt.heuristics.rounds import clip_runs, expand_blocks, schedule_runs
from hare_opt.model import Instance, Schedule
from hare_opt.model.options import Run
from hare_opt.model.planning import Warm

#: Schedules tried per plan by default: 5 orders x 3 dispatchers (``hare.ONLINE``), then
#: the local search.
PLAN_EVALS = 20


class HarePlanner:
    """``evals`` candidate schedules per plan, at most ``DEFAULT_BUDGET`` round placements
    (``improve`` and ``budget`` override what ``evals`` implies)."""

    name = "hare"
    warm = True
    #: ``plan_blocks`` takes ``until`` (the plan's tasks that start before it, exact).
    cuts_in_time = True

    def __init__(
        self,
        *,
        evals: int = PLAN_EVALS,
        improve: bool | None = None,
        budget: int | None = None,
        work_conserving: bool = True,
        hold_forms: bool = False,
    ):
        given = {k: v for k, v in (("improve", improve), ("budget", budget)) if v is not None}
        if given:  # named one-line errors, as ``solve --option`` gives them
            checked = HareOptions.parse(given, owner="policy 'hare'")
            improve = checked.improve if improve is not None else None
            budget = checked.budget if budget is not None else None
        self.evals, self.improve, self.budget = evals, improve, budget
        checked = HareOptions.parse(
            {"work_conserving": work_conserving, "hold_forms": hold_forms}, owner="policy 'hare'"
        )
        self.work_conserving, self.hold_forms = checked.work_conserving, checked.hold_forms
        self.plans = 0

    def options(self, residual: Instance) -> HareOptions:
        improve = self.evals > 1 if self.improve is None else self.improve
        budget = (
            min(self.evals * int(residual.rounds.sum()), DEFAULT_BUDGET)
            if self.budget is None
            else self.budget
        )
        return HareOptions(
            improve=improve,
            budget=budget,
            work_conserving=self.work_conserving,
            hold_forms=self.hold_forms,
            polish=False,  # re-planned at the next arrival: not worth up to a second each
        )

    def plan(self, residual: Instance, warm: Warm | None, deadline: float) -> Schedule:
        return expand_blocks(residual, self.plan_blocks(residual, warm, deadline))

    def plan_blocks(
        self, residual: Instance, warm: Warm | None, deadline: float, until: int | None = None
    ) -> np.ndarray:
        """``plan`` as the round engine's runs (``rounds.expand_blocks``), without building
        a schedule of every task: plan followers re-plan 10^6 tasks at every arrival.

        ``until``: only the plan's tasks that start before it, exactly those of the full
        plan. When the search tries one schedule (large residuals), its dispatch stops
        there (``search_hare(until=...)``): a plan at every arrival then costs what is
        executed before the next one, not the whole residual's dispatch."""
        self.plans += 1
        opts = self.options(residual)
        if warm is None:
            run = Run(time_limit=max(1e-3, deadline - time.perf_counter()))
            runs = schedule_runs(
                residual, verify(residual, solve_hare(residual, run, opts)).schedule
            )
        else:
            runs = search_hare(
                residual,
                warm=warm,
                improve=opts.improve,
                budget=opts.budget,
                deadline=deadline,
                work_conserving=opts.work_conserving,
                hold_forms=opts.hold_forms,
                until=until,
            ).best.engine.blocks
        return runs if until is None else clip_runs(residual, runs, until)

    def stats(self) -> dict[str, Any]:
        return {"planner": self.name, "planner_evals": self.evals}
