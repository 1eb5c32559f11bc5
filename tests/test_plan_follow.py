"""How a plan follower executes its plan: strictly (queue heads in planned order and
time, a GPU held for a future barrier) or work-conserving (an idle GPU takes the first
entry of its type's queue that can start now)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from strategies import instances

from hare_opt.model import Model
from hare_opt.sim import simulate
from hare_opt.sim.policy import get_policy

WORK_CONSERVING = ("sched-homo", "hare:follow=work-conserving", "hare-paper:follow=work-conserving")


def heterogeneity_blind() -> Model:
    """A fast and a slow GPU; A (3 rounds of 2 tasks, 1 on F and 9 on S, weight 5) and a
    long B (8 on either, weight 1). sched-homo's homogenised plan has A's rounds every 6
    and B last; the real slow task pushes each barrier of A to 10, 20, 30."""
    m = Model()
    m.add_gpus("F", 1)
    m.add_gpus("S", 1)
    m.add_job(
        {"F": 1, "S": 9}, rounds=3, tasks_per_round=2, weight=5, sync_time={"F": 1, "S": 1}, id="A"
    )
    m.add_job({"F": 8, "S": 8}, rounds=1, tasks_per_round=1, weight=1, id="B")
    return m


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_a_strict_follower_holds_the_gpu_a_work_conserving_one_lends_it(engine):
    inst = heterogeneity_blind().build("blind")
    strict = simulate(inst, "sched-homo:follow=strict", engine=engine)
    ready = simulate(inst, "sched-homo", engine=engine)

    def starts(run, job):
        s = run.result.schedule
        return sorted(int(t) for j, g, t in zip(s.job, s.gpu, s.start) if j == job and g == "F-0")

    # strict: F waits from A's planned times (6, 12) for its real barriers (10, 20), then B
    assert starts(strict, "A") == [0, 10, 20] and starts(strict, "B") == [21]
    assert strict.metrics["reserved_idle_time"] == 14
    # work-conserving: B runs on F while A's round syncs; A is not delayed
    assert starts(ready, "A") == [0, 10, 20] and starts(ready, "B") == [1]
    assert ready.metrics["reserved_idle_time"] == 0
    jct = ready.jobs.set_index("job")["completion"]
    assert jct["B"] == 9 and jct["A"] == strict.jobs.set_index("job")["completion"]["A"]


@pytest.mark.parametrize("policy", WORK_CONSERVING)
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(max_jobs=5, max_gpus=4, max_rounds=6, max_tasks=30))
def test_a_work_conserving_follower_never_holds_a_gpu(policy, inst):
    run = simulate(inst, policy)  # the schedule is checked on the way out
    assert run.metrics["reserved_idle_time"] == 0


def test_followers_default_to_their_schedulers_rule():
    assert get_policy("sched-homo").conserving
    assert not get_policy("hare").conserving and not get_policy("hare-paper").conserving
    assert not get_policy("sched-homo:follow=strict").conserving
    assert get_policy("hare:follow=work-conserving").conserving
    with pytest.raises(ValueError, match="follow"):
        get_policy("hare:follow=lazy")


def test_sched_homo_holds_no_gpu_on_a_paper_regime_testbed():
    """The strict follower held the testbed's GPUs idle for barriers its homogenised plan
    expected sooner (43% of its processing time here); the work-conserving one holds none
    and, on this workload, finishes the jobs sooner."""
    from hare_opt.generators import TESTBED, paper_instance

    inst = paper_instance(3000, 16, TESTBED, regime="paper", rounds=(20, 400), mean_interarrival=20)
    strict = simulate(inst, "sched-homo:follow=strict").metrics
    ready = simulate(inst, "sched-homo").metrics
    assert strict["reserved_idle_share"] > 0.3 and ready["reserved_idle_share"] == 0
    assert ready["total_weighted_jct"] < 0.9 * strict["total_weighted_jct"]


def test_a_plan_made_with_stand_ins_is_mapped_onto_the_busy_gpus():
    """A planner without a warm start sees busy GPUs as stand-in jobs of their type, on
    whichever GPU of the type it likes; a strict follower runs the plan GPU by GPU, so
    the GPU given a stand-in must be the one that is busy that long (else a job planned
    on a free GPU would wait behind a busy one)."""
    from types import SimpleNamespace

    import numpy as np

    m = Model()
    m.add_gpus("A", 3)
    m.add_gpus("B", 1)
    m.add_job({"A": 2, "B": 2}, id="j")
    inst = m.build("stand-ins")
    pol = get_policy("hare", planner="wspt")
    pol.types = inst.gpu_type_index
    pol.of_type = [np.flatnonzero(pol.types == k) for k in range(len(inst.gpu_types))]
    # A-0 busy for 4 more, A-2 for 15; the residual has 2 real rows, the stand-ins follow
    sim = SimpleNamespace(now=5, inst=inst, state=SimpleNamespace(free=np.array([9, 0, 20, 0])))
    busy = pol._busy_groups(sim, 0)
    runs = np.zeros((4, 8), dtype=np.int64)
    runs[:, 0] = [2, 3, 0, 1]  # residual rows: stand-in (A, 4), stand-in (A, 15), 2 jobs
    runs[:, 3] = [1, 0, 2, 3]  # the plan's GPUs
    assert pol._onto_cluster(runs, 2, busy).tolist() == [0, 2, 1, 3]
