"""Cross-validation of the exact solvers (every backend given by --solvers runs every test).

The expected optima come from independent means: brute force over GPU
sequences, Smith's rule, Horn's matching for R||sum C_j, and the greedy
minimum makespan of identical tasks. Every schedule is also verified by the
independent checker inside ``solve``.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from ortools.sat.python import cp_model
from scipy.optimize import linear_sum_assignment
from strategies import feasible_schedules, instances

from hare_opt.checker import check
from hare_opt.io import load_instance
from hare_opt.model import GPU, Instance, Job
from hare_opt.solvers import solve
from hare_opt.solvers.cpsat import Features, build, solve_cpsat
from hare_opt.solvers.cpsat.solver import add_hint

INSTANCES = Path(__file__).resolve().parents[1] / "instances"
RULES = ("fifo", "wspt", "eft")
LIMIT = 20.0


def _optimal(inst: Instance, solver: str, **options) -> int:
    result = solve(inst, solver, time_limit=LIMIT, **options)
    assert result.status == "optimal", f"{solver} did not prove {inst.name}: {result.status}"
    assert result.lower_bound == pytest.approx(result.objective)
    return int(result.objective)


def brute_force(inst: Instance) -> int:
    """Minimum over all GPU assignments and orders of the semi-active schedule's objective.

    Every schedule is dominated by the earliest-start schedule of its GPU
    sequences, and placing tasks in any order consistent with the rounds at
    their earliest start builds exactly that schedule.
    """
    tasks = [(j, r) for j, job in enumerate(inst.jobs)
             for r in range(job.rounds) for _ in range(job.tasks_per_round)]
    gpus = [np.flatnonzero(inst.eligible[j]).tolist() for j, _ in tasks]
    best = None
    for order in set(itertools.permutations(range(len(tasks)))):
        seq = [tasks[i] for i in order]
        if any(a[0] == b[0] and a[1] > b[1] for a, b in itertools.combinations(seq, 2)):
            continue
        for assign in itertools.product(*(gpus[i] for i in order)):
            free = [0] * inst.num_gpus
            last = [-1] * inst.num_gpus
            ready = {}                                 # (job, round) -> barrier so far
            for (j, r), g in zip(seq, assign):
                job = inst.jobs[j]
                earliest = ready[(j, r - 1)] if r else job.release
                if last[g] == j:
                    start = max(free[g], earliest)
                else:
                    start = max(free[g], job.release) + job.switch_overhead
                    start = max(start, earliest)
                free[g], last[g] = start + job.task_time[inst.gpus[g].type], j
                sync = job.sync_on(inst.gpus[g].type)
                ready[(j, r)] = max(ready.get((j, r), 0), free[g] + sync)
            value = sum(job.weight * ready[(j, job.rounds - 1)] for j, job in enumerate(inst.jobs))
            best = value if best is None else min(best, value)
    return best


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
    names = [s for s in request.config.getoption("--solvers").split(",") if s]
    values = {name: _optimal(inst, name) for name in names}
    assert len(set(values.values())) == 1, values


@given(instances(max_gpus=1, max_rounds=1, max_k=1, max_jobs=5, releases=False, sync=False))
def test_single_gpu_smith_rule(exact_solver, inst):
    # One GPU, one task per job: every task pays its setup, so p_j + o_j is its length.
    length = inst.proc[:, 0] + inst.overhead
    order = sorted(range(inst.num_jobs), key=lambda j: length[j] / inst.weight[j])
    t, smith = 0, 0
    for j in order:
        t += int(length[j])
        smith += int(inst.weight[j]) * t
    assert _optimal(inst, exact_solver) == smith


@given(instances(max_gpus=3, max_rounds=1, max_k=1, max_jobs=5, releases=False, sync=False,
                 setup=False))
def test_unrelated_gpus_horn_matching(exact_solver, inst):
    inst = inst.with_jobs([Job(j.id, j.task_time) for j in inst.jobs])  # unit weights
    n, m = inst.num_jobs, inst.num_gpus
    big = 10**9
    # Column (g, k): the job k-th from the end on GPU g, counted k times in sum C_j.
    cost = np.array([[k * inst.proc[j, g] if inst.eligible[j, g] else big
                      for g in range(m) for k in range(1, n + 1)] for j in range(n)])
    rows, cols = linear_sum_assignment(cost)
    assert _optimal(inst, exact_solver) == int(cost[rows, cols].sum())


@given(instances(max_jobs=1, max_k=4, max_tasks=8))
def test_one_job_identical_tasks(exact_solver, inst):
    # The greedy round is optimal and reusing its GPUs every round needs no new setup.
    rounds = int(inst.rounds[0])
    span = inst.min_round_time(0, setup=True) + (rounds - 1) * inst.min_round_time(0, setup=False)
    assert _optimal(inst, exact_solver) == int(inst.weight[0]) * (int(inst.release[0]) + span)


def test_fig1_beats_paper(exact_solver):
    inst = load_instance(INSTANCES / "fig1.json")
    opt = _optimal(inst, exact_solver)
    assert opt <= 17  # the paper's schedule (c): 8.5 s in units of 0.5 s
    assert opt <= min(solve(inst, rule).objective for rule in RULES)


@pytest.mark.parametrize("path", sorted((INSTANCES / "tiny").glob("tiny-*.json")),
                         ids=lambda p: p.stem)
def test_tiny_library(exact_solver, path):
    inst = load_instance(path)
    opt = _optimal(inst, exact_solver)
    assert opt <= min(solve(inst, rule).objective for rule in RULES)


def test_time_limit_never_claims_optimal(exact_solver):
    # 48 tasks with setups: far beyond what any backend proves in half a second.
    rng = np.random.default_rng(7)
    gpus = tuple(GPU(f"g{i}", t) for i, t in enumerate("AABBC"))
    jobs = tuple(Job(f"j{i}", {"A": int(rng.integers(2, 9)), "B": int(rng.integers(4, 15)),
                               "C": int(rng.integers(6, 20))}, rounds=3, tasks_per_round=2,
                     weight=int(rng.integers(1, 6)), release=int(rng.integers(0, 30)),
                     sync_time=1, switch_overhead=2) for i in range(8))
    result = solve(Instance(gpus, jobs, "hard"), exact_solver, time_limit=0.5)
    assert result.status in ("feasible", "unknown")
    if result.status == "feasible":
        assert result.lower_bound is None or result.lower_bound < result.objective


# --- CP-SAT specifics: the optional model parts never change the optimum ---------------------

CPSAT_VARIANTS = [dict(symmetry=False), dict(redundant=False), dict(cumulative=True),
                  dict(setup_energy=False), dict(auto_hint=False), dict(relax_setups=0),
                  dict(time_indexed=5000), dict(set_times=True)]


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
        relaxed = solve_cpsat(inst, time_limit=LIMIT, setups=setups, relax_setups=0)
        assert relaxed.status == "optimal"
        assert relaxed.objective <= opt


@given(feasible_schedules(max_tasks=8))
def test_cpsat_accepts_every_feasible_schedule_as_hint(case):
    # Symmetry breaking must keep the canonical form of every schedule: fix the model to the
    # hint and it must stay feasible, with the hint's objective.
    inst, schedule = case
    objective = check(inst, schedule).objective
    b = build(inst, Features(), upper_bound=objective)
    add_hint(b, inst, schedule)
    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    solver.parameters.num_workers = 1
    assert solver.Solve(b.model) == cp_model.OPTIMAL
    assert solver.ObjectiveValue() == objective


def test_cpsat_rejects_bad_input():
    inst = load_instance(INSTANCES / "fig1.json")
    with pytest.raises(ValueError, match="no_such_parameter"):
        solve_cpsat(inst, no_such_parameter=1)
    bad = solve(inst, "wspt")
    bad.schedule = bad.schedule.sorted()
    bad.schedule.start[0] += 100
    bad.schedule.end[0] += 100
    bad.schedule.start[1] -= 1
    with pytest.raises(ValueError, match="hint"):
        solve_cpsat(inst, hint=bad)


def test_cpsat_uses_given_hint():
    inst = load_instance(INSTANCES / "fig1.json")
    hint = solve(inst, "fifo")
    result = solve(inst, "cpsat", time_limit=LIMIT, hint=hint)
    assert result.stats["hint"] == "given"
    assert result.stats["hint_objective"] == hint.objective
    assert result.objective <= hint.objective
