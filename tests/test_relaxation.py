"""The compact relaxation (hare_opt.heuristics.relaxation) against an independent oracle.

The oracle is the former pairwise MILP (tests/relaxation_oracle.py): both solve
Hare_Sched_RL exactly, so their optima must agree. Also: availability times,
limits that must never be reported as optimal, and the size guard.
"""

from __future__ import annotations

import random

import highspy
import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from relaxation_oracle import pairwise_optimum
from strategies import instances

from hare_opt.checker import check
from hare_opt.generators import random_instance
from hare_opt.heuristics.relaxation import RelaxationTooLargeError, build, ladder, solve_relaxation
from hare_opt.heuristics.relaxation_points import (
    Machines,
    RelaxedTasks,
    eft_start,
    fixed_assignment_lp,
)
from hare_opt.model import HareOptError, Instance, Model
from hare_opt.solvers import solve


def _queyranne_slack(inst, relax, avail) -> np.ndarray:
    """Per GPU: sum p (x - A) - (L^2 - Q) / 2 at the returned point (>= 0 when feasible)."""
    p = inst.proc[relax.tasks.job, relax.gpu].astype(float)
    out = []
    for m in range(inst.num_gpus):
        on = relax.gpu == m
        load = p[on].sum()
        out.append((p[on] * (relax.x[on] - avail[m])).sum() - (load**2 - (p[on] ** 2).sum()) / 2)
    return np.array(out)


@given(inst=instances(max_jobs=3, max_tasks=7))
def test_compact_matches_pairwise_oracle(inst):
    oracle, proved = pairwise_optimum(inst)
    assume(proved)
    relax = solve_relaxation(inst, time_limit=60)
    assert relax.optimal
    assert relax.objective == pytest.approx(oracle, rel=1e-6, abs=1e-6)
    assert relax.bound == pytest.approx(oracle, rel=1e-6, abs=1e-6)
    assert relax.stats["stopped_by"] is None and relax.stats["gap"] <= 1e-6
    # the returned point is feasible: releases, barriers (via the LP) and every GPU's inequality
    assert (relax.x >= inst.release[relax.tasks.job] - 1e-7).all()
    assert (_queyranne_slack(inst, relax, np.zeros(inst.num_gpus)) >= -1e-6).all()
    # a coarse ladder leaves most secants to the lazy rounds: same optimum
    lazy = solve_relaxation(inst, time_limit=60, ladder_ratio=4.0)
    assert lazy.optimal
    assert lazy.objective == pytest.approx(oracle, rel=1e-6, abs=1e-6)
    event(f"lazy rounds: {min(lazy.stats['rounds'], 3)}")


def test_lazy_secants_reach_the_oracle():
    # A ladder too coarse to be exact: the optimum comes from secants added in later
    # rounds (two GPUs, loads of 10-40, secants up front only at 1, 8, 64, ...).
    rng = random.Random(1)
    rounds = []
    for trial in range(12):
        m = Model()
        m.add_gpu("A")
        m.add_gpu("B")
        for _ in range(rng.randint(3, 5)):
            m.add_job(
                {"A": rng.randint(1, 9), "B": rng.randint(1, 9)},
                rounds=rng.randint(1, 2),
                tasks_per_round=rng.randint(1, 2),
                weight=rng.randint(1, 5),
            )
        inst = m.build(f"lazy-{trial}")
        oracle, proved = pairwise_optimum(inst)
        relax = solve_relaxation(inst, ladder_ratio=8.0)
        assert proved and relax.optimal
        assert relax.objective == pytest.approx(oracle, rel=1e-9, abs=1e-6)
        assert relax.stats["cuts"] - relax.stats["initial_cuts"] >= relax.stats["rounds"] - 1
        rounds.append(relax.stats["rounds"])
    assert max(rounds) >= 3 and sum(r > 1 for r in rounds) >= 4


