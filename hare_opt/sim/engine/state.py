"""What a policy hands a compiled core: one typed state object per core.

A built-in policy whose rules a core transcribes returns its state from
``kernel_state()`` (after ``reset``): the per-instance tables the kernel reads and
the callbacks for the library solves the reference makes (an LP, an assignment, a
re-plan). A policy that returns None (a subclass that changes a transcribed rule)
runs in the reference loop. The cores read nothing else of a policy, so a rule lives
in the policy and the kernel that transcribes it, and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from hare_opt.sim.engine.plans import PlanRuns

#: The gang rules ``kernel.py`` transcribes.
GangRule = Literal["gavel-fifo", "srtf", "tiresias", "allox", "gavel-las"]
#: The relaxed rules ``relaxed_kernel.py`` transcribes.
RelaxedRule = Literal["plan", "hlas"]


@dataclass
class RoundState:
    """What a Gavel round decision reads from an engine (arrays indexed by job / GPU)."""

    now: int
    arrived: np.ndarray  # (N,) bool
    finished: np.ndarray  # (N,) bool
    barrier: np.ndarray  # (N,) a job's last barrier: where its last lease ended
    idle: np.ndarray  # (M,) bool: neither processing nor held by a lease


#: A round decision: the (job, GPUs) leases to start.
RoundDecision = Callable[[RoundState], "list[tuple[int, np.ndarray]]"]


@dataclass(frozen=True)
class GangKernel:
    """A gang policy's state for ``compiled.py``. ``fits``: (N, T) a round fits on one
    type (single-type policies); ``round_span``: srtf's (N,) round time; ``limits``:
    Tiresias's queue thresholds; ``realloc``: gavel-las's re-solve gap (no rounds);
    ``rounds``: Gavel's round decision (lease rounds); ``allocation``: gavel-las's LP
    over the active jobs; ``pairs``: AlloX's assignment of the waiting jobs (given
    them and the rounds left per job)."""

    rule: GangRule
    fits: np.ndarray | None = None
    round_span: np.ndarray | None = None
    limits: np.ndarray | None = None
    realloc: int = 0
    rounds: RoundDecision | None = None
    allocation: Callable[[list[int]], np.ndarray] | None = None
    pairs: Callable[[np.ndarray, np.ndarray], list[tuple[int, int]]] | None = None

    def __post_init__(self) -> None:
        needs = {
            "allox": ("fits", "pairs"),
            "gavel-las": ("fits",),
            "srtf": ("round_span",),
            "tiresias": ("limits",),
        }.get(self.rule, ())
        missing = [f for f in needs if getattr(self, f) is None]
        if missing:
            raise ValueError(f"gang kernel {self.rule!r} needs {', '.join(missing)}")
        if self.rule == "gavel-las" and self.rounds is None and self.allocation is None:
            raise ValueError("gang kernel 'gavel-las' needs rounds or allocation")


@dataclass(frozen=True)
class RelaxedKernel:
    """A relaxed policy's state for ``relaxed.py``. Plan followers: ``arrival``
    (re-plan at arrivals, else lazily), ``conserving`` (work-conserving follow),
    ``gap``, ``water``, ``last_plan`` (the re-plan triggers' initial values),
    ``planned_until`` ((N,) rounds planned so far, the policy's own array, which its
    re-plan updates) and ``replan`` (the policy's re-plan, handed a view of the loop
    with the ``inst``, ``now``, ``active`` and ``state`` a ``Simulator`` has: the plan,
    and the time it counts as made for the next re-plan's gap).
    hlas: ``quantum`` (its service unit)."""

    rule: RelaxedRule
    arrival: bool = False
    conserving: bool = False
    gap: int = 0
    water: int = 0
    last_plan: int = 0
    planned_until: np.ndarray | None = None
    replan: Callable[[Any], tuple[PlanRuns, int]] | None = None
    quantum: float = 1.0

    def __post_init__(self) -> None:
        if self.rule == "plan" and (self.planned_until is None or self.replan is None):
            raise ValueError("relaxed kernel 'plan' needs planned_until and replan")


def keeps_rules(obj: object, base: type, methods: tuple[str, ...]) -> bool:
    """Whether ``obj`` is a ``base`` whose class keeps ``base``'s ``methods`` (the ones
    a kernel transcribes); a subclass overriding one runs in the reference loop."""
    cls = type(obj)
    return isinstance(obj, base) and all(getattr(cls, m) is getattr(base, m) for m in methods)
