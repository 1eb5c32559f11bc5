"""The compiled engine for relaxed policies (plan followers, hlas) against the reference:
the same executed schedules, task for task, and the same counters."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import instances

from hare_opt.generators import paper_instance, random_instance
from hare_opt.model import GPU, Instance, Job
from hare_opt.sim import POLICIES as SIM_POLICIES
from hare_opt.sim import SimulationError, policy_names, simulate
from hare_opt.sim.policies.plan import HarePolicy
from hare_opt.sim.policy import compiled_policies

RELAXED = tuple(policy_names(mode="relaxed"))


def built_in(name: str) -> bool:
    """Registered by the package itself (not by a user, as tests/test_registries.py's
    plugin does)."""
    return str(SIM_POLICIES.spec(name).target).startswith("hare_opt.")


COUNTERS = ("events", "reserved_idle_time", "switching_time", "total_weighted_jct", "objective")


def assert_same_run(inst, policy, **options) -> None:
    try:
        ref = simulate(inst, policy, engine="python", **options)
    except SimulationError as exc:
        with pytest.raises(SimulationError, match=re.escape(str(exc))):
            simulate(inst, policy, engine="compiled", **options)
        return
    fast = simulate(inst, policy, engine="compiled", **options)
    assert fast.engine == "compiled" and ref.engine == "python"
    assert fast.result.schedule.sorted() == ref.result.schedule.sorted()  # rows: any order
    for key in COUNTERS:
        assert fast.metrics[key] == ref.metrics[key], key
    assert fast.jobs.equals(ref.jobs)
    timeless = {
        k: v for k, v in ref.result.stats.items() if not (k.endswith("_s") or "_s_" in k)
    }  # timings differ
    assert {k: fast.result.stats[k] for k in timeless} == {**timeless, "engine": "compiled"}


def test_every_built_in_relaxed_policy_has_a_kernel():
    """The package's own relaxed policies; one a user registers runs in the reference
    engine (tests/test_registries.py registers one and runs this test with it)."""
    assert {p for p in RELAXED if built_in(p)} == set(compiled_policies("relaxed"))
    inst = random_instance(0, n_jobs=2, n_gpus=2)
    for name in (p for p in RELAXED if not built_in(p)):  # a user's: the reference engine
        assert simulate(inst, name).engine == "python"


#: Plan followers' rules beyond the defaults: re-plans only when queues run low (cut
#: plans), per-job horizons, a least gap, and a solver without warm starts (busy GPUs
#: as stand-in jobs, partly started rounds planned whole).
PLAN_OPTIONS = [
    {},
    {"replan": "lazy"},
    {"plan_tasks": 6},
    {"horizon_rounds": 2},
    {"replan": "lazy", "min_gap": 3, "low_water": 2},
    {"planner": "wspt"},
    {"planner": "eft", "plan_tasks": 5},
]


#: Plan followers under both rules (sched-homo's default is work-conserving), and hlas.
FOLLOWERS = [
    "hare",
    "sched-homo",
    "sched-homo:follow=strict",
    "hare:follow=work-conserving",
    "hlas",
]


@pytest.mark.parametrize("policy", FOLLOWERS)
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=instances(max_jobs=5, max_gpus=4, max_rounds=6, max_tasks=30),
    options=st.sampled_from(PLAN_OPTIONS),
)
def test_compiled_engine_gives_the_reference_schedule(policy, inst, options):
    assert_same_run(inst, policy, **(options if policy != "hlas" else {}))


def workloads():
    """Testbed (compressed regime, Table 3 default switching), mixed switching (random
    setups, per-type syncs, heterogeneity, ineligible types), a small heterogeneous
    cluster in the paper regime."""
    yield "testbed", paper_instance(1, 30, switching="default")
    yield (
        "mixed",
        random_instance(
            7,
            n_jobs=20,
            n_gpus=9,
            rounds=(1, 30),
            tasks_per_round=(1, 4),
            heterogeneity=1.0,
            release_spread=200,
            sync=(0, 6),
            sync_map=True,
            switch_overhead=(0, 6),
            gpu_types=("A", "B", "C"),
            eligibility=0.2,
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


@pytest.mark.parametrize(
    "name,inst", list(workloads()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_compiled_engine_on_workloads(name, inst):
    for policy in FOLLOWERS:
        assert_same_run(inst, policy)
    assert_same_run(inst, "hare", replan="lazy")


def test_hare_paper_runs_compiled():
    inst = paper_instance(
        2, 5, "V100:2,K80:1", regime="paper", rounds=(5, 20), mean_interarrival=0.5, max_gpus=2
    )
    assert_same_run(inst, "hare-paper")


def test_a_plan_on_a_gpu_the_job_cannot_use_is_refused(monkeypatch):
    make_plan = HarePolicy.make_plan

    def wrong(self, sim):  # a buggy planner: every task on the first GPU
        plan = make_plan(self, sim)
        plan.gtype[:] = 0
        plan.gpu[:] = 0
        return plan

    monkeypatch.setattr(HarePolicy, "make_plan", wrong)
    inst = Instance(
        (GPU("a", "A"), GPU("b", "B")),
        (Job("j0", {"A": 2, "B": 3}, rounds=2), Job("j1", {"B": 2}, rounds=2)),
    )
    for engine in ("python", "compiled"):
        with pytest.raises(SimulationError, match="job 'j1' cannot run on gpu 'a'"):
            simulate(inst, "hare", engine=engine)


def test_subclasses_run_compiled_unless_they_change_the_transcribed_rules():
    from hare_opt.sim.policies.hlas import HLASPolicy

    inst = random_instance(0, n_jobs=2, n_gpus=2)

    def supports(policy):  # the engine a run of it took
        return simulate(inst, policy).engine == "compiled"

    class Blind(HarePolicy):  # its own planning: called back from the loop
        def planning_instance(self, residual):
            return residual

    class Stubborn(HarePolicy):  # its own dispatch: only the reference has it
        def _dispatch(self, sim, work):
            return super()._dispatch(sim, work)

    class Fair(HLASPolicy):
        def job_class(self, sim, job):
            return 0

    assert supports(Blind()) and supports(HLASPolicy())
    assert not supports(Stubborn()) and not supports(Fair())
    inst = paper_instance(0, 4, "V100:2,K80:1", max_gpus=2)
    assert simulate(inst, Blind()).engine == "compiled"
    assert simulate(inst, Stubborn()).engine == "python"
