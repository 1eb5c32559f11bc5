"""What an online planner sees: the remaining work as an instance, and the running cluster.

Plan-following simulator policies re-plan the work left at events; the offline
scheduler behind them is a ``Planner``. An instance alone describes an empty cluster
at time 0, so a planner that can start from a running cluster receives its state as
a ``Warm``; one that cannot is given stand-in jobs for the busy GPUs instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from hare_opt.model.instance import Instance
from hare_opt.model.schedule import Schedule


@dataclass(frozen=True)
class Warm:
    """A cluster already running: the state an online planner starts from.

    A re-plan must start from busy GPUs, setups already paid and rounds partly
    started, or it counts running tasks twice and misjudges which GPUs are free.
    Job indices are the residual instance's; ``last[g] = -1`` means GPU g last ran
    no job of it.
    """

    free: list[int]  # per GPU: free from this time
    last: list[int]  # per GPU: job it ran last (no setup for it), or -1
    left: list[int]  # per job: tasks of its current round still to place
    carry: list[int]  # per job: max end + sync over that round's tasks already placed


class Planner(Protocol):
    """An offline scheduler behind a plan-following policy.

    ``warm``: whether ``plan`` accepts a running cluster; a planner without it gets
    ``None`` and an instance whose busy GPUs are stand-in jobs. The schedule holds
    the tasks the plan places: with a ``Warm``, only the tasks left (a partly started
    round's missing ones); otherwise every task of ``residual``.
    """

    name: str
    warm: bool

    def plan(self, residual: Instance, warm: Warm | None, deadline: float) -> Schedule:
        """A schedule of ``residual`` found by ``deadline`` (a ``time.perf_counter`` value)."""
        ...

    def stats(self) -> dict[str, Any]:
        """Figures accumulated over the plans made (reported with the simulation)."""
        ...
