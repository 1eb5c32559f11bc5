"""The ``hare`` heuristic: checked schedules, its proved guarantee on small and large
instances, and the engine's round placement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import instances

from hare_opt.bounds import (
    guarantee,
    guarantee_plan,
    load_bound,
    lower_bound,
    rho,
    sequential_bound,
)
from hare_opt.checker import check
from hare_opt.generators import paper_instance, random_instance
from hare_opt.heuristics.hare import LEAVE, PENALTIES, PER_JOB, dispatch, search_hare
from hare_opt.heuristics.listsched import ClusterState
from hare_opt.heuristics.polish import POLISH_TASKS, polish
from hare_opt.heuristics.rounds import DISPATCH, HOLD, RoundEngine, run_serial
from hare_opt.model import GPU, Instance, Job, Schedule
from hare_opt.model.planning import Warm
from hare_opt.solvers import solve


def assert_theorem(inst: Instance, *, lp: bool = True, budget: int = 40_000) -> None:
    """Lemma 2 for the plan's order, the theorem for hare, and the closed form."""
    order, upper = guarantee_plan(inst)
    serial = run_serial(inst, order)
    assert serial.objective() <= upper == sequential_bound(inst, order)
    res = solve(inst, "hare", budget=budget)
    assert res.objective <= upper
    lb = lower_bound(inst, lp=lp)
    assert res.objective <= guarantee(inst, lb) * lb
    assert upper <= (1 + 2 * rho(inst)) * float(load_bound(inst)) * (1 + 1e-12)


@given(inst=instances())
def test_hare_schedule_is_checked_and_within_guarantee(inst):
    res = solve(inst, "hare")  # solve() runs the checker; check again independently
    rep = check(inst, res.schedule)
    assert rep.feasible, rep.violations
    assert rep.objective == res.objective and res.status == "feasible"
    assert_theorem(inst)


@given(
    inst=instances(max_jobs=5, max_tasks=20),
    perm=st.randoms(use_true_random=False),
    penalty=st.sampled_from([0.0, 0.5, 1.0, 3.0, -0.25, "per-job"]),
)
def test_any_order_any_dispatch_is_feasible(inst, perm, penalty):
    order = list(range(inst.num_jobs))
    perm.shuffle(order)
    if penalty == "per-job":  # one per job, as the descent sets them
        penalty = np.array([perm.choice([-0.25, 0.0, 0.5, 1.0]) for _ in order])
    for run in (*DISPATCH.values(), *HOLD.values()):
        eng = run(inst, order, penalty=penalty)
        rep = check(inst, eng.schedule())
        assert rep.feasible, rep.violations
        assert rep.objective == eng.objective()


@given(inst=instances(max_jobs=5, max_tasks=20), penalty=st.sampled_from([0.5, 2.0, -0.25]))
def test_a_penalty_changes_nothing_on_one_gpu_type(inst, penalty):
    """The penalty only ranks slots on types slower than the job's fastest: a job with
    one eligible type, or a cluster of one type, is dispatched as without it."""
    same = Instance(
        tuple(GPU(g.id, "V100") for g in inst.gpus),
        tuple(
            Job(
                j.id,
                {"V100": min(j.task_time.values())},
                j.rounds,
                j.tasks_per_round,
                j.weight,
                j.release,
                0,
                j.switch_overhead,
            )
            for j in inst.jobs
        ),
    )
    order = np.arange(same.num_jobs)
    for run in (*DISPATCH.values(), *HOLD.values()):
        plain, pen = run(same, order, repeat=False), run(same, order, penalty=penalty)
        assert np.array_equal(plain.blocks, pen.blocks)


@given(inst=instances(max_jobs=5, max_tasks=20))
def test_penalties_never_make_hare_worse(inst):
    """The plain search keeps its whole budget; the penalised one only adds candidates."""
    plain = solve(inst, "hare", penalties=False)
    assert solve(inst, "hare").objective <= plain.objective


def test_penalties_confine_a_job_to_its_fast_type():
    """Tuning instance ours-quality 2008 (4 jobs, 3 GPUs): the optimum (243) runs the short
    job 2 on the V100 alone and the heavy job 0 on the P100 and K80; the earliest
    barrier gives job 2 the P100 too (266 without penalties). One penalty for every job
    keeps job 2 off the P100 but job 0 off the K80 in its second round (259 at best);
    the descent's penalty per job does both."""
    from hare_opt.sweeps.offline import quality_instance

    inst = quality_instance(2008, 4, 3, 20)
    plain = solve(inst, "hare", penalties=False)
    pen = solve(inst, "hare")
    assert pen.objective < plain.objective
    found = search_hare(inst, penalties=PENALTIES).best
    assert found.mode.endswith(f"@{PER_JOB}") and found.objective == pen.objective
    assert found.penalty is not None and len(set(found.penalty.tolist())) > 1
    # the same schedule again from (mode, order, penalties); no shared penalty does as well
    again = dispatch(inst, found.mode, found.order, found.penalty)
    assert again.objective() == found.objective == check(inst, again.schedule()).objective
    name = found.mode.partition("@")[0]
    for p in (LEAVE, *PENALTIES):
        assert dispatch(inst, f"{name}@{p:g}", found.order).objective() > found.objective


