"""The closed-form special cases (hare_opt/solvers/special.py) against independent optima.

The oracles (tests/oracles.py: brute force, Smith, Horn by scipy's assignment on its own
cost matrix, one job) share no code with the stage they check. A case that fires on an
instance it does not cover would show here as a value off the brute-force optimum.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT
from hypothesis import given
from hypothesis import strategies as st
from oracles import brute_force, horn, one_job, smith
from strategies import instances

from hare_opt.checker import check
from hare_opt.generators import random_instance
from hare_opt.model import Job
from hare_opt.solvers import solve, solver_names
from hare_opt.solvers.special import recognise

sys.path.insert(0, str(ROOT / "experiments"))
from bench_exact import horn_instance  # noqa: E402


def _unit(inst):
    return inst.with_jobs([Job(j.id, j.task_time) for j in inst.jobs])


@given(instances(max_tasks=5, max_gpus=2))
def test_whatever_fires_is_the_brute_force_optimum(inst):
    found = recognise(inst)
    if found is not None:
        assert check(inst, found.schedule).objective == found.value == brute_force(inst)


@given(
    instances(
        max_gpus=3, max_rounds=1, max_k=1, max_jobs=6, releases=False, sync=False, setup=False
    )
)
def test_horn_matches_the_assignment_oracle(inst):
    inst = _unit(inst)
    found = recognise(inst)
    assert found is not None and found.kind in ("horn", "smith", "one_job")
    assert found.value == horn(inst) == check(inst, found.schedule).objective


@given(instances(max_gpus=2, max_rounds=1, max_k=1, max_jobs=4, releases=False))
def test_horn_with_sync_and_setups_matches_brute_force(inst):
    # equal weights, one common release: sync per type and setups are still an assignment
    inst = inst.with_jobs(
        [
            Job(
                j.id,
                j.task_time,
                weight=3,
                release=4,
                sync_time=j.sync_time,
                switch_overhead=j.switch_overhead,
            )
            for j in inst.jobs
        ]
    )
    found = recognise(inst)
    assert found is not None
    assert found.value == brute_force(inst)


@given(instances(max_gpus=1, max_rounds=1, max_k=1, max_jobs=6, releases=False, sync=False))
def test_smith_matches_the_ratio_oracle(inst):
    found = recognise(inst)
    assert found is not None and found.value == smith(inst)


@given(instances(max_gpus=1, max_rounds=3, max_k=2, max_jobs=3, max_tasks=6, releases=False))
def test_smith_blocks_match_brute_force_when_it_fires(inst):
    found = recognise(inst)
    multi_round_sync = any(j.rounds > 1 and inst.sync[i, 0] > 0 for i, j in enumerate(inst.jobs))
    assert (found is None) == (multi_round_sync and inst.num_jobs > 1)
    if found is not None:
        assert found.value == brute_force(inst)


@given(instances(max_jobs=1, max_k=5, max_tasks=10))
def test_one_job_matches_the_oracle(inst):
    found = recognise(inst)
    assert found is not None and found.value == one_job(inst)


def test_general_instances_are_left_to_the_search():
    inst = random_instance(3, n_jobs=6, n_gpus=3, release_spread=10)
    assert recognise(inst) is None


@pytest.mark.parametrize("solver", solver_names("exact"))
def test_every_exact_solver_returns_the_special_optimum(solver):
    inst = horn_instance(30, 1)
    result = solve(inst, solver, time_limit=10)
    assert result.status == "optimal" and result.stats["special"] == "horn"
    assert result.objective == horn(inst)
    off = solve(inst, solver, time_limit=1, special=False)  # the model alone: no proof in 1 s
    assert "special" not in off.stats and off.objective >= result.objective


@given(
    st.integers(1, 6).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.integers(n, 9),
            st.lists(st.integers(0, 60), min_size=n * 9, max_size=n * 9),
        )
    )
)
def test_own_assignment_matches_scipy_s_least_cost(case):
    """``assignment`` (Horn's case up to OWN_ASSIGNMENT_ENTRIES) against SciPy's method:
    the same least cost, or both find none (60 stands for a forbidden entry)."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    from hare_opt.solvers.special import assignment

    n, m, flat = case
    cost = np.array(flat[: n * m], dtype=float).reshape(n, m)
    cost[cost >= 50] = np.inf
    try:
        rows, cols = linear_sum_assignment(cost)
        want = cost[rows, cols].sum()
    except ValueError:
        want = None
    try:
        got = assignment(cost)
        assert len(set(got.tolist())) == n
        value = cost[np.arange(n), got].sum()
    except ValueError:
        value = None
    assert value == want
