"""What a schedule file says about itself, checked against what its tasks show.

Why apart from ``check``: ``check`` judges tasks (and has a compiled fast path for very
large schedules); a file's header is a handful of claims (status, objective, lower
bound, which instance) that a reader takes at their word. A header that contradicts
its tasks (``status: unknown`` with tasks, an objective the tasks do not score, a
lower bound above a schedule that exists) is a false statement, however good the
tasks are, so the file is not a valid schedule file.
"""

from __future__ import annotations

import math
import numbers

from hare_opt.model import CheckReport, Instance, Result, Status

#: Relative tolerance of a stated number against the checker's (as ``verify`` uses).
TOL = 1e-6


def _num(x: float) -> str:
    """A number as stated, exactly: an integer's digits, a float's shortest repr."""
    return str(int(x)) if isinstance(x, numbers.Integral) else repr(float(x))


def _differs(stated: float, actual: float) -> bool:
    """An objective is an integer: a stated integer must be it exactly, a stated float
    may differ only by its own rounding (a unit in the last place), not by ``TOL``."""
    if isinstance(stated, numbers.Integral) and isinstance(actual, numbers.Integral):
        return int(stated) != int(actual)
    return abs(float(stated) - float(actual)) > 2.0**-52 * max(1.0, abs(float(actual)))


def check_header(instance: Instance, result: Result, report: CheckReport) -> list[str]:
    """The header's contradictions with its tasks (``report``: the checker's verdict on
    ``result.schedule``), one message each; an empty list when it has none."""
    out = []
    n = len(result.schedule)
    stated = result.objective if math.isfinite(result.objective) else None
    lb = result.lower_bound
    if result.instance_name and result.instance_name != instance.name:
        out.append(
            f"header: 'instance' is {result.instance_name!r}, but the instance is {instance.name!r}"
        )
    if not result.status.has_schedule and n:
        out.append(
            f"header: status '{result.status}' says there is no schedule, but the "
            f"file has {n:,} tasks"
        )
    if result.status == Status.INFEASIBLE:
        out.append(
            "header: status 'infeasible', but every valid instance has a schedule "
            "(run its jobs one after another)"
        )
    if stated is not None and not result.status.has_schedule:
        out.append(
            f"header: objective {_num(stated)} with status '{result.status}' (no schedule "
            "has an objective)"
        )
    if lb is not None and stated is not None and lb > stated + TOL * max(1.0, abs(stated)):
        out.append(f"header: lower_bound {_num(lb)} exceeds the stated objective {_num(stated)}")
    if report.feasible and report.objective is not None:
        if stated is not None and _differs(stated, report.objective):
            out.append(
                f"header: objective {_num(stated)}, but the tasks score {_num(report.objective)}"
            )
        if lb is not None and lb > report.objective + TOL * max(1.0, report.objective):
            out.append(
                f"header: lower_bound {_num(lb)} exceeds {_num(report.objective)}, the "
                "objective of these tasks, a feasible schedule: no bound can"
            )
        if result.status == Status.OPTIMAL and lb is not None and _differs(lb, report.objective):
            out.append(
                f"header: status 'optimal' with lower_bound {_num(lb)}, but a proved "
                f"optimum {_num(report.objective)} is its own bound"
            )
    if result.runtime_s < 0:
        out.append(f"header: runtime_s {result.runtime_s:g} is negative")
    return out
