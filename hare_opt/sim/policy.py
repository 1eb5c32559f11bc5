"""The policy extension point: one small Protocol and a registry of names.

A policy is any object with ``name``, ``mode`` (``"relaxed"`` or ``"gang"``),
``reset(sim)`` and ``decide(sim, events)``. At every event time the simulator
calls ``decide``; the policy starts work through ``sim.start`` (one task) or
``sim.start_gang`` (a whole round), and may ``sim.wake_at`` a later time. The
simulator enforces every rule, so a policy cannot produce an invalid schedule;
it can only leave work undone, which the simulator reports as an error.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hare_opt.model import HareOptError

if TYPE_CHECKING:
    from hare_opt.sim.engine import Events, Simulator

Mode = Literal["relaxed", "gang"]


class Policy(Protocol):
    name: str
    mode: Mode

    def reset(self, sim: Simulator) -> None:
        """Called once before the first event (pre-compute per-instance tables here)."""

    def decide(self, sim: Simulator, events: Events) -> None:
        """Start work on idle GPUs at ``events.time``."""


class UnknownPolicyError(HareOptError, ValueError):
    pass


# name -> "module:class"; imported on first use.
_REGISTRY: dict[str, str] = {
    "hare": "hare_opt.sim.policies.plan:HarePolicy",
    "hare-paper": "hare_opt.sim.policies.plan:HarePaperPolicy",
    "sched-homo": "hare_opt.sim.policies.plan:SchedHomoPolicy",
    "hlas": "hare_opt.sim.policies.hlas:HLASPolicy",
    "gavel-fifo": "hare_opt.sim.policies.gang:GavelFifoPolicy",
    "srtf": "hare_opt.sim.policies.gang:SRTFPolicy",
    "tiresias": "hare_opt.sim.policies.tiresias:TiresiasPolicy",
    "allox": "hare_opt.sim.policies.allox:AlloXPolicy",
    "gavel-las": "hare_opt.sim.policies.gavel_las:GavelLASPolicy",
}


def register_policy(name: str, target: str | type) -> None:
    """Add a policy class (or ``"module:Class"``) under ``name``."""
    _REGISTRY[name] = target  # type: ignore[assignment]


def policy_names() -> list[str]:
    return list(_REGISTRY)


def get_policy(name: str, **options: Any) -> Policy:
    """A fresh policy object; ``options`` go to its constructor."""
    target = _REGISTRY.get(name)
    if target is None:
        raise UnknownPolicyError(f"policy {name!r} is unknown; choose from "
                                 f"{', '.join(_REGISTRY)}")
    if isinstance(target, str):
        module, cls = target.split(":")
        target = getattr(importlib.import_module(module), cls)
    return target(**options)
