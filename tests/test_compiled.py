"""The compiled gang engine against the reference: the same executed schedules, task for
task, and the same counters, for every gang policy under both semantics."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import instances

from hare_opt.generators import paper_instance, random_instance
from hare_opt.model import OptionError
from hare_opt.sim import POLICIES as SIM_POLICIES
from hare_opt.sim import SimulationError, policy_names, simulate
from hare_opt.sim.policies.gang import SRTFPolicy
from hare_opt.sim.policies.hlas import HLASPolicy
from hare_opt.sim.policy import compiled_policies
from hare_opt.sim.semantics import SEMANTICS

GANG = tuple(
    p for p in policy_names(mode="gang") if str(SIM_POLICIES.spec(p).target).startswith("hare_opt.")
)  # built in
COUNTERS = (
    "events",
    "reserved_idle_time",
    "lease_idle_time",
    "leases",
    "switching_time",
    "total_weighted_jct",
    "objective",
)


def assert_same_run(inst, policy: str, semantics: str, **options) -> None:
    try:
        ref = simulate(inst, policy, semantics=semantics, engine="python", **options)
    except SimulationError as exc:
        with pytest.raises(SimulationError, match=re.escape(str(exc))):
            simulate(inst, policy, semantics=semantics, engine="compiled", **options)
        return
    fast = simulate(inst, policy, semantics=semantics, engine="compiled", **options)
    assert fast.engine == "compiled" and ref.engine == "python"
    assert fast.result.schedule.sorted() == ref.result.schedule.sorted()  # rows: any order
    for key in COUNTERS:
        assert fast.metrics[key] == ref.metrics[key], key
    assert fast.jobs.equals(ref.jobs)


def test_every_built_in_gang_policy_has_a_kernel():
    """The package's own gang policies; one a user registers runs in the reference
    engine (tests/test_registries.py registers one and runs this test with it)."""
    assert set(GANG) == set(compiled_policies("gang"))


@pytest.mark.parametrize("semantics", SEMANTICS)
@pytest.mark.parametrize("policy", GANG)
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=instances(max_jobs=5, max_gpus=4, max_rounds=6, max_tasks=30),
    lease=st.sampled_from([None, 1.0, 4.0, 360.0]),
    realloc=st.sampled_from([None, 0.0, 5.0]),
)
def test_compiled_engine_gives_the_reference_schedule(policy, semantics, inst, lease, realloc):
    """Random instances (time unit: seconds, so a lease of 1-4 s is a few rounds)."""
    extra = {"realloc": realloc} if policy == "gavel-las" else {}
    assert_same_run(inst, policy, semantics, lease=lease, **extra)


def workloads():
    """Testbed (compressed regime, Table 3 default switching), mixed switching (random
    setups, syncs, heterogeneity), a small heterogeneous cluster in the paper regime."""
    yield "testbed", paper_instance(1, 30, switching="default")
    yield (
        "mixed",
        random_instance(
            5,
            n_jobs=12,
            n_gpus=6,
            rounds=(1, 8),
            tasks_per_round=(1, 2),
            heterogeneity=1.5,
            release_spread=80,
            sync=(0, 4),
            switch_overhead=(0, 6),
            gpu_types=("A", "B", "C"),
        ),
    )
    yield (
        "small-paper",
        paper_instance(
            2,
            10,
            "V100:4,T4:2,K80:1,M60:1",
            regime="paper",
            rounds=(20, 200),
            mean_interarrival=0.5,
            max_gpus=2,
        ),
    )


@pytest.mark.parametrize("semantics", SEMANTICS)
@pytest.mark.parametrize(
    "name,inst", list(workloads()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_compiled_engine_on_workloads(name, inst, semantics):
    for policy in GANG:
        # leases of a few rounds, as well as each policy's own
        for lease in [{}, {"lease": 0.3 if name != "mixed" else 3.0}]:
            assert_same_run(inst, policy, semantics, **lease)


def test_engines_by_name():
    inst = paper_instance(0, 4, "V100:2,K80:1", max_gpus=2)

    class MyHLAS(HLASPolicy):  # its own classes: only the reference knows them
        def job_class(self, sim, job):
            return 0

    with pytest.raises(OptionError, match="compiled engine has no policy 'hlas'"):
        simulate(inst, MyHLAS(), engine="compiled")
    with pytest.raises(OptionError, match="option 'engine'"):
        simulate(inst, "srtf", engine="fast")

    class MySRTF(SRTFPolicy):  # its own keys: only the reference knows them
        def key(self, sim, job):
            return (-job,)

    assert simulate(inst, MySRTF()).engine == "python"
    assert simulate(inst, "srtf").engine == "compiled"
