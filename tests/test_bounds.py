"""Lower bounds: each is <= the optimum (brute force and exact solvers), each is exact
where theory says so, and the CLI prints them."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from hypothesis import given
from oracles import brute_force
from strategies import instances

from hare_opt.bounds import (
    all_bounds,
    critical_path,
    critical_path_bound,
    load_bound,
    lower_bound,
    preemptive_wspt,
)
from hare_opt.cli.main import main
from hare_opt.io import save_instance
from hare_opt.model import GPU, Instance, Job
from hare_opt.solvers import available_solvers, solve, solver_names

HEURISTICS = (*solver_names("heuristic"), *solver_names("rule"))  # from the registry


tiny = instances(max_jobs=3, max_gpus=3, max_rounds=2, max_k=2, max_tasks=5, max_time=6)


@given(inst=tiny)
def test_bounds_below_brute_force_optimum_below_heuristics(inst):
    opt = brute_force(inst)
    bounds = all_bounds(inst)
    for name, value in bounds.items():
        assert value <= opt + 1e-6, (name, value, opt)
    assert lower_bound(inst, bounds=bounds) <= opt
    for h in HEURISTICS:
        assert solve(inst, h).objective >= opt, h


@given(inst=instances(max_jobs=3, max_tasks=6))
def test_bounds_below_exact_solver(inst, exact_solver):
    if exact_solver not in available_solvers():
        pytest.skip(f"exact solver {exact_solver!r} is not importable here")
    res = solve(inst, exact_solver, time_limit=5)
    bounds = all_bounds(inst)
    # a feasible objective is >= OPT >= every bound, proved optimal or not
    for name, value in bounds.items():
        assert value <= res.objective + 1e-6, (name, value, res.status, res.objective)
    if res.status == "optimal":
        assert lower_bound(inst, bounds=bounds) <= res.objective
        for h in HEURISTICS:
            assert solve(inst, h).objective >= res.objective, h


@given(inst=instances(max_jobs=1, max_gpus=3, max_rounds=4, max_k=6, max_tasks=None))
def test_critical_path_is_exact_for_one_job(inst):
    # alone on the cluster, min-barrier rounds reach the bound (Lemma 1), so both are exact
    res = solve(inst, "hare")
    assert res.objective == critical_path_bound(inst)
    assert critical_path(inst)[0] >= inst.release[0] + inst.round_time_first[0]


def test_critical_path_with_many_tasks_per_round():
    gpus = tuple(GPU(f"g{i}", t) for i, t in enumerate("AABBB"))
    job = Job(
        "j",
        {"A": 3, "B": 7},
        rounds=3,
        tasks_per_round=1000,
        release=4,
        sync_time={"A": 1, "B": 5},
        switch_overhead=2,
    )
    inst = Instance(gpus, (job,))
    res = solve(inst, "hare")  # the large-K path of the round placement
    assert res.objective == critical_path_bound(inst)


def test_preemptive_wspt_by_hand():
    # job 0 (w 1, p 3) runs [0,1), job 1 (w 10, p 1, r 1) preempts it in [1,2), job 0 ends [2,4)
    busy = preemptive_wspt([0, 1], [3, 1], [1, 10])
    # mean busy time = sum over pieces [a, b) of (b^2 - a^2) / (2 p)
    assert busy == [Fraction((1 - 0) + (16 - 4), 2 * 3), Fraction(4 - 1, 2)]


@given(
    inst=instances(
        max_gpus=1, max_rounds=1, max_k=1, releases=False, sync=False, setup=False, max_tasks=None
    )
)
def test_load_bound_is_smith_on_one_gpu(inst):
    # 1 || sum w_j C_j: Smith's rule is optimal and the load bound must equal it
    p, w = inst.min_task_time, inst.weight
    order = sorted(range(inst.num_jobs), key=lambda j: Fraction(int(p[j]), int(w[j])))
    t, smith = 0, 0
    for j in order:
        t += int(p[j])
        smith += int(w[j]) * t
    assert load_bound(inst) == smith


def test_cli_bound_json(tmp_path, capsys):
    inst = Instance(
        (GPU("g0", "V100"), GPU("g1", "K80")),
        (
            Job(
                "a",
                {"V100": 4, "K80": 9},
                rounds=2,
                tasks_per_round=2,
                weight=2,
                sync_time={"V100": 1, "K80": 2},
                switch_overhead=1,
            ),
            Job("b", {"K80": 5}, release=3),
        ),
    )
    path = tmp_path / "i.json"
    save_instance(inst, path)
    assert main(["bound", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("lower_bound", "critical_path", "load", "lp", "guarantee", "alpha_paper_factor"):
        assert key in out
    hare = solve(inst, "hare").objective
    assert out["lower_bound"] <= hare <= out["guarantee"] * out["lower_bound"] + 1e-6
    assert out["alpha_paper_factor"] == pytest.approx(max(a * (2 + a) for a in inst.alpha))
    assert math.ceil(out[out["lower_bound_from"]] - 1e-6) == out["lower_bound"]


def test_cli_bound_bad_file(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps(
            {
                "format": "hare-opt/instance@1",
                "name": "x",
                "gpus": [{"id": "g0", "type": "A"}],
                "jobs": [{"id": "j0", "rounds": 1, "tasks_per_round": 1, "task_time": {"A": -1}}],
            }
        )
    )
    assert main(["bound", str(path)]) == 2
    err = capsys.readouterr().err
    assert "j0" in err and "task_time" in err
