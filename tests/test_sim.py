"""The simulator: exactness against the offline heuristics, checked schedules, gang rounds,
guards against policies that never finish, results and metrics."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from strategies import instances

from hare_opt.checker import check
from hare_opt.heuristics.hare import DEFAULT_BUDGET
from hare_opt.heuristics.planning import PLAN_EVALS
from hare_opt.model import GPU, Instance, Job
from hare_opt.sim import POLICIES, SimulationError, policy_names, simulate
from hare_opt.sim.semantics import DEFAULT_SEMANTICS, SEMANTICS
from hare_opt.solvers import solve

# From the registry at collection time: a registered policy is checked with no test edit.
GANG = tuple(policy_names(mode="gang"))
FAST = tuple(policy_names(fast=True))  # hare-paper solves an integer program per re-plan


def at_zero(inst: Instance) -> Instance:
    return inst.with_jobs([replace(j, release=0, switch_overhead=0) for j in inst.jobs])


def gang_ok(inst: Instance, policy: str) -> bool:
    """Whether a gang policy can ever start every job (else it must say which cannot)."""
    k = inst.tasks_per_round
    if POLICIES.spec(policy).single_type:  # one GPU type per round
        return bool(np.all((inst.eligible_by_type & (k[:, None] <= inst.type_count)).any(1)))
    return bool(np.all(k <= inst.eligible.sum(axis=1)))


def assert_checked(inst: Instance, run) -> None:
    rep = check(inst, run.result.schedule)
    assert rep.feasible, rep.violations[:5]
    assert rep.objective == run.result.objective == run.metrics["objective"]


def assert_gang(inst: Instance, run) -> None:
    s = run.result.schedule
    rows: dict[tuple[str, int], list[int]] = {}
    for i, (j, r) in enumerate(zip(s.job, s.round)):
        rows.setdefault((j, int(r)), []).append(i)
    for (j, _), idx in rows.items():
        assert len(idx) == inst.tasks_per_round[inst.job_index(j)]
        assert len({int(s.start[i]) for i in idx}) == 1, "a gang round started at two times"
        assert len({s.gpu[i] for i in idx}) == len(idx), "a gang round shared a GPU"


def offline_twin(inst: Instance, solver: str, evals: int = PLAN_EVALS):
    """The offline run the policy's single plan must reproduce (hare: the planner's
    dispatchers and budget, and no polish: online plans are not polished)."""
    if solver != "hare":
        return solve(inst, solver)
    return solve(
        inst,
        "hare",
        improve=evals > 1,
        hold_forms=False,
        budget=min(evals * int(inst.rounds.sum()), DEFAULT_BUDGET),
        polish=False,
    )


@pytest.mark.parametrize("setups", [False, True], ids=["no-setups", "setups"])
@pytest.mark.parametrize(
    "solver,evals",
    [("hare", PLAN_EVALS), ("hare", 1), ("wspt", None), ("eft", None), ("fifo", None)],
)
@given(inst=instances(max_jobs=5, max_gpus=3, max_tasks=14))
def test_plan_policy_reproduces_offline_heuristic(solver, evals, setups, inst):
    """All jobs at time 0: one plan, executed exactly as the offline heuristic. With
    setups too: the plan is executed GPU by GPU, each setup when the plan starts it
    (ahead of the job's round when the plan does so); executed per GPU type, a plan
    paid setups it never priced."""
    inst = inst.with_jobs([replace(j, release=0) for j in inst.jobs]) if setups else at_zero(inst)
    run = simulate(inst, "hare", planner=solver, plan_evals=evals)
    assert run.result.objective == offline_twin(inst, solver, evals or 1).objective
    assert run.result.stats["plans"] == 1


def test_hare_policy_reproduces_offline_on_paper_like():
    from hare_opt.generators import paper_instance

    inst = at_zero(paper_instance(3, 25, switching="none"))
    assert simulate(inst, "hare").result.objective == offline_twin(inst, "hare").objective


@pytest.mark.parametrize(
    "policy,semantics",
    [  # relaxed policies ignore the semantics
        pytest.param(p, s, id=f"{p}-{s}" if p in GANG else p)
        for p in FAST
        for s in SEMANTICS
        if p in GANG or s == DEFAULT_SEMANTICS
    ],
)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(inst=instances(max_jobs=5, max_gpus=4, max_tasks=16))
def test_every_policy_gives_checked_schedules(policy, semantics, inst):
    if policy in GANG and not gang_ok(inst, policy):
        with pytest.raises(SimulationError, match="cannot run job"):
            simulate(inst, policy, semantics=semantics)
        return
    run = simulate(inst, policy, semantics=semantics)
    assert_checked(inst, run)
    if policy in GANG:
        assert_gang(inst, run)
    done = run.jobs
    assert (done["first_start"] >= done["arrival"]).all()
    assert (done["completion"] > done["first_start"]).all()


@settings(max_examples=8)
@given(inst=instances(max_jobs=3, max_gpus=2, max_tasks=6))
def test_hare_paper_policy_on_tiny_instances(inst):
    run = simulate(inst, "hare-paper")
    assert_checked(inst, run)


def test_hare_paper_plans_within_its_horizon():
    """Plans are cut to the horizon; the policy re-plans as it runs out, like hare."""
    from hare_opt.generators import paper_instance

    inst = paper_instance(0, 4, "V100:2,K80:1", rounds=(2, 4))
    run = simulate(inst, "hare-paper", plan_tasks=6)
    assert_checked(inst, run)
    assert run.result.stats["plan_tasks"] == 6 and run.result.stats["plans"] > 1
    assert run.result.stats["relaxations"] == run.result.stats["plans"]


@pytest.fixture(scope="module")
def paper_runs():
    from hare_opt.generators import paper_instance

    inst = paper_instance(1, 30, switching="default")
    return inst, {p: simulate(inst, p) for p in FAST}


def test_paper_like_workload_every_policy(paper_runs):
    inst, runs = paper_runs
    for name, run in runs.items():
        assert_checked(inst, run)
        if name in GANG:
            assert_gang(inst, run)
        m = run.metrics
        assert m["p50_jct"] <= m["p90_jct"] <= m["p99_jct"] <= m["makespan"]
        assert all(0 <= u <= 1 for u in m["utilisation"].values())
        assert m["switching_time"] > 0  # default switching: seconds per switch
        assert m["total_weighted_jct"] == int((run.jobs.weight * run.jobs.jct).sum())


def test_runs_are_deterministic(paper_runs):
    inst, runs = paper_runs
    for name in FAST:
        again = simulate(inst, name)
        assert again.jobs.equals(runs[name].jobs)
        assert again.result.schedule == runs[name].result.schedule


def test_records_csv_and_cdf(paper_runs, tmp_path):
    _, runs = paper_runs
    run = runs["hlas"]
    run.to_csv(tmp_path / "jobs.csv")
    import pandas as pd

    back = pd.read_csv(tmp_path / "jobs.csv")
    assert list(back.columns)[:6] == [
        "policy",
        "job",
        "weight",
        "arrival",
        "first_start",
        "completion",
    ]
    assert (back["jct"] == back["completion"] - back["arrival"]).all()
    cdf = run.jct_cdf()
    assert cdf["jct"].is_monotonic_increasing and cdf["fraction"].iloc[-1] == 1.0


# --- policies that misbehave --------------------------------------------------------
class Idle:
    """Never starts anything."""

    name, mode = "idle", "relaxed"

    def reset(self, sim):
        pass

    def decide(self, sim, events):
        pass


class Ticker(Idle):
    """Wakes itself up forever without starting anything."""

    name = "ticker"

    def decide(self, sim, events):
        sim.wake_at(sim.now + 1)


class Hasty(Idle):
    """Starts the same GPU twice at one time."""

    name = "hasty"

    def decide(self, sim, events):
        for j in events.arrived:
            sim.start(j, 0)


def tiny() -> Instance:
    gpus = (GPU("g0", "A"), GPU("g1", "B"))
    jobs = (
        Job("first", {"A": 3, "B": 5}, rounds=2, tasks_per_round=2),
        Job("late", {"B": 2}, release=4),
    )
    return Instance(gpus, jobs, "tiny")


@pytest.mark.parametrize("policy", [Idle(), Ticker()])
def test_a_policy_that_never_finishes_is_an_error_naming_the_job(policy):
    with pytest.raises(SimulationError, match="'first'.*waiting forever"):
        simulate(tiny(), policy, max_events=10_000)


def test_rule_violations_are_errors():
    inst = tiny().with_jobs([Job("a", {"A": 3}), Job("b", {"A": 3})])
    with pytest.raises(SimulationError, match="gpu 'g0' is busy"):
        simulate(inst, Hasty())
    with pytest.raises(SimulationError, match="cannot run on gpu 'g1'"):
        simulate(
            tiny().with_jobs([Job("a", {"A": 3})]),
            type(
                "H1",
                (Hasty,),
                {"decide": lambda self, sim, ev: [sim.start(j, 1) for j in ev.arrived]},
            )(),
        )


def test_gang_rounds_wait_for_enough_gpus():
    run = simulate(tiny(), "srtf")  # "first" needs both GPUs, of two types
    assert_gang(tiny(), run)
    s = run.result.schedule
    first = [int(t) for j, t in zip(s.job, s.start) if j == "first"]
    assert len(first) == 4 and sorted(first)[:2] == [0, 0]


def test_unknown_policy_names_the_choices():
    with pytest.raises(ValueError, match="unknown; choose one of"):
        simulate(tiny(), "nope")


@pytest.mark.parametrize("replan", ["arrival", "lazy"])
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(max_jobs=5, max_gpus=3, max_tasks=16))
def test_hare_plans_exactly_the_work_left(replan, inst):
    """A re-plan starts from the running cluster: the queues hold each arrived job's
    remaining tasks once, a partly started round only its missing tasks (lazy plans,
    cut to 3 tasks here, hold at most that; an arrival plan with an arrival to come holds
    the tasks that start before it, ``test_planner_cut_in_time_is_the_full_plan_before``)."""
    from hare_opt.sim.policies.plan import HarePolicy

    class Probe(HarePolicy):
        def _replan(self, sim):
            super()._replan(sim)
            queued = np.zeros(sim.inst.num_jobs, dtype=np.int64)
            for q in self.queues:
                for _, j, _ in q:
                    queued[j] += 1
            st, k = sim.state, sim.inst.tasks_per_round
            left = (sim.inst.rounds - st.round) * k - st.placed
            active = sorted(sim.active)
            if replan == "arrival" and self._until(sim) is None:
                assert queued[active].tolist() == left[active].tolist()
            assert (queued[active] <= left[active]).all()
            self.checks += 1

    probe = Probe(replan=replan, plan_tasks=3 if replan == "lazy" else None)
    probe.checks = 0
    run = simulate(inst, probe)
    assert_checked(inst, run)
    assert probe.checks == run.result.stats["plans"] >= 1


@pytest.mark.parametrize("evals", [1, PLAN_EVALS])
@pytest.mark.parametrize("engine", ["auto", "python"])
def test_planner_cut_in_time_is_the_full_plan_before(evals, engine, monkeypatch):
    """hare's online plans hold only what can start before the next arrival
    (``HarePlanner.cuts_in_time``; with one schedule a plan, its dispatch stops there):
    the executed schedule is the full plans' one, and the plans hold fewer tasks."""
    from hare_opt.generators import paper_instance
    from hare_opt.heuristics.planning import HarePlanner
    from hare_opt.sim.policies import plan as plan_module

    inst = paper_instance(
        3, 8, "V100:3,T4:2", regime="paper", rounds=(30, 80), max_gpus=2, mean_interarrival=0.5
    )
    queued: list[int] = []
    make_plan = plan_module.PlanPolicy.make_plan

    def counted(self, sim):
        runs = make_plan(self, sim)
        queued.append(runs.tasks)
        return runs

    monkeypatch.setattr(plan_module.PlanPolicy, "make_plan", counted)
    cut = simulate(inst, "hare", plan_evals=evals, engine=engine)
    cut_tasks, queued[:] = sum(queued), []
    monkeypatch.setattr(HarePlanner, "cuts_in_time", False)
    full = simulate(inst, "hare", plan_evals=evals, engine=engine)
    assert cut.result.schedule == full.result.schedule
    assert cut.metrics["total_weighted_jct"] == full.metrics["total_weighted_jct"]
    assert cut_tasks < sum(queued)
