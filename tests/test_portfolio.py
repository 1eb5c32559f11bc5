"""The portfolio's own logic: backends in child processes, failures, combining results.

Its answers are cross-validated with the other exact solvers in test_exact.py
(``portfolio`` is one of the ``--solvers``); the instances there are small enough
for its quick in-process phase, so here ``quick=False`` forces the child processes.
"""

from __future__ import annotations

import pytest
from conftest import INSTANCES

from hare_opt.io import load_instance
from hare_opt.model import Result, Stats
from hare_opt.model.options import Run
from hare_opt.solvers import solve
from hare_opt.solvers.exact import Context, leave
from hare_opt.solvers.portfolio.options import PortfolioOptions
from hare_opt.solvers.portfolio.solver import PortfolioBackend, _Runs


def test_child_processes_prove_and_agree_with_cpsat():
    inst = load_instance(INSTANCES / "fig1.json")
    result = solve(inst, "portfolio", time_limit=30, quick=False)
    assert result.status == "optimal"
    assert result.objective == solve(inst, "cpsat", time_limit=30).objective
    assert result.stats["proved_by"] in ("cpsat", "milp", "bnb")
    assert result.stats[result.stats["proved_by"]]["status"] == "optimal"


def test_a_failing_backend_is_reported_and_the_other_answers():
    # small-07 (60 tasks) is far from proved in 9 s, so the run waits for both children
    # and the MILP's failure (model over max_vars) must be reported, not lost. (Below
    # 8 s the portfolio starts no children: their start-up would overrun the limit.)
    inst = load_instance(INSTANCES / "small" / "small-07.json")
    result = solve(
        inst,
        "portfolio",
        time_limit=9,
        quick=False,
        backend_options={"milp": {"max_vars": 1}},
        backends=("cpsat", "milp"),
    )
    assert "ModelTooLargeError" in result.stats["milp_error"]
    assert result.status == "feasible" and result.stats["schedule_from"] == "cpsat"


def test_the_first_proof_ends_the_run_even_if_the_other_backend_fails():
    inst = load_instance(INSTANCES / "fig1.json")
    result = solve(
        inst,
        "portfolio",
        time_limit=30,
        quick=False,
        backend_options={"milp": {"max_vars": 1}},
        backends=("cpsat", "milp"),
    )
    assert result.status == "optimal" and result.stats["proved_by"] == "cpsat"
    assert "milp" not in result.stats  # the failing MILP never supplied a result


def test_backends_are_chosen_and_checked():
    inst = load_instance(INSTANCES / "fig1.json")
    result = solve(inst, "portfolio", time_limit=30, quick=False, backends=("bnb",))
    assert result.status == "optimal" and result.stats["proved_by"] == "bnb"
    assert set(result.stats) & {"cpsat", "milp"} == set()
    with pytest.raises(ValueError, match="'backends': must be some of"):
        solve(inst, "portfolio", backends=("cplex",))


def test_combine_takes_best_schedule_and_highest_bound():
    inst = load_instance(INSTANCES / "fig1.json")
    a = solve(inst, "wspt")
    b = solve(inst, "fifo")
    a.status = b.status = "feasible"
    a.lower_bound, b.lower_bound = 10, 12
    ctx = Context(
        "portfolio",
        inst,
        Run(),
        PortfolioOptions(),
        max(a, b, key=lambda r: r.objective),
        0,
        Stats(),
    )
    backend = PortfolioBackend()
    runs = _Runs({"x": a, "y": b})
    found = backend._combine(ctx, runs)
    assert found.value == min(a.objective, b.objective) and found.bound == 12
    out = leave(ctx, backend, runs, found)
    assert out.objective == min(a.objective, b.objective)
    assert out.lower_bound == min(12, out.objective) and out.stats.checks is None
    # A bound that meets the best objective proves it, whichever run found which.
    b.lower_bound = out.objective
    proved = leave(ctx, backend, runs, backend._combine(ctx, runs))
    assert proved.status == "optimal" and proved.lower_bound == proved.objective
    assert isinstance(proved, Result)