def test_per_job_penalties_need_their_mode():
    inst = random_instance(0, n_jobs=3, n_gpus=2)
    with pytest.raises(ValueError, match="per-job"):
        dispatch(inst, "serial", np.arange(3), np.zeros(3))
    with pytest.raises(ValueError, match="per-job"):
        dispatch(inst, f"serial@{PER_JOB}", np.arange(3))


@pytest.mark.parametrize("seed", range(3))
def test_guarantee_on_larger_random_instances(seed):
    inst = random_instance(
        seed,
        n_jobs=25,
        n_gpus=12,
        rounds=(1, 30),
        tasks_per_round=(1, 8),
        heterogeneity=2.0,
        release_spread=300,
        sync=(0, 4),
        sync_map=True,
        switch_overhead=(0, 5),
        eligibility=0.2,
    )
    assert_theorem(inst, budget=3000)


@pytest.mark.parametrize("seed,switching", [(11, "hare"), (12, "default")])
def test_guarantee_on_paper_instances(seed, switching):
    inst = paper_instance(seed, n_jobs=60, switching=switching, unit_ms=10)
    assert_theorem(inst, lp=False, budget=3000)


def test_improvement_never_hurts_and_is_deterministic():
    inst = random_instance(
        5,
        n_jobs=12,
        n_gpus=5,
        rounds=(1, 6),
        tasks_per_round=(1, 4),
        heterogeneity=1.0,
        release_spread=40,
        sync=(0, 2),
        switch_overhead=(0, 2),
    )
    quick = solve(inst, "hare", improve=False)
    full = solve(inst, "hare", budget=8000)
    again = solve(inst, "hare", budget=8000)
    assert full.objective <= quick.objective == full.stats["first_objective"]
    assert full.objective == again.objective and full.schedule == again.schedule
    assert quick.stats["evaluations"] == 1


def test_round_block_matches_min_makespan_identical():
    # on an idle cluster the first round's barrier is release + round_time_first
    gpus = tuple(GPU(f"g{i}", t) for i, t in enumerate("ABBCC"))
    for k in (1, 3, 7, 40, 300):
        job = Job(
            "j",
            {"A": 2, "B": 5, "C": 9},
            tasks_per_round=k,
            release=3,
            sync_time={"A": 4, "B": 1, "C": 0},
            switch_overhead=2,
        )
        inst = Instance(gpus, (job,))
        assert RoundEngine(inst).place_round(0) == 3 + inst.round_time_first[0]


def test_rejects_unknown_option():
    inst = Instance((GPU("g", "A"),), (Job("j", {"A": 1}),))
    with pytest.raises(ValueError, match="has no option .colour."):
        solve(inst, "hare", colour="red")


def test_fig1_beats_the_paper_schedule():
    # Fig. 1 of the paper: Hare's joint schedule scores 8.5 s = 17 units of 0.5 s
    from pathlib import Path

    from hare_opt.io import load_instance

    inst = load_instance(Path(__file__).resolve().parents[1] / "instances" / "fig1.json")
    assert solve(inst, "hare").objective <= 17
    assert np.isfinite(guarantee(inst))


def test_falls_back_to_the_guaranteed_schedule(monkeypatch):
    # make the a-priori bound look violated: hare must return the serial plan schedule
    import hare_opt.heuristics.hare as hare_mod

    inst = random_instance(
        3,
        n_jobs=6,
        n_gpus=3,
        rounds=(1, 3),
        tasks_per_round=(1, 3),
        release_spread=10,
        sync=(0, 2),
        switch_overhead=(0, 2),
    )
    order, _ = guarantee_plan(inst)
    monkeypatch.setattr(hare_mod, "guarantee_plan", lambda i: (order, 0))
    res = solve(inst, "hare", polish=False)
    assert res.stats["dispatch"] == "serial"
    assert res.objective == run_serial(inst, order).objective()
    # the polish comes after the fallback and only lowers it
    polished = solve(inst, "hare")
    assert polished.stats["dispatch"].startswith("serial")
    assert polished.objective <= res.objective


def warm_residual(inst: Instance, state: ClusterState) -> tuple[Instance, Warm, list[int]]:
    """What an online planner sees: the unfinished jobs' remaining rounds and the cluster."""
    rows = [j for j in range(inst.num_jobs) if not state.done(j)]
    jobs = [
        Job(
            inst.jobs[j].id,
            inst.jobs[j].task_time,
            int(inst.rounds[j] - state.round[j]),
            inst.jobs[j].tasks_per_round,
            inst.jobs[j].weight,
            int(max(inst.release[j], state.barrier[j])),
            inst.jobs[j].sync_time,
            inst.jobs[j].switch_overhead,
        )
        for j in rows
    ]
    pos = np.full(inst.num_jobs + 1, -1)
    pos[rows] = np.arange(len(rows))
    warm = Warm(
        free=state.free.tolist(),
        last=pos[state.last].tolist(),
        left=(inst.tasks_per_round[rows] - state.placed[rows]).tolist(),
        carry=state.round_end[rows].tolist(),
    )
    return inst.with_jobs(jobs), warm, rows


