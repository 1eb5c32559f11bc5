"""What the simulator hands a policy at an event time, and the simulator's error."""

from __future__ import annotations

from dataclasses import dataclass, field

from hare_opt.model import HareOptError

#: SETTLE: internal (ends committed runs), sorts after every event at its time.
ARRIVE, FREE, BARRIER, WAKE, SETTLE = 0, 1, 2, 3, 4


class SimulationError(HareOptError, RuntimeError):
    """A policy broke a rule or left work undone; the message names the job or GPU."""


@dataclass
class Events:
    """What happened at the current time, handed to the policy."""

    time: int
    arrived: list[int] = field(default_factory=list)    # jobs released now
    freed: list[int] = field(default_factory=list)      # GPUs whose task ended now
    opened: list[int] = field(default_factory=list)     # jobs whose next round may start now
    finished: list[int] = field(default_factory=list)   # jobs completed now
    woken: bool = False
