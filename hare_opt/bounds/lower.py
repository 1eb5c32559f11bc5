"""The bounds registry and ``lower_bound``, the best of them as an integer.

A bound is a function ``instance -> value`` with value <= OPT on every instance,
registered with a ``BoundSpec``: ``exact`` when it returns an exact number (an int or
a ``Fraction``, rounded up exactly), else a float from an LP solver (rounded with
``model.ceil_bound``, so a solver's tolerance never overstates it); ``cheap`` when it is
fast enough to run on every solve (the others only when asked for with ``lp=True``).
Tests parametrised over ``BOUNDS`` check every registered bound against proved optima.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from hare_opt.model import HareOptError, Instance, ceil_bound
from hare_opt.util.registry import Registry, resolve

BoundFn = Callable[[Instance], "int | float | Fraction | None"]


class UnknownBoundError(HareOptError, ValueError):
    pass


@dataclass(frozen=True)
class BoundSpec:
    """A lower bound: ``target`` is the function or its ``"module:attribute"`` path."""

    name: str
    target: str | BoundFn
    exact: bool = True
    cheap: bool = True
    description: str = ""


BOUNDS: Registry[BoundSpec] = Registry("bound", UnknownBoundError)


def register_bound(spec: BoundSpec) -> BoundSpec:
    """Add (or replace) a bound; ``lower_bound`` and the bound tests then use it."""
    return BOUNDS.add(spec)


def lp_of_guarantee_plan(inst: Instance) -> float | None:
    """The LP bound with the guarantee plan's objective as its upper bound (None: no LP
    optimum in its time)."""
    from hare_opt.bounds.guarantee import guarantee_plan
    from hare_opt.bounds.lp import lp_bound

    return lp_bound(inst, guarantee_plan(inst)[1])


for _spec in (
    BoundSpec(
        "critical_path",
        "hare_opt.bounds.combinatorial:critical_path_bound",
        description="every job alone on the idle cluster",
    ),
    BoundSpec(
        "load",
        "hare_opt.bounds.combinatorial:load_bound",
        description="the cluster as one fast machine (preemptive WSPT with releases)",
    ),
    BoundSpec(
        "geometric",
        "hare_opt.bounds.approx:geometric_bound",
        description="geometric intervals of the approximation argument",
    ),
    BoundSpec(
        "lp",
        lp_of_guarantee_plan,
        exact=False,
        cheap=False,
        description="time-interval LP relaxation (HiGHS)",
    ),
):
    register_bound(_spec)


def all_bounds(inst: Instance, *, lp: bool = True) -> dict[str, float]:
    """Each registered bound by name; ``lp`` False leaves out the ones not ``cheap``."""
    out = {}
    for spec in BOUNDS:
        if not (spec.cheap or lp):
            continue
        value = resolve(spec.target)(inst)
        if value is not None:
            out[spec.name] = float(value)
    return out


def _rounded(spec: BoundSpec, value: int | float | Fraction) -> int:
    return math.ceil(value) if spec.exact else ceil_bound(float(value))


def lower_bound(
    inst: Instance, *, lp: bool = True, bounds: dict[str, float] | None = None
) -> float:
    """The best bound, rounded up (objectives are integers); never above the optimum.

    Exact bounds round up exactly; float ones go through ``ceil_bound``. ``bounds``:
    ``all_bounds``'s output if already computed (its values are then rounded as their
    specs say; a name not registered counts as a float bound).
    """
    best = 0
    for spec in BOUNDS:
        if bounds is not None:
            value = bounds.get(spec.name)
        elif spec.cheap or lp:
            value = resolve(spec.target)(inst)
        else:
            continue
        if value is not None:
            best = max(best, _rounded(spec, value))
    if bounds is not None:
        for name, value in bounds.items():
            if name not in BOUNDS:
                best = max(best, ceil_bound(float(value)))
    return float(best)
