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
from hare_opt.heuristics.engine import DISPATCH, RoundEngine, run_serial
from hare_opt.heuristics.hare import solve_hare
from hare_opt.model import GPU, Instance, Job
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
    res = solve(inst, "hare")      # solve() runs the checker; check again independently
    rep = check(inst, res.schedule)
    assert rep.feasible, rep.violations
    assert rep.objective == res.objective and res.status == "feasible"
    assert_theorem(inst)


@given(inst=instances(max_jobs=5, max_tasks=20),
       perm=st.randoms(use_true_random=False))
def test_any_order_any_dispatch_is_feasible(inst, perm):
    order = list(range(inst.num_jobs))
    perm.shuffle(order)
    for run in DISPATCH.values():
        eng = run(inst, order)
        rep = check(inst, eng.schedule())
        assert rep.feasible, rep.violations
        assert rep.objective == eng.objective()


@pytest.mark.parametrize("seed", range(3))
def test_guarantee_on_larger_random_instances(seed):
    inst = random_instance(seed, n_jobs=25, n_gpus=12, rounds=(1, 30), tasks_per_round=(1, 8),
                           heterogeneity=2.0, release_spread=300, sync=(0, 4), sync_map=True,
                           switch_overhead=(0, 5), eligibility=0.2)
    assert_theorem(inst, budget=3000)


@pytest.mark.parametrize("seed,switching", [(11, "hare"), (12, "default")])
def test_guarantee_on_paper_instances(seed, switching):
    inst = paper_instance(seed, n_jobs=60, switching=switching, unit_ms=10)
    assert_theorem(inst, lp=False, budget=3000)


def test_improvement_never_hurts_and_is_deterministic():
    inst = random_instance(5, n_jobs=12, n_gpus=5, rounds=(1, 6), tasks_per_round=(1, 4),
                           heterogeneity=1.0, release_spread=40, sync=(0, 2),
                           switch_overhead=(0, 2))
    quick = solve_hare(inst, improve=False)
    full = solve_hare(inst, budget=8000)
    again = solve_hare(inst, budget=8000)
    assert full.objective <= quick.objective == full.stats["first_objective"]
    assert full.objective == again.objective and full.schedule == again.schedule
    assert quick.stats["evaluations"] == 1


def test_round_block_matches_min_makespan_identical():
    # on an idle cluster the first round's barrier is release + round_time_first
    gpus = tuple(GPU(f"g{i}", t) for i, t in enumerate("ABBCC"))
    for k in (1, 3, 7, 40, 300):
        job = Job("j", {"A": 2, "B": 5, "C": 9}, tasks_per_round=k, release=3,
                  sync_time={"A": 4, "B": 1, "C": 0}, switch_overhead=2)
        inst = Instance(gpus, (job,))
        assert RoundEngine(inst).place_round(0) == 3 + inst.round_time_first[0]


def test_rejects_unknown_option():
    inst = Instance((GPU("g", "A"),), (Job("j", {"A": 1}),))
    with pytest.raises(ValueError, match="unknown option"):
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

    inst = random_instance(3, n_jobs=6, n_gpus=3, rounds=(1, 3), tasks_per_round=(1, 3),
                           release_spread=10, sync=(0, 2), switch_overhead=(0, 2))
    order, _ = guarantee_plan(inst)
    monkeypatch.setattr(hare_mod, "guarantee_plan", lambda i: (order, 0))
    res = solve(inst, "hare")
    assert res.stats["dispatch"] == "serial"
    assert res.objective == run_serial(inst, order).objective()
