"""Event-driven simulation of a GPU cluster under online scheduling policies.

>>> from hare_opt.sim import simulate
>>> run = simulate(instance, "hlas")            # doctest: +SKIP
>>> run.metrics["total_weighted_jct"], run.jobs.head()  # doctest: +SKIP

See docs/simulator.md for the event model, the policies and how to add one.
"""

from hare_opt.sim.events import Events, SimulationError
from hare_opt.sim.policy import (
    POLICIES,
    Policy,
    PolicySpec,
    UnknownPolicyError,
    get_policy,
    policy_names,
    register_policy,
)
from hare_opt.sim.results import SimResult, compare
from hare_opt.sim.simulator import Simulator, simulate

__all__ = [
    "POLICIES",
    "Events",
    "Policy",
    "PolicySpec",
    "SimResult",
    "SimulationError",
    "Simulator",
    "UnknownPolicyError",
    "compare",
    "get_policy",
    "policy_names",
    "register_policy",
    "simulate",
]
