"""Run a policy on an instance: the engine its ``PolicySpec`` names, or the reference.

``engine.reference.Simulator`` is the definition (the rules and the event loop);
a registered policy whose spec names a compiled core (``PolicySpec.engine``) runs
there when it hands one a state (``kernel_state()`` after ``reset``: the built-in
classes do, a subclass that changes a transcribed rule does not). Every engine gives
the same schedules; ``engine="python"`` insists on the reference loop, ``"compiled"``
on a core.
"""

from __future__ import annotations

import time

from hare_opt.model import Instance, OptionError
from hare_opt.sim.engine import compiled, relaxed
from hare_opt.sim.engine.reference import Policy, Simulator
from hare_opt.sim.engine.state import GangKernel, RelaxedKernel
from hare_opt.sim.policy import compiled_policies, engine_of, get_policy
from hare_opt.sim.results import SimResult
from hare_opt.sim.semantics import DEFAULT_SEMANTICS

__all__ = ["ENGINES", "run", "simulate"]

#: ``auto``: the compiled core for the policies it has, else the reference.
ENGINES = ("auto", "compiled", "python")


def run(sim: Simulator, progress=None, engine: str = "auto") -> SimResult:
    """Simulate ``sim`` to the end; ``engine``: ``python`` (the reference loop),
    ``compiled`` (the core the policy's spec names) or ``auto`` (compiled where it exists)."""
    if engine not in ENGINES:
        raise OptionError(
            f"must be one of {', '.join(ENGINES)}, got {engine!r}",
            option="engine",
            owner="simulate",
        )
    core = engine_of(sim.policy) if engine != "python" else None
    if core is None and engine != "compiled":
        return sim.run(progress)
    t0 = time.perf_counter()
    sim.policy.reset(sim)  # the reference's checks and per-instance tables
    make = getattr(sim.policy, "kernel_state", None)
    ks = make(sim) if core is not None and make is not None else None
    if core == "gang" and isinstance(ks, GangKernel):
        return compiled.run(sim, ks, progress, t0)
    if core == "relaxed" and isinstance(ks, RelaxedKernel):
        return relaxed.run(sim, ks, progress, t0)
    if engine == "compiled":
        raise OptionError(
            f"the compiled engine has no policy {sim.policy.name!r} "
            f"(it has {', '.join(compiled_policies())})",
            option="engine",
            owner="simulate",
        )
    return sim.loop(progress, t0)


def simulate(
    instance: Instance,
    policy: str | Policy,
    *,
    progress=None,
    max_events: int | None = None,
    max_time: int | None = None,
    semantics: str = DEFAULT_SEMANTICS,
    engine: str = "auto",
    **options,
) -> SimResult:
    """Run ``policy`` (a name or an object) on ``instance``; the schedule is checked.

    ``semantics``: ``lease`` (gang policies hold GPUs for their lease) or ``per-round``
    (docs/simulator.md); relaxed policies run alike under both. ``engine``: ``auto``
    runs the built-in policies compiled (the same schedules as the ``python`` reference)."""
    pol = get_policy(policy, **options) if isinstance(policy, str) else policy
    sim = Simulator(instance, pol, max_events=max_events, max_time=max_time, semantics=semantics)
    return run(sim, progress, engine)
