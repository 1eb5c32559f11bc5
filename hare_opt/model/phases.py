"""Phases of a solve's clock: named shares of its time limit, each declared once.

Why: a backend that spends part of its limit on a start, a relaxation or a quick member
needs a rule for how much; declared by name here (``declare``, by the backend's own
module) the rules are listed in one registry (``PHASES``; docs/contributing.md, "Run
control", lists them), a run enters a phase by name (``Run.phase``), and the seconds each
phase took come back in the result (``Stats.phase_s``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from hare_opt.model.errors import OptionError
from hare_opt.util.registry import Registry


@dataclass(frozen=True)
class Phase:
    """``share`` of the time left when the phase starts (of the whole limit with
    ``of_limit``), at most ``cap_s`` seconds; without a time limit, ``cap_s`` alone
    (None: as long as the phase takes). Never under ``floor_s``."""

    name: str
    share: float
    cap_s: float | None = None
    floor_s: float = 1e-3
    of_limit: bool = False
    doc: str = ""

    def __post_init__(self) -> None:
        if not 0.0 < self.share <= 1.0:
            raise OptionError(
                f"must be in (0, 1], got {self.share!r}", option="share", owner=self.name
            )
        for what, v in (("cap_s", self.cap_s), ("floor_s", self.floor_s)):
            if v is not None and not (math.isfinite(v) and v > 0):
                raise OptionError(
                    f"must be a number of seconds > 0, got {v!r}", option=what, owner=self.name
                )

    @property
    def target(self) -> Phase:
        return self

    def limit(
        self,
        limit: float | None,
        left: float | None,
        *,
        share: float | None = None,
        cap: float | None | Literal["declared"] = "declared",
    ) -> float | None:
        """Seconds for the phase in a run with ``limit`` and ``left`` seconds (None: no
        limit). ``share`` and ``cap`` replace the declared ones where a call's share is an
        option of its own (CP-SAT's ``relax_setups``)."""
        base = limit if self.of_limit else left
        s = self.share if share is None else share
        c = self.cap_s if cap == "declared" else cap
        if base is None:
            return c
        out = s * base if c is None else min(c, s * base)
        return max(out, self.floor_s)


PHASES: Registry[Phase] = Registry(
    "phase", lambda text: OptionError(text, option="phase", owner="run")
)


def declare(
    name: str,
    share: float,
    *,
    cap_s: float | None = None,
    floor_s: float = 1e-3,
    of_limit: bool = False,
    doc: str = "",
) -> Phase:
    """Declare (or re-declare) a phase; returns it for the backend to enter."""
    return PHASES.add(Phase(name, share, cap_s, floor_s, of_limit, doc))
