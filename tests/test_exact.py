"""Cross-validation of the exact solvers (every backend given by --solvers runs every test).

The expected optima come from independent means: brute force over GPU
sequences, Smith's rule, Horn's matching for R||sum C_j, and the greedy
minimum makespan of identical tasks. Every schedule is also verified by the
independent checker inside ``solve``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import exact_solvers
from hypothesis import given
from oracles import brute_force, horn, one_job, smith
from ortools.sat.python import cp_model
from strategies import feasible_schedules, instances

from hare_opt.checker import check
from hare_opt.heuristics.listshift import Plan, left_shift
from hare_opt.io import load_instance
from hare_opt.model import GPU, Instance, Job, Schedule
from hare_opt.model.options import Run
from hare_opt.solvers import SOLVERS, solve
from hare_opt.solvers.cpsat import Features, build
from hare_opt.solvers.cpsat.solver import add_hint, solve_model

INSTANCES = Path(__file__).resolve().parents[1] / "instances"
RULES = ("fifo", "wspt", "eft")
LIMIT = 20.0


def model_only(solver: str) -> dict:
    """``special=False`` for solvers that take it: their model, not solvers/special.py
    (tests/test_special.py covers that); nothing for solvers without the option."""
    return {"special": False} if "special" in SOLVERS.spec(solver).options_class().names() else {}


def _optimal(inst: Instance, solver: str, **options) -> int:
    result = solve(inst, solver, time_limit=LIMIT, **options)
    assert result.status == "optimal", f"{solver} did not prove {inst.name}: {result.status}"
    assert result.lower_bound == pytest.approx(result.objective)
    return int(result.objective)


@given(instances(max_tasks=4, max_gpus=2))
def test_matches_brute_force(exact_solver, inst):
    assert _optimal(inst, exact_solver) == brute_force(inst)


@given(instances(max_tasks=7))
def test_optimal_beats_every_rule(exact_solver, inst):
    opt = _optimal(inst, exact_solver)
    for rule in RULES:
        assert opt <= solve(inst, rule).objective


@given(instances(max_tasks=6))
def test_solvers_agree(request, inst):
    names = exact_solvers(request.config)
    values = {name: _optimal(inst, name) for name in names}
    assert len(set(values.values())) == 1, values


@given(instances(max_gpus=1, max_rounds=1, max_k=1, max_jobs=5, releases=False, sync=False))
def test_single_gpu_smith_rule(exact_solver, inst):
    assert _optimal(inst, exact_solver, **model_only(exact_solver)) == smith(inst)


@given(
    instances(
        max_gpus=3, max_rounds=1, max_k=1, max_jobs=5, releases=False, sync=False, setup=False
    )
)
def test_unrelated_gpus_horn_matching(exact_solver, inst):
    inst = inst.with_jobs([Job(j.id, j.task_time) for j in inst.jobs])  # unit weights
    assert _optimal(inst, exact_solver, **model_only(exact_solver)) == horn(inst)


@given(instances(max_jobs=1, max_k=4, max_tasks=8))
def test_one_job_identical_tasks(exact_solver, inst):
    # The greedy round is optimal and reusing its GPUs every round needs no new setup.
    assert _optimal(inst, exact_solver, **model_only(exact_solver)) == one_job(inst)


def test_fig1_beats_paper(exact_solver):
    inst = load_instance(INSTANCES / "fig1.json")
    opt = _optimal(inst, exact_solver)
    assert opt <= 17  # the paper's schedule (c): 8.5 s in units of 0.5 s
    assert opt <= min(solve(inst, rule).objective for rule in RULES)


@pytest.mark.parametrize(
    "path", sorted((INSTANCES / "tiny").glob("tiny-*.json")), ids=lambda p: p.stem
)
def test_tiny_library(exact_solver, path):
    inst = load_instance(path)
    opt = _optimal(inst, exact_solver)
    assert opt <= min(solve(inst, rule).objective for rule in RULES)


def test_time_limit_never_claims_optimal(exact_solver):
    # 48 tasks with setups: far beyond what any backend proves in half a second.
    rng = np.random.default_rng(7)
    gpus = tuple(GPU(f"g{i}", t) for i, t in enumerate("AABBC"))
    jobs = tuple(
        Job(
            f"j{i}",
            {
                "A": int(rng.integers(2, 9)),
                "B": int(rng.integers(4, 15)),
                "C": int(rng.integers(6, 20)),
            },
            rounds=3,
            tasks_per_round=2,
            weight=int(rng.integers(1, 6)),
            release=int(rng.integers(0, 30)),
            sync_time=1,
            switch_overhead=2,
        )
        for i in range(8)
    )
    result = solve(Instance(gpus, jobs, "hard"), exact_solver, time_limit=0.5)
    assert result.status in ("feasible", "unknown")
    if result.status == "feasible":
        assert result.lower_bound is None or result.lower_bound < result.objective


# --- CP-SAT specifics: the optional model parts never change the optimum ---------------------

CPSAT_VARIANTS = [
    dict(symmetry=False),
    dict(redundant=False),
    dict(cumulative=True),
    dict(setup_energy=False),
    dict(relax_setups=0),
    dict(time_indexed=5000),
    dict(set_times=True),
    dict(pool="gpus"),
]


@pytest.mark.slow
@given(instances(max_tasks=6))
def test_cpsat_variants_agree(inst):
    opt = _optimal(inst, "cpsat")
    for options in CPSAT_VARIANTS:
        assert _optimal(inst, "cpsat", **options) == opt, options


@pytest.mark.slow
@given(instances(max_tasks=6))
def test_cpsat_setup_relaxations_bound_the_optimum(inst):
    opt = _optimal(inst, "cpsat")
    for setups in ("first", "ignore"):
        relaxed = solve_model(build(inst, Features(setups=setups)), inst, Run(LIMIT), None)
        assert relaxed.status == "optimal"
        assert relaxed.model_objective <= opt


@pytest.mark.parametrize("pooled", [False, True])
@given(case=feasible_schedules(max_tasks=8))
def test_cpsat_accepts_every_feasible_schedule_as_hint(pooled, case):
    # Symmetry breaking must keep the canonical form of every schedule: fix the model to the
    # hint and it must stay feasible, with the hint's objective. The pooled model (setups
    # removed, which keeps the schedule feasible) colours its solution back onto GPUs:
    # read back like any solution, it is a schedule scoring no more than the hint.
    inst, schedule = case
    if pooled:
        inst = inst.without_setups()
    objective = check(inst, schedule).objective
    b = build(inst, Features(pooled=pooled), upper_bound=objective)
    add_hint(b, inst, schedule)
    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    solver.parameters.num_workers = 1
    assert solver.solve(b.model) == cp_model.OPTIMAL
    assert solver.objective_value == objective
    starts = np.array([solver.value(v) for v in b.start], dtype=np.int64)
    gpu = b.gpus(inst, starts, solver.boolean_value)
    plan = left_shift(inst, Plan(b.tasks.job, b.tasks.round, b.tasks.task, gpu, starts))
    report = check(inst, plan.schedule(inst))
    assert report.feasible and report.objective <= objective


@pytest.mark.slow
@given(instances(max_tasks=7))
def test_cpsat_pooled_model_agrees_with_per_gpu_model(inst):
    # Without setups GPUs of a type are interchangeable: a type per task and a cumulative
    # per type must give the per-GPU model's optimum (its schedule, coloured onto GPUs,
    # passes the checker inside ``solve``), with and without its optional parts.
    inst = inst.without_setups()
    opt = _optimal(inst, "cpsat", pool="gpus")
    for options in (dict(), dict(symmetry=False), dict(cumulative=True), dict(time_indexed=5000)):
        result = solve(inst, "cpsat", time_limit=LIMIT, pool="types", special=False, **options)
        assert result.status == "optimal" and result.objective == opt, options


def test_cpsat_time_indexed_budget_counts_time_units():
    # The budget bounds memory: one entry per (literal, time unit of the task), not one
    # per literal, so a budget between the two counts leaves the relaxation out.
    inst = load_instance(INSTANCES / "fig1.json")
    upper = solve(inst, "wspt").objective
    b = build(inst, Features(time_indexed=10**9), upper_bound=upper)
    entries = b.stats["time_indexed"]
    literals = sum((hi - lo + 1) * len(lits) for (lo, hi), lits in zip(b.window, b.assign))
    assert literals < entries
    assert (
        build(inst, Features(time_indexed=entries - 1), upper_bound=upper).stats["time_indexed"]
        == 0
    )


def test_cpsat_pool_option():
    inst = load_instance(INSTANCES / "small" / "small-03.json")  # with setups
    assert solve(inst, "cpsat", time_limit=2, special=False).stats["model"] == "gpus"
    plain = inst.without_setups()
    assert solve(plain, "cpsat", time_limit=2, special=False).stats["model"] == "types"
    with pytest.raises(ValueError, match="pool.*setups"):
        solve(inst, "cpsat", pool="types")
    with pytest.raises(ValueError, match="pool.*auto, types, gpus"):
        solve(inst, "cpsat", pool="type")


def test_cpsat_rejects_bad_input():
    inst = load_instance(INSTANCES / "fig1.json")
    with pytest.raises(ValueError, match="no_such_parameter"):
        solve(inst, "cpsat", no_such_parameter=1)
    with pytest.raises(ValueError, match="shared option 'threads'"):
        solve(inst, "cpsat", num_workers=1)
    bad = solve(inst, "wspt")
    s = bad.schedule.sorted()
    start, end = s.start.copy(), s.end.copy()
    start[0] += 100
    end[0] += 100
    start[1] -= 1
    bad.schedule = Schedule(s.job, s.round, s.task, s.gpu, start, end)
    with pytest.raises(ValueError, match="hint"):
        solve(inst, "cpsat", hint=bad)


def test_cpsat_uses_given_hint():
    inst = load_instance(INSTANCES / "fig1.json")
    hint = solve(inst, "fifo")
    result = solve(inst, "cpsat", time_limit=LIMIT, hint=hint)
    assert result.stats["start"] == "given"
    assert result.stats["start_objective"] == hint.objective
    assert result.objective <= hint.objective
