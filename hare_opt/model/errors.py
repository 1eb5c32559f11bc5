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
