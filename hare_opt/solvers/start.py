"""``best_start``: the schedule every exact solver starts from (warm start, upper bound).

One home, so that CP-SAT, the MILP and the branch and bound begin from the same
schedule: the best of the dispatching rules and of a heuristic solver.
"""

from __future__ import annotations

from hare_opt.checker import check
from hare_opt.heuristics.rules import solve_eft, solve_fifo, solve_wspt
from hare_opt.model import Instance, Result
from hare_opt.solvers.base import solve


def best_start(instance: Instance, hint: Result | None = None, *,
               heuristic: str | None = "hare", heuristic_time: float = 5.0) -> Result:
    """The best of the dispatching rules, the ``heuristic`` solver and a feasible ``hint``.

    Its objective is an upper bound (for the MILP also the horizon: a better start
    means a smaller model) and its schedule the warm start. The heuristic is
    optional: if it is missing or fails, the rules still give a start, so a
    heuristic bug cannot break an exact solver (its error is kept in
    ``stats["start_error"]`` of the returned start).
    """
    found = [rule(instance) for rule in (solve_wspt, solve_eft, solve_fifo)]
    error = None
    if heuristic:
        try:
            found.append(solve(instance, heuristic, time_limit=heuristic_time))
        except Exception as exc:  # noqa: BLE001 - optional improver, see docstring
            error = f"{heuristic}: {exc!r}"
    if hint is not None and len(hint.schedule):
        report = check(instance, hint.schedule, max_messages=1)
        if report.feasible:
            found.append(Result("hint", "feasible", hint.schedule, report.objective))
    best = min(found, key=lambda r: r.objective)
    if error:
        best.stats["start_error"] = error
    return best