@given(inst=instances(max_jobs=3, max_tasks=7, releases=False), shift=st.integers(1, 20))
def test_common_availability_shifts_the_optimum(inst, shift):
    # No releases and every GPU free from c: x -> x + c maps the offline relaxation
    # onto this one (barriers and the shifted inequality are invariant).
    base = solve_relaxation(inst, time_limit=60)
    late = solve_relaxation(inst, time_limit=60, gpu_available=[shift] * inst.num_gpus)
    assume(base.optimal and late.optimal)
    expected = base.objective + shift * inst.weight.sum()
    assert late.objective == pytest.approx(expected, rel=1e-6, abs=1e-6)


@given(
    p=st.lists(st.integers(1, 6), min_size=1, max_size=5),
    w=st.lists(st.integers(1, 6), min_size=5, max_size=5),
    avail=st.integers(0, 9),
)
def test_one_gpu_closed_form_with_availability(p, w, avail):
    # One GPU free from A, R = K = 1, no releases: x = A + x', and the LP
    # sum p x' >= sum_{i<k} p_i p_k loads all of it on the least w/p job.
    m = Model()
    m.add_gpu("G")
    for pi, wi in zip(p, w):
        m.add_job({"G": pi}, weight=wi)
    inst = m.build()
    pairs = sum(p[i] * p[k] for i in range(len(p)) for k in range(i + 1, len(p)))
    closed = (
        sum((avail + pi) * wi for pi, wi in zip(p, w))
        + min(wi / pi for pi, wi in zip(p, w)) * pairs
    )
    relax = solve_relaxation(inst, gpu_available=[avail])
    assert relax.optimal
    assert relax.objective == pytest.approx(closed, abs=1e-6)


@given(inst=instances(max_jobs=3, max_tasks=8), data=st.data())
def test_availability_respected(inst, data):
    avail = np.array(
        data.draw(st.lists(st.integers(0, 15), min_size=inst.num_gpus, max_size=inst.num_gpus))
    )
    relax = solve_relaxation(inst, time_limit=30, gpu_available=avail)
    assert (relax.x >= avail[relax.gpu] - 1e-7).all()
    assert (_queyranne_slack(inst, relax, avail) >= -1e-6).all()
    assert relax.bound <= relax.objective + 1e-6
    res = solve(inst, "hare-paper", gpu_available=list(avail))
    assert check(inst, res.schedule).feasible
    gpu = res.schedule.gpu_indices(inst)
    assert (res.schedule.start >= avail[gpu]).all()
    assert res.lower_bound is None  # a bound for the busy cluster is none for the instance


@given(inst=instances(max_jobs=4, max_tasks=10, max_gpus=3), data=st.data())
def test_every_feasible_point_is_a_feasible_mip_start(inst, data):
    # The MIP start of every round comes from values(): it must satisfy every row
    # (symmetry breaking included) for any assignment, with or without availability.
    avail = np.array(
        data.draw(st.lists(st.integers(0, 4), min_size=inst.num_gpus, max_size=inst.num_gpus)),
        dtype=float,
    )
    tasks = RelaxedTasks.of(inst)
    mach = Machines.of(inst, avail, data.draw(st.sampled_from(["per-gpu", "per-type"])))
    start = eft_start(mach, tasks)
    gpu = np.array(
        [
            data.draw(st.sampled_from(np.flatnonzero(mach.inst.eligible[n]).tolist()))
            for n in tasks.job.tolist()
        ]
    )
    pt = fixed_assignment_lp(mach.inst, tasks, gpu, mach)
    # caps come from the worse point: a MIP start is never worse than the one they came from
    model = build(mach, tasks, max(start, pt, key=lambda q: q.objective))
    ladder(model, start, 1.5)
    for point in (start, pt):
        v = np.array(model.values(point))
        lm = model.lm
        assert (v >= np.array(lm.lb) - 1e-6).all() and (v <= np.array(lm.ub) + 1e-6).all()
        for idx, vals, lo, hi in lm.rows:
            act = float(np.dot(v[idx], vals))
            tol = 1e-6 * max(1.0, abs(act))
            assert lo - tol <= act <= hi + tol
        assert np.dot(lm.cost, v) == pytest.approx(point.objective, rel=1e-9, abs=1e-6)


