"""Errors raised on bad input.

Every error names the offending field and, where there is one, the job or GPU,
so a user can fix a file without reading a traceback.
"""

from __future__ import annotations


class HareOptError(Exception):
    """Base class of all errors hare_opt raises on purpose."""


class InstanceError(HareOptError, ValueError):
    """An instance (or a file that should hold one) breaks a rule of the spec."""

    def __init__(self, message: str, *, field: str | None = None, owner: str | None = None):
        self.field = field
        self.owner = owner
        parts = []
        if owner:
            parts.append(owner)
        if field:
            parts.append(f"field '{field}'")
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ScheduleError(HareOptError, ValueError):
    """A schedule file is malformed (a feasibility problem is a violation, not this)."""


class OptionError(HareOptError, ValueError):
    """An option (of a solver, a policy, a generator or a command) has a bad name or value.

    The message names the option and its owner, e.g. ``solver 'bnb': option 'memo_mb':
    must be a number >= 0, got -1``.
    """

    def __init__(self, message: str, *, option: str | None = None, owner: str | None = None):
        self.option = option
        self.owner = owner
        self.reason = message  # without the owner and option: for re-raising under another
        parts = [p for p in (owner, f"option '{option}'" if option else None) if p]
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class SolverError(HareOptError, RuntimeError):
    """A solver produced something wrong, or cannot take this instance (named in the message)."""
