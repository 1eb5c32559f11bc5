"""The branch and bound's own promises; its optima are cross-validated in test_exact.py."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import ROOT
from hypothesis import given
from strategies import instances

from hare_opt.checker import check
from hare_opt.model import GPU, Instance, Job
from hare_opt.solvers import SolverError, solve

sys.path.insert(0, str(ROOT / "experiments"))
from bench_exact import frontier_instance  # noqa: E402


@pytest.fixture(scope="module")
def medium() -> tuple[Instance, int]:
    """20 tasks on 4 GPUs with setups: bnb proves it in ~10^4 nodes, CP-SAT in ~3 s."""
    inst = frontier_instance(20, 2)
    result = solve(inst, "bnb")
    assert result.status == "optimal"
    assert result.objective == solve(inst, "cpsat", time_limit=60).objective
    return inst, result.objective


@pytest.mark.parametrize("nodes", [1, 50, 500, 3000])
def test_a_stopped_search_reports_a_valid_bound(medium, nodes):
    inst, opt = medium
    result = solve(inst, "bnb", work_limit=nodes)
    assert result.status == "feasible"  # 3000 nodes is well short of the proof (~10^4)
    assert result.lower_bound <= opt <= result.objective
    assert check(inst, result.schedule).feasible


@given(instances(max_tasks=8))
def test_every_stopped_search_bound_is_below_the_optimum(inst):
    # The bound is what prunes: one above OPT anywhere would cut the optimum away. A
    # search stopped after k nodes reports the lowest bound of its open subtrees.
    opt = solve(inst, "cpsat", time_limit=30)
    assert opt.status == "optimal"
    for nodes in (1, 3, 10, 30):
        result = solve(inst, "bnb", work_limit=nodes)
        assert result.lower_bound <= opt.objective <= result.objective
        if result.status == "optimal":
            assert result.objective == opt.objective


def test_a_tiny_memo_changes_the_work_not_the_answer(medium):
    inst, opt = medium
    result = solve(inst, "bnb", memo_mb=0)
    assert result.status == "optimal" and result.objective == opt
    assert result.stats["memo_full"]


def test_an_optimal_hint_is_proved_as_is(medium):
    inst, opt = medium
    best = solve(inst, "bnb")
    again = solve(inst, "bnb", hint=best)
    assert again.status == "optimal" and again.objective == opt
    assert again.stats["improvements"] == 0 and again.stats["start"] == "given"


def test_too_large_is_refused_by_name():
    rng = np.random.default_rng(0)
    gpus = tuple(GPU(f"g{i}", "V100") for i in range(64))
    jobs = tuple(
        Job(f"j{i}", {"V100": int(rng.integers(1, 9))}, rounds=50, tasks_per_round=40)
        for i in range(60)
    )
    with pytest.raises(SolverError, match="GiB of search stack.*solvers that take it: hare"):
        solve(Instance(gpus, jobs, "big"), "bnb", time_limit=1)


def test_the_kernel_warm_up_reports_nothing_to_the_progress_line():
    """warm_kernels runs the warm-up inside a command's progress line; its tiny
    instance's incumbent (9) used to stand as the command's incumbent, gap 0.00%."""
    import io
    import math

    from hare_opt.solvers.bnb import warm_up
    from hare_opt.util import progress

    with progress.reporting(io.StringIO(), interval=3600) as rep:
        warm_up()
        assert math.isinf(rep.incumbent) and math.isinf(rep.bound)