def test_fixed_assignment_lp_is_a_lower_envelope():
    # The relaxation's optimum is the best fixed-assignment LP over all assignments:
    # on two GPUs and three one-task jobs, enumerate all 8 assignments.
    m = Model()
    m.add_gpu("A")
    m.add_gpu("B")
    for pa, pb, w in ((3, 5, 2), (4, 2, 1), (2, 2, 3)):
        m.add_job({"A": pa, "B": pb}, weight=w, sync_time=1)
    inst = m.build()
    relax = solve_relaxation(inst)
    zero = np.zeros(2)
    best = min(
        fixed_assignment_lp(inst, relax.tasks, np.array(g), zero).objective
        for g in np.ndindex(2, 2, 2)
    )
    assert relax.optimal
    assert relax.objective == pytest.approx(best, abs=1e-6)


def _busy() -> Instance:
    """12 tasks on 4 GPUs whose relaxation the root node does not prove."""
    m = Model()
    m.add_gpus("A", 2)
    m.add_gpus("B", 2)
    for i in range(3):
        m.add_job(
            {"A": 2 + i % 3, "B": 5 + i},
            rounds=2,
            tasks_per_round=2,
            weight=1 + i % 4,
            release=i,
            sync_time=1,
        )
    return m.build("busy")


def test_limits_never_claim_optimal_and_node_limit_is_deterministic():
    inst = _busy()
    runs = [solve(inst, "hare-paper", node_limit=1) for _ in range(2)]  # a pure function
    for res in runs:
        assert res.stats["relaxation_optimal"] is False
        assert res.stats["relaxation_stopped_by"] == "node_limit"
        assert res.stats["relaxation_last_milp_status"] != "Optimal"
        assert res.lower_bound <= res.objective
        assert 0 < res.stats["relaxation_gap"] < 1
    keys = ("objective", "lower_bound")
    assert [getattr(r, k) for r in runs for k in keys] == [
        getattr(runs[0], k) for _ in runs for k in keys
    ]
    stats = ("relaxation_objective", "relaxation_bound", "relaxation_nodes")
    assert [runs[0].stats[k] for k in stats] == [runs[1].stats[k] for k in stats]
    for kw in ({"max_rounds": 0}, {"time_limit": 0.2}):
        relax = solve_relaxation(inst, **kw)
        assert not relax.optimal, kw
        assert relax.stats["stopped_by"] in ("round_limit", "time_limit"), kw
        assert relax.bound <= relax.objective
        assert relax.stats["gap"] > 0


def test_too_large_is_refused_up_front():
    with pytest.raises(
        RelaxationTooLargeError, match=r"48 \(task, GPU\) pairs.*max_assignments=10"
    ):
        solve_relaxation(_busy(), max_assignments=10)  # 12 tasks x 4 GPUs


def test_bad_availability_names_the_gpu():
    inst = _busy()
    bad = np.zeros(inst.num_gpus)
    bad[1] = -3
    with pytest.raises(HareOptError, match=f"gpu_available: gpu {inst.gpus[1].id!r}"):
        solve_relaxation(inst, gpu_available=bad)
    with pytest.raises(HareOptError, match="one per GPU"):
        solve_relaxation(inst, gpu_available=[0])


def test_thread_counts_in_one_process_never_skip_the_relaxation():
    """HiGHS sizes one thread pool per process; a run asking for another count used to
    fail without a solve, which read as 'stopped by a limit'. Any order of counts must
    solve (the local search's LPs run first, on whatever pool there is)."""
    from hare_opt.generators import random_instance

    inst = random_instance(0, n_jobs=3, n_gpus=2, max_tasks=8, name="threads")
    runs = [solve_relaxation(inst, threads=t, node_limit=1000) for t in (None, 1, 2, 1, None)]
    for r in runs:
        assert r.stats["nodes"] >= 0 and r.stats["last_milp_status"] != "Not Set"
        assert r.optimal
    assert len({round(r.objective, 6) for r in runs}) == 1


