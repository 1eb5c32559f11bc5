"""The one start-and-finish path of the exact backends.

``best_start``: the schedule every exact backend starts from (warm start and upper
bound): the best of the dispatching rules, a heuristic solver and the caller's hint,
verified once. ``finish``: the backend's answer as a verified ``Result``, with its
float bound turned into an integer bound by ``model.ceil_bound`` (one rounding, one
tolerance), the start's report reused when the backend returns the start itself.
"""

from __future__ import annotations

from typing import Any

from hare_opt.checker import report_for
from hare_opt.heuristics.rules import solve_eft, solve_fifo, solve_wspt
from hare_opt.model import Instance, Result, Schedule, SolverError, Status, ceil_bound
from hare_opt.model.options import Run
from hare_opt.solvers.base import solve

RULES = (solve_wspt, solve_eft, solve_fifo)


#: Share of the time left that the start may take (the search gets the rest).
START_SHARE = 0.25


def best_start(instance: Instance, run: Run, *, heuristic: str | None = "hare",
               heuristic_time: float = 5.0) -> Result:
    """The best of the rules, the ``heuristic`` solver (None: rules only) and ``run.hint``.

    Verified, its report attached. If the heuristic fails the rules still give a start,
    so a heuristic bug cannot break an exact solver (its error is kept in
    ``stats["start_error"]`` of the returned start).

    Time: the whole start takes at most ``START_SHARE`` of the run's time left (the
    heuristic at most ``heuristic_time`` of it). The heuristic runs first (it is the
    fastest at scale and always returns a schedule); a rule that cannot finish within
    the phase is skipped once some start exists (``stats["start_skipped"]``).
    """
    phase = run.phase(START_SHARE)
    error = None
    found_h = []
    if heuristic:
        try:
            found_h.append(solve(instance, heuristic, seed=run.seed, stop=run.stop,
                                 time_limit=phase.phase(1.0, heuristic_time).time_limit))
        except Exception as exc:  # noqa: BLE001 - optional improver, see docstring
            error = f"{heuristic}: {exc!r}"
    found: list[Result] = []
    skipped: list[str] = []
    for rule in RULES:
        got = rule(instance, phase if found or found_h else None, None)  # one must finish
        if got.status.has_schedule:
            found.append(got)
        else:
            skipped.append(got.solver)
    found += found_h
    if run.hint is not None:
        found.append(run.hint)
    best = min(found, key=lambda r: r.objective)
    report = report_for(instance, best.schedule, best.report)
    if not report.feasible:
        raise SolverError(f"start {best.solver!r} is infeasible: {report.violations[:3]}")
    start = Result.checked(best.solver, Status.FEASIBLE, report)
    if error:
        start.stats["start_error"] = error
    if skipped:
        start.stats["start_skipped"] = skipped
    return start


def finish(instance: Instance, run: Run, solver: str, status: Status | str,
           schedule: Schedule, *, bound: float | None, start: Result | None = None,
           stats: dict[str, Any] | None = None) -> Result:
    """A backend's answer as a verified result.

    ``schedule`` is the backend's best (``start.schedule`` when it found nothing
    better: its report is reused); ``bound`` its proved float lower bound, rounded up
    to an integer within ``BOUND_TOL`` and capped at the objective; ``optimal`` sets
    the bound to the objective.
    """
    status = Status(status)
    known = start.report if start is not None and schedule is start.schedule else None
    report = report_for(instance, schedule, known)
    if not report.feasible or report.objective is None:
        raise SolverError(f"{solver} produced an infeasible schedule for {instance.name!r}: "
                          + "; ".join(report.violations[:5]))
    objective = report.objective
    if status == Status.OPTIMAL:
        if bound is not None and ceil_bound(bound) > objective:
            raise SolverError(f"{solver}: proved bound {bound} above its objective {objective}")
        lower: float | None = objective
    else:
        lower = None if bound is None else min(ceil_bound(bound), objective)
    return Result.checked(solver, status, report, lower_bound=lower, runtime_s=run.elapsed(),
                          stats=stats)
