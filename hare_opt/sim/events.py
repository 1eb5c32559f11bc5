"""What the simulator hands a policy at an event time, and the simulator's error."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hare_opt.model import HareOptError, Instance

#: Event kinds; events at one time are handled in (kind, index) order.
ARRIVE, FREE, BARRIER, WAKE = 0, 1, 2, 3


class SimulationError(HareOptError, RuntimeError):
    """A policy broke a rule or left work undone; the message names the job or GPU."""


def waiting_forever(
    inst: Instance, policy: str, finished: np.ndarray, rounds: np.ndarray, why: str, now: int
) -> SimulationError:
    """The error of a run that cannot finish: the first unfinished jobs, their round and
    arrival, and ``why`` (the guard that stopped it)."""
    waiting = np.flatnonzero(~np.asarray(finished, dtype=bool)).tolist()
    names = ", ".join(
        f"{inst.jobs[j].id!r} (round {int(rounds[j])} of "
        f"{int(inst.rounds[j])}, arrived {int(inst.release[j])})"
        for j in waiting[:5]
    )
    more = f" and {len(waiting) - 5} more" if len(waiting) > 5 else ""
    return SimulationError(
        f"policy {policy!r} left job {names}{more} waiting forever: {why} at time {now}"
    )


@dataclass
class Events:
    """What happened at the current time, handed to the policy."""

    time: int
    arrived: list[int] = field(default_factory=list)  # jobs released now
    freed: list[int] = field(default_factory=list)  # GPUs whose task ended now
    opened: list[int] = field(default_factory=list)  # jobs whose next round may start now
    finished: list[int] = field(default_factory=list)  # jobs completed now
    woken: bool = False