def test_a_highs_failure_keeps_the_incumbent_and_proves_nothing(monkeypatch):
    """HiGHS can fail numerically mid-search (model status 'Solve error'): the relaxation
    then returns its start, not optimal, with no bound from the failed run and the
    reason in its stats; a refusal to start at all (status 'Not Set') is an error."""
    import highspy

    import hare_opt.heuristics.relaxation as relaxation
    from hare_opt.generators import random_instance

    inst = random_instance(0, n_jobs=3, n_gpus=2, max_tasks=8, name="fails")
    real = relaxation.to_highs

    def failing(status):
        def make(lm, *, mip, threads=None):
            h = real(lm, mip=mip, threads=threads)
            if mip:
                h.run = lambda: highspy.HighsStatus.kError
                h.getModelStatus = lambda: status
            return h

        return make

    monkeypatch.setattr(relaxation, "to_highs", failing(highspy.HighsModelStatus.kSolveError))
    r = solve_relaxation(inst, node_limit=1000)
    assert not r.optimal and r.stats["stopped_by"] == "solver_error"
    assert r.objective == r.stats["start_objective"] and r.bound < r.objective
    monkeypatch.setattr(relaxation, "to_highs", failing(highspy.HighsModelStatus.kNotset))
    with pytest.raises(HareOptError, match="nothing was solved"):
        solve_relaxation(inst, node_limit=1000)


# --- the per-type relaxation (GPUs of a type aggregated) ----------------------------


@given(inst=instances(max_jobs=3, max_gpus=4, max_tasks=8), data=st.data())
def test_every_schedule_meets_the_aggregated_rows(inst, data):
    """The per-type rows f_k(L_k) <= 2 S_k + Q_k hold for any feasible schedule of the
    cluster (GPU m free from A_m): what makes the per-type model a relaxation."""
    avail = np.array(
        data.draw(st.lists(st.integers(0, 9), min_size=inst.num_gpus, max_size=inst.num_gpus)),
        dtype=float,
    )
    step3 = data.draw(st.sampled_from(["phi", "start"]))
    sch = solve(inst, "hare-paper", gpu_available=list(avail), step3=step3).schedule
    mach = Machines.of(inst, avail, "per-type")
    typ = mach.of_gpu[sch.gpu_indices(inst)]
    p = (sch.end - sch.start).astype(float)
    for k in range(len(inst.gpu_types)):
        on = typ == k
        load, s, q = p[on].sum(), (p[on] * sch.start[on]).sum(), (p[on] ** 2).sum()
        assert float(mach.f(k, load)) <= 2 * s + q + 1e-6 * max(1.0, 2 * s + q)


@given(inst=instances(max_jobs=3, max_gpus=4, max_tasks=7), data=st.data())
def test_per_type_bounds_below_the_per_gpu_relaxation(inst, data):
    """per-type optimum <= per-GPU optimum <= OPT: the per-GPU optimum, its assignment
    mapped to types, is a per-type point of no larger value."""
    avail = None
    if data.draw(st.booleans()):
        avail = np.array(
            data.draw(st.lists(st.integers(0, 6), min_size=inst.num_gpus, max_size=inst.num_gpus)),
            dtype=float,
        )
    gpu = solve_relaxation(inst, time_limit=60, gpu_available=avail)
    typ = solve_relaxation(inst, time_limit=60, gpu_available=avail, relaxation="per-type")
    assert typ.stats["model"] == "per-type" and typ.bound <= typ.objective + 1e-6
    mach = typ.machines
    mapped = fixed_assignment_lp(mach.inst, gpu.tasks, mach.of_gpu[gpu.gpu], mach)
    assert mapped.objective <= gpu.objective + 1e-6 * max(1.0, gpu.objective)
    assume(gpu.optimal and typ.optimal)
    assert typ.objective <= gpu.objective + 1e-6 * max(1.0, gpu.objective)
    if avail is None:
        opt = solve(inst, "cpsat", time_limit=30, threads=1)
        assume(opt.status == "optimal")
        assert typ.bound <= gpu.bound + 1e-6 <= opt.objective + 2e-6


