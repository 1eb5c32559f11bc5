"""The MILP solver: exact on tiny instances (independent brute force), honest statuses,
both backends, LP bound below the optimum, and the model admits every feasible schedule."""

from __future__ import annotations

import pytest
from conftest import INSTANCES
from hypothesis import given
from hypothesis import strategies as st
from oracles import brute_force
from strategies import instances

from hare_opt.generators import random_instance
from hare_opt.heuristics.rules import solve_eft, solve_fifo, solve_wspt
from hare_opt.io import load_instance
from hare_opt.model import GPU, Instance, Job
from hare_opt.model.options import Run
from hare_opt.solvers import solve
from hare_opt.solvers.exact import best_start
from hare_opt.solvers.milp import ModelTooLargeError, lp_relaxation_bound
from hare_opt.solvers.milp.formulation import build
from hare_opt.solvers.milp.solution import encode
from hare_opt.solvers.milp.windows import Windows


def _inst(jobs: list[Job], types: list[str], name: str = "t") -> Instance:
    return Instance(tuple(GPU(f"g{i}", t) for i, t in enumerate(types)), tuple(jobs), name)


def test_fig1_proved_below_paper():
    inst = load_instance(INSTANCES / "fig1.json")
    res = solve(inst, "milp", time_limit=30)
    assert res.status == "optimal"
    assert res.objective <= 17  # the paper's joint schedule (c), 8.5 s in 0.5 s units
    assert solve(inst, "milp", time_limit=30, backend="cbc").objective == res.objective
    assert res.stats["lp_bound"] <= res.objective + 1e-6


SETUP_CASES = [
    # two jobs sharing one GPU type: switching back and forth costs setups
    _inst(
        [
            Job("a", {"A": 2}, rounds=2, tasks_per_round=1, switch_overhead=2, sync_time=1),
            Job("b", {"A": 1}, rounds=1, tasks_per_round=2, weight=3, switch_overhead=1),
        ],
        ["A", "A"],
    ),
    # heterogeneous, per-type sync, releases, setup must not start before release
    _inst(
        [
            Job(
                "a",
                {"A": 3, "B": 1},
                rounds=2,
                tasks_per_round=1,
                release=2,
                sync_time={"A": 0, "B": 2},
                switch_overhead=3,
            ),
            Job("b", {"A": 1}, rounds=1, tasks_per_round=2, weight=2, switch_overhead=1),
        ],
        ["A", "B"],
    ),
    # one GPU, idle gap between two tasks of a job keeps its setup
    _inst(
        [
            Job("a", {"A": 1}, rounds=2, tasks_per_round=1, sync_time=3, switch_overhead=2),
            Job("b", {"A": 5}, rounds=1, tasks_per_round=1, release=1, switch_overhead=1),
        ],
        ["A"],
    ),
    # ineligible type and a round split over two GPUs of different speed
    _inst(
        [
            Job(
                "a",
                {"A": 2, "B": 5},
                rounds=1,
                tasks_per_round=3,
                sync_time={"A": 1, "B": 0},
                switch_overhead=1,
            ),
            Job("b", {"B": 2}, rounds=1, tasks_per_round=1, weight=4, release=1),
        ],
        ["A", "B"],
    ),
]


@pytest.mark.parametrize("inst", SETUP_CASES)
def test_tiny_with_setups_matches_brute_force(inst):
    res = solve(inst, "milp", time_limit=30)
    assert res.status == "optimal"
    assert res.objective == brute_force(inst)


def test_hint_becomes_the_start_and_bounds_the_horizon():
    inst = SETUP_CASES[1]
    first = solve(inst, "milp", time_limit=30)
    again = solve(inst, "milp", time_limit=30, hint=first, start_heuristic=None)
    assert again.status == "optimal" and again.objective == first.objective
    assert again.stats["start_objective"] == first.objective and again.stats.start == "given"
    if first.stats.quick is None and again.stats.quick is None:
        assert again.stats["horizon"] <= first.stats["horizon"]


@pytest.mark.parametrize("inst", SETUP_CASES[:2])
def test_cbc_same_optimum(inst):
    high = solve(inst, "milp", time_limit=30)
    cbc = solve(inst, "milp", time_limit=30, backend="cbc")
    assert cbc.status == "optimal"
    assert cbc.objective == high.objective


@given(instances(max_tasks=5, max_gpus=2, max_jobs=3, max_time=6))
def test_random_tiny_matches_brute_force(inst):
    res = solve(inst, "milp", time_limit=30, special=False)  # the model, not solvers/special.py
    assert res.status == "optimal"
    assert res.objective == brute_force(inst)
    if res.stats.quick is None:  # the model ran (the cheap bounds did not settle it)
        assert res.stats["lp_bound"] <= res.objective + 1e-6


@given(instances(max_tasks=6), st.sampled_from([solve_wspt, solve_eft, solve_fifo]), st.booleans())
def test_every_feasible_schedule_satisfies_the_model(inst, rule, dense):
    """Soundness half of exactness: a heuristic's schedule, encoded, breaks no row."""
    start = rule(inst)
    m = build(inst, Windows(inst, int(start.objective)), dense=dense)
    values = encode(m, start.schedule)
    for v in m.prob.variables():
        v.varValue = values.get(v.name, 0.0)
    rows = m.prob.constraints() if callable(m.prob.constraints) else m.prob.constraints.values()
    broken = [str(c) for c in rows if not c.valid(1e-9)]
    assert not broken
    assert abs(m.prob.objective.value() - start.objective) < 1e-9


@given(instances(max_tasks=6))
def test_random_with_setups_and_sync_optimal_below_heuristics(inst):
    res = solve(inst, "milp", time_limit=30)
    assert res.status == "optimal"
    assert res.objective <= best_start(inst, Run()).objective
    assert res.lower_bound == res.objective
    assert lp_relaxation_bound(inst) <= res.objective + 1e-6


def test_short_time_limit_never_claims_optimal():
    # 35 tasks with setups and syncs: HiGHS needs far more than the 2 s it is given
    inst = random_instance(
        2,
        n_jobs=8,
        n_gpus=3,
        max_tasks=36,
        rounds=(1, 4),
        tasks_per_round=(1, 4),
        release_spread=10,
        sync=(0, 3),
        switch_overhead=(0, 2),
        max_task_time=10,
    )
    res = solve(inst, "milp", time_limit=2, lp_bound=False)
    assert res.status == "feasible"
    assert res.lower_bound < res.objective
    # on a loaded machine the model may not even be handed to HiGHS within 2 s
    assert res.stats.get("mip_status", "not started") != "Optimal"


def test_too_large_model_is_refused_with_a_clear_error():
    # two long jobs on one GPU: the second waits, so each window spans ~10^5 time units
    inst = _inst([Job("a", {"A": 10**5}), Job("b", {"A": 10**5})], ["A"])
    with pytest.raises(ModelTooLargeError, match="'t'.*variables"):
        solve(inst, "milp", max_vars=10_000, special=False)  # one GPU: Smith's rule else
    assert solve(inst, "milp", max_vars=10_000).stats["special"] == "smith"


def test_unknown_backend_is_a_user_error():
    with pytest.raises(ValueError, match="'backend'"):
        solve(SETUP_CASES[0], "milp", backend="gurobi")
    with pytest.raises(ValueError, match="not a HiGHS option"):
        solve(SETUP_CASES[0], "milp", mip_rel_gapp=0.1)
