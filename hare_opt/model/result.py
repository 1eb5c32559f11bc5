"""What a solver returns: a status, a schedule, its objective and bound, and its check.

``Result`` is the one currency between solvers, the checker, files and the
simulator. It keeps the checker's report on its schedule (``report``), so that no
layer checks the same schedule twice; the report is only trusted for the exact
instance and schedule objects it judged (``CheckReport.judged``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from hare_opt.model.errors import ScheduleError
from hare_opt.model.instance import Instance
from hare_opt.model.schedule import Schedule
from hare_opt.model.stats import Stats

#: One tolerance for turning a solver's float bound into an integer one (objectives are
#: integers): a bound within BOUND_TOL (relative, at least absolute) below an integer
#: rounds up to it; anything lower rounds down first, so a bound is never overstated.
BOUND_TOL = 1e-7


def ceil_bound(value: float) -> int:
    """The integer lower bound implied by a (possibly inexact) float lower bound."""
    return math.ceil(value - BOUND_TOL * max(1.0, abs(value)))


def int_bound(value: float) -> int:
    """``int(value)`` of a float lower bound, but never above the true integer bound it
    rounds: above 2^53 a float sum is off by some units (relative 1e-16 per operation),
    so the value is first lowered by a relative 1e-12 there."""
    if abs(value) < 2**53:
        return int(value)
    return int(value - abs(value) * 1e-12)


class Status(StrEnum):
    """``optimal`` only when proved; ``feasible``: a valid schedule, not proved optimal;
    ``infeasible``: proved to have none; ``unknown``: nothing found within the limits."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNKNOWN = "unknown"

    @property
    def has_schedule(self) -> bool:
        return self in (Status.OPTIMAL, Status.FEASIBLE)


STATUSES: tuple[str, ...] = tuple(s.value for s in Status)


@dataclass
class CheckReport:
    """The checker's verdict on one schedule for one instance.

    Metrics are None when some job has no completed last round. ``instance`` and
    ``schedule`` are the objects judged (kept for ``judged``, never serialised).
    """

    feasible: bool
    violations: list[str]
    counts: dict[str, int]
    objective: float | None = None
    weighted_flow_time: float | None = None
    avg_jct: float | None = None
    makespan: float | None = None
    completion: np.ndarray = field(default_factory=lambda: np.zeros(0))
    instance: Instance | None = field(default=None, repr=False, compare=False)
    schedule: Schedule | None = field(default=None, repr=False, compare=False)

    def judged(self, instance: Instance, schedule: Schedule) -> bool:
        """Whether this report is about exactly these (immutable) objects."""
        return self.instance is instance and self.schedule is schedule

    def __getstate__(self) -> dict[str, Any]:
        # The verdict travels (e.g. from a portfolio's child process); the objects it
        # judged do not: the receiver ``rebind``s it to its own copies.
        return {**self.__dict__, "instance": None, "schedule": None}

    def rebind(self, instance: Instance, schedule: Schedule) -> CheckReport:
        """This verdict, received from another process that checked ``schedule`` for
        ``instance``, tied to the receiver's objects so that ``judged`` holds again."""
        self.instance, self.schedule = instance, schedule
        return self

    def to_json(self) -> dict[str, Any]:
        """The object ``hare-opt check --json`` prints (spec fields first)."""
        return {
            "feasible": self.feasible,
            "objective": self.objective,
            "violations": self.violations,
            "counts": self.counts,
            "weighted_flow_time": self.weighted_flow_time,
            "avg_jct": self.avg_jct,
            "makespan": self.makespan,
        }


@dataclass
class Result:
    """What a solver returns; the schedule file is its serialisation.

    ``objective`` is the schedule's total weighted completion time, ``math.inf`` when
    there is no schedule; ``lower_bound`` a proved bound on the optimum (or None);
    ``stats`` what the solve reports about itself (``Stats``: typed shared fields, the
    backend's own figures in its extras; a plain dict given here becomes one);
    ``report`` the checker's report once the result has been verified.
    """

    solver: str
    status: Status
    schedule: Schedule
    objective: float = math.inf
    lower_bound: float | None = None
    runtime_s: float = 0.0
    instance_name: str = ""
    stats: Stats = field(default_factory=Stats)
    report: CheckReport | None = field(default=None, repr=False, compare=False)

    if TYPE_CHECKING:  # what callers may pass: ``__setattr__`` makes stats a ``Stats``

        def __init__(
            self,
            solver: str,
            status: Status | str,
            schedule: Schedule,
            objective: float = math.inf,
            lower_bound: float | None = None,
            runtime_s: float = 0.0,
            instance_name: str = "",
            stats: Stats | Mapping[str, Any] | None = None,
            report: CheckReport | None = None,
        ) -> None: ...

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "status":  # always a Status, also when set from a string later
            try:
                value = Status(value)
            except ValueError:
                raise ScheduleError(f"status must be one of {STATUSES}, got {value!r}") from None
        elif name == "stats":
            value = Stats.of(value)
        object.__setattr__(self, name, value)

    @classmethod
    def checked(
        cls,
        solver: str,
        status: Status | str,
        report: CheckReport,
        *,
        lower_bound: float | None = None,
        runtime_s: float = 0.0,
        stats: Stats | dict[str, Any] | None = None,
    ) -> Result:
        """A result for the schedule a report judged, with the report's objective."""
        if report.schedule is None or report.instance is None or report.objective is None:
            raise ValueError("Result.checked needs a report on a complete schedule")
        return cls(
            solver,
            Status(status),
            report.schedule,
            report.objective,
            lower_bound,
            runtime_s,
            report.instance.name,
            Stats.of(stats).copy(),
            report,
        )

    @property
    def gap(self) -> float | None:
        """Relative gap (objective - bound) / objective; 0 when proved optimal."""
        if self.status == Status.OPTIMAL:
            return 0.0
        if not math.isfinite(self.objective) or self.lower_bound is None:
            return None
        if self.objective == 0:
            return 0.0
        return max(0.0, (self.objective - self.lower_bound) / abs(self.objective))

    def summary(self) -> dict[str, Any]:
        """The fields ``hare-opt solve --json`` prints."""

        def num(x: float | None) -> float | None:
            if x is None or (isinstance(x, float) and not math.isfinite(x)):
                return None
            return int(x) if float(x).is_integer() else float(x)

        return {
            "status": str(self.status),
            "objective": num(self.objective),
            "lower_bound": num(self.lower_bound),
            "runtime_s": round(self.runtime_s, 4),
        }