def test_per_type_is_refused_by_cpsat_and_sizes_by_type():
    inst = _busy()  # 12 tasks, 2 types of 2 GPUs
    with pytest.raises(HareOptError, match="per-gpu relaxation only"):
        solve_relaxation(inst, backend="cpsat", relaxation="per-type")
    with pytest.raises(HareOptError, match="relaxation"):
        solve_relaxation(inst, relaxation="per-node")
    with pytest.raises(RelaxationTooLargeError, match=r"24 \(task, type\) pairs"):
        solve_relaxation(inst, relaxation="per-type", max_assignments=10)


def _assignment_lp(mach, tasks, gpu):
    """The relaxation with the assignment fixed, as the LP in x it is (row by row, solved
    by HiGHS): the oracle of ``AssignmentSearch``'s closed form."""
    from hare_opt.heuristics.relaxation_points import INF, LinearModel, to_highs
    from hare_opt.util.highs import run

    inst = mach.inst
    p = inst.proc[tasks.job, gpu].astype(float)
    load = np.bincount(gpu, weights=p, minlength=inst.num_gpus)
    square = np.bincount(gpu, weights=p * p, minlength=inst.num_gpus)
    lm = LinearModel()
    xcol = [
        lm.var(float(max(inst.release[n], mach.amin[m])), INF)
        for n, m in zip(tasks.job.tolist(), gpu.tolist())
    ]
    prev = None
    for ids in tasks.rounds():
        n = int(tasks.job[ids[0]])
        last = tasks.round[ids[0]] == inst.rounds[n] - 1
        b = lm.var(0.0, INF, cost=float(inst.weight[n]) if last else 0.0)
        for i in ids.tolist():
            lm.row({b: 1.0, xcol[i]: -1.0}, lo=float(inst.proc[n, gpu[i]] + inst.sync[n, gpu[i]]))
            if prev is not None:
                lm.row({xcol[i]: 1.0, prev: -1.0}, lo=0.0)
        prev = None if last else b
    for m in range(inst.num_gpus):
        on = np.flatnonzero(gpu == m).tolist()
        need = (float(mach.f(m, load[m])) - square[m]) / 2
        lm.row({xcol[i]: p[i] for i in on}, lo=need)
    h = to_highs(lm, mip=False)
    run(h)
    return lm, h.getInfo().objective_function_value


@settings(max_examples=60)
@given(inst=instances(max_jobs=4, max_gpus=4, max_tasks=12), data=st.data())
def test_fixed_assignment_closed_form_is_the_lp(inst, data):
    """With the assignment fixed, the relaxation's value in closed form (tasks ending at
    their barriers, whole jobs delayed by a covering LP) is the LP in x's optimum, and its
    point is feasible for that LP at that value; any assignment, with availability, both
    models."""
    from hare_opt.heuristics.relaxation_points import AssignmentSearch

    avail = np.array(
        data.draw(st.lists(st.integers(0, 12), min_size=inst.num_gpus, max_size=inst.num_gpus)),
        dtype=float,
    )
    mach = Machines.of(inst, avail, data.draw(st.sampled_from(["per-gpu", "per-type"])))
    tasks = RelaxedTasks.of(inst)
    gpu = np.array(
        [
            data.draw(st.sampled_from(np.flatnonzero(mach.inst.eligible[n]).tolist()))
            for n in tasks.job.tolist()
        ],
        dtype=np.int64,
    )
    lm, want = _assignment_lp(mach, tasks, gpu)
    got = AssignmentSearch(mach, tasks, gpu)
    assert got.objective == pytest.approx(want, rel=1e-9, abs=1e-6)
    pt = got.point()  # canonical: interchangeable machines relabelled, a round by machine
    lm, same = _assignment_lp(mach, tasks, pt.gpu)
    assert same == pytest.approx(want, rel=1e-9, abs=1e-6)
    x = np.zeros(len(lm.lb))
    x[: len(gpu)] = pt.x
    d = (mach.inst.proc + mach.inst.sync)[tasks.job, pt.gpu]
    x[len(gpu) :] = [float((pt.x[ids] + d[ids]).max()) for ids in tasks.rounds()]
    assert np.dot(lm.cost, x) == pytest.approx(want, rel=1e-9, abs=1e-6)
    assert (x >= np.array(lm.lb) - 1e-6).all()
    for idx, vals, lo, _ in lm.rows:
        assert float(np.dot(x[idx], vals)) >= lo - 1e-6 * max(1.0, abs(lo))


