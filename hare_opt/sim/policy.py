"""The policy extension point: the registry of policy specs, and policies' options.

A policy is any object with ``name``, ``mode`` (``"relaxed"`` or ``"gang"``),
``reset(sim)``, ``decide(sim, events)`` and ``stats()`` (the ``Policy`` Protocol,
defined with the reference loop it is the contract of, ``engine.reference``). At every
event time the simulator calls ``decide``; the policy starts work through
``sim.start`` (one task) or ``sim.start_gang`` (a whole round), and may
``sim.wake_at`` a later time. The simulator enforces every rule, so a policy cannot
produce an invalid schedule; it can only leave work undone, which the simulator
reports as an error.

What a policy *is* (its mode, whether it knows remaining work, whether its gang
rounds stay on one GPU type, whether it is cheap enough for every test workload,
which compiled core transcribes it) is its ``PolicySpec``; the tests parametrise over
the registry, so a registered policy is cross-checked with no test edit.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from hare_opt.model import HareOptError, OptionError
from hare_opt.model.options import Options, UnknownOptionError, parse_spec
from hare_opt.sim.engine.reference import Policy
from hare_opt.sim.semantics import Mode
from hare_opt.util.registry import Registry, resolve

__all__ = [
    "POLICIES",
    "Engine",
    "PolicyOptions",
    "PolicySpec",
    "UnknownPolicyError",
    "compiled_policies",
    "engine_of",
    "get_policy",
    "parse_policy_spec",
    "policy_mode",
    "policy_names",
    "register_policy",
]

#: The compiled cores (``hare_opt.sim.engine``): ``gang`` (``compiled.py``) and
#: ``relaxed`` (``relaxed.py``).
Engine = Literal["gang", "relaxed"]


@dataclass(frozen=True)
class PolicyOptions(Options):
    """Base of a policy's options (``Options``: names, types and ranges checked before a
    run starts). A policy class names its own subclass as ``Options``."""

    owner: ClassVar[str] = "policy"


def parse_policy_options(cls: type, name: str, raw: dict[str, Any]) -> Any:
    """``raw`` checked against ``cls.Options`` (or, for a class without one, against its
    constructor's keyword parameters): a named one-line error for a bad name or value."""
    owner = f"policy {name!r}"
    spec = getattr(cls, "Options", None)
    if spec is not None:
        return spec.parse(raw, owner=owner)
    params = inspect.signature(cls).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(raw) - set(params))
        if unknown:
            raise UnknownOptionError(
                f"has no option {unknown[0]!r}; its options: {', '.join(params) or 'none'}",
                owner=owner,
            )
    return raw


class UnknownPolicyError(HareOptError, ValueError):
    pass


@dataclass(frozen=True)
class PolicySpec:
    """``target``: the policy class (or ``"module:Class"``); ``clairvoyant``: it reads
    remaining work; ``single_type``: every job must fit on the GPUs of one type, and
    its gang rounds use one type (``gavel-fifo``'s ``per-round`` reading excepted); ``fast``:
    cheap enough to run at every event of the test workloads; ``engine``: the compiled
    core that transcribes its rules (None: the reference loop only). A policy the spec
    gives a core runs there when it hands it a state (``kernel_state()``)."""

    name: str
    target: str | type
    mode: Mode
    clairvoyant: bool = False
    single_type: bool = False
    fast: bool = True
    description: str = ""
    engine: Engine | None = None

    def __post_init__(self) -> None:
        if self.engine not in (None, "gang", "relaxed"):
            raise UnknownPolicyError(
                f"policy {self.name!r}: engine must be 'gang', "
                f"'relaxed' or None, got {self.engine!r}"
            )
        if self.engine is not None and self.engine != self.mode:
            raise UnknownPolicyError(
                f"policy {self.name!r}: a {self.mode} policy cannot run in the {self.engine} core"
            )


POLICIES: Registry[PolicySpec] = Registry("policy", UnknownPolicyError)

