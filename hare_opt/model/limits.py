"""What a run may cost: size limits checked before any work, and the signal a phase
raises when its time is up or it was asked to stop.

Why up front: a valid instance may hold 10^13 tasks; a solver that first tries to build
a model or a schedule for it hangs or dies of memory. Each solver states what it can
take and refuses anything larger at once, with the size and the limit in the message.
"""

from __future__ import annotations

from hare_opt.model.errors import HareOptError, SolverError

#: Most tasks any schedule may hold: one row per task in memory (about 100 bytes with
#: the checker's arrays), so 10^7 tasks take about a gigabyte.
MAX_TASKS = 10**7


class CapacityError(SolverError):
    """An instance beyond what a solver (or command) can handle; says the size and the limit."""


class OutOfTime(HareOptError):  # noqa: N818 - a signal between phases, not a failure
    """A phase ran out of time or was asked to stop (``Run.stop``): its caller returns the
    best schedule it already has. Never reaches a user."""


def fmt_count(n: int | float) -> str:
    """10^13 as ``1e+13``, small numbers as they are, with thousands separators between."""
    n = int(n)
    return f"{n:,}" if n < 10**9 else f"{n:.3g}"


def check_size(
    what: str,
    instance_name: str,
    size: int | float,
    limit: int | float,
    unit: str = "tasks",
    advice: str = "",
) -> None:
    """Raise ``CapacityError`` when ``size`` exceeds ``limit`` (both in ``unit``)."""
    if size > limit:
        raise CapacityError(
            f"{what}: instance {instance_name!r} has {fmt_count(size)} {unit}, "
            f"more than the {fmt_count(limit)} it handles" + (f"; {advice}" if advice else "")
        )
