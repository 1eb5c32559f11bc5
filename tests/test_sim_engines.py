"""A policy's spec names its compiled core; the policy hands the core one state object
(``kernel_state``), and a policy without one runs in the reference loop."""

from __future__ import annotations

import pytest

from hare_opt.generators import paper_instance
from hare_opt.sim import POLICIES, PolicySpec, UnknownPolicyError, simulate
from hare_opt.sim.engine.reference import Simulator
from hare_opt.sim.engine.state import GangKernel, RelaxedKernel
from hare_opt.sim.policies.gang import SRTFPolicy
from hare_opt.sim.policy import compiled_policies, engine_of, get_policy

STATE = {"gang": GangKernel, "relaxed": RelaxedKernel}


@pytest.mark.parametrize("name", compiled_policies())
def test_a_built_in_policy_hands_its_core_the_state_it_takes(name):
    inst = paper_instance(0, 4, "V100:2,K80:1", max_gpus=2)
    pol = get_policy(name)
    sim = Simulator(inst, pol)
    pol.reset(sim)
    core = engine_of(pol)
    assert core == POLICIES.spec(name).engine == pol.mode
    assert isinstance(pol.kernel_state(sim), STATE[core])  # type: ignore[attr-defined]


def test_a_subclass_that_changes_a_rule_hands_no_state_and_runs_in_the_reference():
    class LongestFirst(SRTFPolicy):
        def key(self, sim, job):
            return (-sim.remaining_rounds(job), job)

    inst = paper_instance(0, 4, "V100:2,K80:1", max_gpus=2)
    pol = LongestFirst()
    sim = Simulator(inst, pol)
    pol.reset(sim)
    assert engine_of(pol) == "gang" and pol.kernel_state(sim) is None
    assert simulate(inst, LongestFirst()).engine == "python"


def test_a_spec_names_a_core_of_its_own_mode_or_none():
    with pytest.raises(UnknownPolicyError, match="engine must be"):
        PolicySpec("x", "m:C", "gang", engine="fast")  # type: ignore[arg-type]
    with pytest.raises(UnknownPolicyError, match="relaxed policy cannot run in the gang"):
        PolicySpec("x", "m:C", "relaxed", engine="gang")
    assert PolicySpec("x", "m:C", "gang").engine is None


def test_the_cores_run_exactly_the_policies_whose_spec_names_them():
    assert set(compiled_policies("gang")) == {s.name for s in POLICIES if s.engine == "gang"}
    assert set(compiled_policies()) == set(compiled_policies("gang")) | set(
        compiled_policies("relaxed")
    )