for _spec in (
    PolicySpec(
        "hare",
        "hare_opt.sim.policies.plan:HarePolicy",
        "relaxed",
        clairvoyant=True,
        engine="relaxed",
        description="re-plans with our offline heuristic hare",
    ),
    PolicySpec(
        "hare-paper",
        "hare_opt.sim.policies.plan:HarePaperPolicy",
        "relaxed",
        clairvoyant=True,
        fast=False,
        engine="relaxed",
        description="re-plans with the paper's Algorithm 1",
    ),
    PolicySpec(
        "sched-homo",
        "hare_opt.sim.policies.plan:SchedHomoPolicy",
        "relaxed",
        clairvoyant=True,
        engine="relaxed",
        description="the paper's Sched_Homo: heterogeneity-blind",
    ),
    PolicySpec(
        "hlas",
        "hare_opt.sim.policies.hlas:HLASPolicy",
        "relaxed",
        engine="relaxed",
        description="heterogeneity-aware least attained service (ours)",
    ),
    PolicySpec(
        "gavel-fifo",
        "hare_opt.sim.policies.gang:GavelFifoPolicy",
        "gang",
        single_type=True,
        engine="gang",
        description="Gavel FIFO: arrival order, fastest type with room, Gavel's rounds",
    ),
    PolicySpec(
        "srtf",
        "hare_opt.sim.policies.gang:SRTFPolicy",
        "gang",
        clairvoyant=True,
        engine="gang",
        description="shortest remaining time first, backfilling",
    ),
    PolicySpec(
        "tiresias",
        "hare_opt.sim.policies.tiresias:TiresiasPolicy",
        "gang",
        engine="gang",
        description="Tiresias 2D-LAS, discretised queues",
    ),
    PolicySpec(
        "allox",
        "hare_opt.sim.policies.allox:AlloXPolicy",
        "gang",
        clairvoyant=True,
        single_type=True,
        engine="gang",
        description="AlloX min-cost matching, one type per round",
    ),
    PolicySpec(
        "gavel-las",
        "hare_opt.sim.policies.gavel_las:GavelLASPolicy",
        "gang",
        single_type=True,
        engine="gang",
        description="Gavel max-min fairness LP, Gavel's rounds",
    ),
):
    POLICIES.add(_spec)


def register_policy(
    name: str, target: str | type, *, mode: Mode | None = None, **spec: Any
) -> PolicySpec:
    """Add a policy class (or ``"module:Class"``) under ``name``; ``mode`` defaults to the
    class's own ``mode`` attribute."""
    if mode is None:
        mode = getattr(resolve(target), "mode", None)
    if mode not in ("relaxed", "gang"):
        raise UnknownPolicyError(f"policy {name!r}: mode must be 'relaxed' or 'gang', got {mode!r}")
    return POLICIES.add(PolicySpec(name, target, mode, **spec))


def policy_names(*, mode: Mode | None = None, fast: bool | None = None) -> list[str]:
    return POLICIES.names(
        lambda s: (mode is None or s.mode == mode) and (fast is None or s.fast == fast)
    )


def compiled_policies(engine: Engine | None = None) -> list[str]:
    """Registered policies a compiled core runs (``engine``: that core's only)."""
    return POLICIES.names(lambda s: s.engine is not None and (engine is None or s.engine == engine))


def engine_of(policy: Policy) -> Engine | None:
    """The compiled core the spec registered under the policy's name names (a variant's
    name, ``"name:key=value"``, counts as its base's); None: the reference loop."""
    base = policy.name.split(":", 1)[0]
    return POLICIES.spec(base).engine if base in POLICIES else None


def policy_mode(name: str) -> Mode:
    """The mode of a registered policy, named alone or in a spec (``"name:key=value"``)."""
    return POLICIES.spec(name.split(":", 1)[0]).mode


def parse_policy_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``NAME`` or ``NAME:KEY=VALUE[,KEY=VALUE]`` (e.g. ``hare-paper:step3=start``) as the
    policy name and its options (``model.options.parse_spec``). A variant so named can run
    next to its default in one sweep."""
    try:
        return parse_spec(spec)
    except ValueError as exc:
        raise UnknownPolicyError(f"policy {spec!r}: {exc}") from None


def get_policy(name: str, **options: Any) -> Policy:
    """A fresh policy object; ``options`` are checked (names, types, ranges) and go to its
    constructor. ``name`` may carry options (``parse_policy_spec``); the policy is then
    labelled with the whole string."""
    base, named = parse_policy_spec(name)
    both = sorted(set(named) & set(options))
    if both:
        raise UnknownPolicyError(
            f"policy {name!r}: option {both[0]!r} given in the name and as an argument"
        )
    cls = POLICIES.load(base)
    merged = {**named, **options}
    try:  # a bad option fails here, by name, under the name the caller gave
        parse_policy_options(cls, name, merged)
        policy = cls(**merged)
    except OptionError as exc:
        if exc.owner == f"policy {name!r}":
            raise
        raise type(exc)(exc.reason, option=exc.option, owner=f"policy {name!r}") from None
    if named:
        policy.name = name
    return policy
