"""``simulate`` builds a policy and its planner once: get_policy's option check and the
planner check in the policy's constructor do not build spares that a run throws away."""

from __future__ import annotations

import pytest

from hare_opt.generators import random_instance
from hare_opt.sim import policy_names, simulate
from hare_opt.sim.policies import plan as plan_module
from hare_opt.sim.policy import POLICIES

FOLLOWERS = [
    p for p in policy_names(mode="relaxed") if issubclass(POLICIES.load(p), plan_module.PlanPolicy)
]


@pytest.fixture
def builds(monkeypatch):
    """Counts of policy objects and planners built, by name."""
    counts = {"policy": 0, "planner": 0}
    init, get_planner = plan_module.PlanPolicy.__init__, plan_module.get_planner

    def counted_init(self, **options):
        counts["policy"] += 1
        init(self, **options)

    def counted_planner(*args, **kwargs):
        counts["planner"] += 1
        return get_planner(*args, **kwargs)

    monkeypatch.setattr(plan_module.PlanPolicy, "__init__", counted_init)
    monkeypatch.setattr(plan_module, "get_planner", counted_planner)
    return counts


@pytest.mark.parametrize("engine", ["python", "compiled"])
@pytest.mark.parametrize("policy", FOLLOWERS)
def test_simulate_builds_the_policy_and_its_planner_once(builds, policy, engine):
    assert FOLLOWERS  # the registry has plan followers
    run = simulate(random_instance(0, n_jobs=3, n_gpus=2), policy, engine=engine)
    assert run.engine == engine
    assert builds == {"policy": 1, "planner": 1}


@pytest.mark.parametrize("replan", ["arrival", "lazy"])
def test_a_policy_object_run_twice_plans_each_run_with_a_fresh_planner(builds, replan):
    inst = random_instance(1, n_jobs=4, n_gpus=2)
    pol = plan_module.HarePolicy(replan=replan)
    first, second = simulate(inst, pol), simulate(inst, pol)
    assert builds == {"policy": 1, "planner": 2}  # the second run's planner is its own
    assert first.metrics["objective"] == second.metrics["objective"]
    assert first.result.stats["plans"] == second.result.stats["plans"]
