"""``verify``: the gate every result passes before it leaves a solver or the simulator.

A schedule that breaks a rule, or an objective or bound that disagrees with the
checker, is a bug in whatever produced it (``SolverError``), never a result. The
report is kept on the result, so a result verified once is not checked again.
"""

from __future__ import annotations

import math

from hare_opt.checker.check import check
from hare_opt.model import CheckReport, Instance, Result, Schedule, SolverError, Status


def report_for(
    instance: Instance, schedule: Schedule, known: CheckReport | None = None
) -> CheckReport:
    """``known`` if it judged exactly these objects, else a fresh check (5 messages a kind)."""
    if known is not None and known.judged(instance, schedule):
        return known
    return check(instance, schedule, max_messages=5)


def verify(instance: Instance, result: Result) -> Result:
    """Check ``result`` against ``instance``; fill in what only the checker knows.

    A result with a schedule must be feasible and claim the checker's objective
    (``math.inf`` means "not stated" and is filled in); its bound may not exceed
    the objective; an ``optimal`` one without a bound gets the objective as bound.
    Results without a schedule must have an empty one.
    """
    who = result.solver or "solver"
    if not result.status.has_schedule:
        if len(result.schedule):
            raise SolverError(f"{who}: status {result.status} with a schedule")
        return result
    report = report_for(instance, result.schedule, result.report)
    if not report.feasible:
        raise SolverError(
            f"{who} returned an infeasible schedule for {instance.name!r}: "
            + "; ".join(report.violations[:5])
        )
    assert report.objective is not None  # feasible implies every job completed
    if not math.isfinite(result.objective):
        result.objective = report.objective
    elif abs(result.objective - report.objective) > 1e-6 * max(1, abs(report.objective)):
        raise SolverError(
            f"{who} claims objective {result.objective} but the schedule scores {report.objective}"
        )
    # a difference, not ``objective + 1e-6``: above 2^53 that sum rounds below an
    # integer objective and an exact bound equal to it would look above it
    if result.lower_bound is not None and result.lower_bound - result.objective > 1e-6:
        raise SolverError(
            f"{who}: lower bound {result.lower_bound} exceeds objective {result.objective}"
        )
    if result.status == Status.OPTIMAL and result.lower_bound is None:
        result.lower_bound = result.objective
    result.report = report
    result.instance_name = result.instance_name or instance.name
    return result