@given(
    inst=instances(max_jobs=5, max_gpus=3, max_tasks=16),
    rnd=st.randoms(use_true_random=False),
    frac=st.floats(0, 1),
)
def test_warm_plan_continues_a_running_cluster(inst, rnd, frac):
    """Part of the tasks placed (rounds left half-done, GPUs busy, setups paid): every
    dispatcher's warm plan of the rest, appended, is a feasible schedule of the whole
    instance and scores what the engine says; an idle, empty state plans as a cold one."""
    state = ClusterState(inst)
    for _ in range(int(frac * inst.num_tasks)):
        j = rnd.choice([j for j in range(inst.num_jobs) if not state.done(j)])
        state.place(j, rnd.choice(np.flatnonzero(inst.eligible[j]).tolist()))
    if all(state.done(j) for j in range(inst.num_jobs)):
        return
    residual, warm, rows = warm_residual(inst, state)
    order = list(range(residual.num_jobs))
    rnd.shuffle(order)
    done = sum(
        int(inst.weight[j]) * state.completion(j) for j in range(inst.num_jobs) if state.done(j)
    )
    for run in DISPATCH.values():
        eng = run(residual, order, warm=warm)
        plan, past = eng.schedule(), state.schedule()
        first = np.array([int(state.round[rows[residual.job_index(j)]]) for j in plan.job])
        whole = Schedule(
            *(
                np.concatenate([a, b])
                for a, b in (
                    (past.job, plan.job),
                    (past.round, plan.round + first),
                    (past.task, plan.task),
                    (past.gpu, plan.gpu),
                    (past.start, plan.start),
                    (past.end, plan.end),
                )
            )
        )
        rep = check(inst, whole)
        assert rep.feasible, rep.violations[:3]
        assert rep.objective == done + eng.objective()
    cold = Warm(
        [0] * inst.num_gpus,
        [-1] * inst.num_gpus,
        inst.tasks_per_round.tolist(),
        [0] * inst.num_jobs,
    )
    assert (
        search_hare(inst, warm=cold, budget=2000).best.objective
        == search_hare(inst, budget=2000).best.objective
    )


@given(inst=instances(max_jobs=5, max_tasks=20))
def test_polish_only_keeps_moves_that_help(inst):
    """The polished schedule passes the checker at the objective it claims, never above
    the schedule it started from."""
    start = solve(inst, "hare", polish=False)
    found = polish(inst, start.schedule)
    assert found is not None
    rep = check(inst, found.schedule)
    assert rep.feasible, rep.violations
    assert rep.objective == found.objective <= start.objective
    assert (found.moves > 0) == (found.objective < start.objective)
    assert solve(inst, "hare").objective <= start.objective


def test_polish_runs_a_round_inside_another_jobs_syncs():
    """Tuning instance ours-quality 2029 (4 jobs, 3 GPUs): every job order x dispatcher x
    per-job penalty gives 136 at best; the optimum (130, CP-SAT) runs tasks of job 1's
    round 1 on the V100 between job 2's rounds. Single-task moves reach it."""
    from hare_opt.sweeps.offline import quality_instance

    inst = quality_instance(2029, 4, 3, 20)
    plain = solve(inst, "hare", polish=False)
    res = solve(inst, "hare")
    assert res.objective < plain.objective
    assert res.stats["dispatch"].endswith("+polish") and res.stats["polish_moves"] > 0


@pytest.mark.parametrize("seed", [2001, 2011, 2018])
def test_polish_does_not_hinge_on_its_budget(seed):
    """The budget stops no polish of the tuning instances of 8 jobs that need the most
    (2001, 2011, 2018: 300,000-400,000 placements run to the end): the default and an
    unlimited budget end at the same schedule."""
    from hare_opt.sweeps.offline import quality_instance

    inst = quality_instance(seed, 8, 5, 40)
    start = solve(inst, "hare", polish=False).schedule
    capped, free = polish(inst, start), polish(inst, start, budget=10**12)
    assert capped is not None and free is not None
    assert capped.objective == free.objective and capped.evaluations == free.evaluations


def test_polish_skips_large_instances():
    inst = random_instance(1, n_jobs=20, n_gpus=8, rounds=(5, 8), tasks_per_round=(3, 6))
    assert inst.num_tasks > POLISH_TASKS
    res = solve(inst, "hare")
    assert polish(inst, res.schedule) is None and res.stats["polish_moves"] == 0


def test_polish_stops_at_its_deadline():
    """The run's time limit reaches the polish: past its deadline it evaluates nothing and
    returns the schedule it was given (left-shifted)."""
    import threading

    from hare_opt.sweeps.offline import quality_instance

    inst = quality_instance(2029, 4, 3, 20)
    start = solve(inst, "hare", polish=False)
    late = polish(inst, start.schedule, deadline=0.0)
    stopped_ev = threading.Event()
    stopped_ev.set()
    stopped = polish(inst, start.schedule, stop=stopped_ev)
    for found in (late, stopped):
        assert found is not None and found.evaluations == found.moves == 0
        assert found.objective <= start.objective