@settings(max_examples=30)
@given(inst=instances(max_jobs=4, max_gpus=4, max_tasks=12), data=st.data())
def test_local_search_never_worsens_and_stops_at_a_local_optimum(inst, data):
    """The search's value only falls, is the closed form's at the assignment it ends
    with, and a search that says it is done finds nothing more with a larger cap."""
    from hare_opt.heuristics.relaxation_points import AssignmentSearch

    avail = np.array(
        data.draw(st.lists(st.integers(0, 12), min_size=inst.num_gpus, max_size=inst.num_gpus)),
        dtype=float,
    )
    mach = Machines.of(inst, avail, data.draw(st.sampled_from(["per-gpu", "per-type"])))
    tasks = RelaxedTasks.of(inst)
    search = AssignmentSearch(mach, tasks, eft_start(mach, tasks).gpu)
    before = search.objective
    used = search.search(data.draw(st.integers(0, 50)))
    after = search.point()
    assert after.objective <= before + 1e-9 * max(1.0, before)
    assert after.objective == pytest.approx(search.objective, rel=1e-9, abs=1e-6)
    if search.done:
        again = AssignmentSearch(mach, tasks, search.gpu)
        assert again.search(10_000) >= 0 and again.done
        assert np.array_equal(again.gpu, search.gpu)
    # in pieces: the same moves and the same count (the kernel resumes where it stopped)
    pieces = AssignmentSearch(mach, tasks, eft_start(mach, tasks).gpu)
    total = 0
    while total < used and not pieces.done:
        total += pieces.search(min(3, used - total))
    assert total == used and np.array_equal(pieces.gpu, search.gpu)
    if search.done:
        assert pieces.search(5) == 0 and pieces.done


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_starting_point_matches_its_reference(seed):
    """The per-type EFT point (numba) equals its NumPy reference: hare-paper's plans are
    unchanged."""
    from hare_opt.heuristics.relaxation_points import eft_by_type, eft_by_type_reference

    inst = random_instance(
        seed,
        n_jobs=7,
        n_gpus=5,
        heterogeneity=2.0,
        release_spread=30,
        rounds=(1, 4),
        tasks_per_round=(1, 3),
        sync=(0, 3),
    )
    avail = np.random.default_rng(seed).uniform(0, 20, inst.num_gpus)
    mach, tasks = Machines.of(inst, avail, "per-type"), RelaxedTasks.of(inst)
    a, b = eft_by_type(mach, tasks), eft_by_type_reference(mach, tasks)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.gpu, b.gpu)
    assert a.objective == b.objective


def test_a_run_refused_by_the_thread_pool_is_retried_on_a_fresh_pool(monkeypatch):
    """After the MILP's worker thread sized HiGHS's one pool, a run on this thread could
    end 'Not Set' with nothing solved (seen with test_relaxation then test_hare_paper in
    one process); ``util.highs.run`` resets the pool and runs once more."""
    from hare_opt.util import highs as hh

    resets = []
    monkeypatch.setattr(
        highspy.Highs,
        "resetGlobalScheduler",
        staticmethod(lambda blocking: resets.append(blocking)),
    )

    class Refusing:
        def __init__(self):
            self.runs = 0

        def run(self):
            self.runs += 1
            return highspy.HighsStatus.kError if self.runs == 1 else highspy.HighsStatus.kOk

        def getModelStatus(self):
            return (
                highspy.HighsModelStatus.kNotset
                if self.runs == 1
                else highspy.HighsModelStatus.kOptimal
            )

    h = Refusing()
    assert hh.run(h) == highspy.HighsStatus.kOk and h.runs == 2 and resets == [True]
