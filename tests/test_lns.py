"""The anytime improver ``lns``: its neighbourhood model and left shift keep schedules
feasible, and it never returns a schedule worse than the one it started from."""

from __future__ import annotations

import numpy as np
from conftest import INSTANCES
from hypothesis import given
from strategies import feasible_schedules

from hare_opt.checker import check
from hare_opt.io import load_instance
from hare_opt.model.options import Run
from hare_opt.solvers import solve
from hare_opt.solvers.lns import Plan, _reoptimise, _window, left_shift


@given(feasible_schedules(max_tasks=10))
def test_left_shift_keeps_feasibility_and_moves_nothing_later(case):
    inst, schedule = case
    plan = Plan.of(inst, schedule)
    shifted = left_shift(inst, plan)
    assert (shifted.start <= plan.start).all()
    report = check(inst, shifted.schedule(inst))
    assert report.feasible, report.violations
    assert left_shift(inst, shifted).start.tolist() == shifted.start.tolist()  # a fixpoint


@given(feasible_schedules(max_tasks=10, max_gpus=3))
def test_every_neighbourhood_solution_is_feasible(case):
    # Every window of a feasible schedule, re-placed by CP-SAT and left-shifted, is feasible
    # and no worse: the model holds the current placement (setups, barriers, fixed tasks).
    inst, schedule = case
    plan = Plan.of(inst, schedule)
    before = check(inst, schedule).objective
    rng = np.random.default_rng(0)
    for size in (2, 4, 10):
        free, gpus = _window(inst, plan, size, rng)
        out, _ = _reoptimise(inst, plan, free, gpus, 5.0, Run())
        if out is None:
            continue
        report = check(inst, left_shift(inst, out).schedule(inst))
        assert report.feasible, report.violations
        assert report.objective <= before


def test_never_worse_than_its_start_with_setups():
    inst = load_instance(INSTANCES / "small" / "small-07.json")  # 60 tasks, setups, 3 GPUs
    hare = solve(inst, "hare")
    out = solve(inst, "lns", work_limit=6, step_time=0.5)
    assert out.status == "feasible" and out.lower_bound is None
    assert out.objective <= hare.objective and out.stats.work == 6


def test_improves_a_poor_hint():
    inst = load_instance(INSTANCES / "small" / "small-14.json")
    fifo = solve(inst, "fifo")
    # small windows that CP-SAT (one worker) settles long before step_time: no timing in it
    out = solve(
        inst, "lns", hint=fifo, work_limit=10, window=6, max_window=6, step_time=20, threads=1
    )
    assert out.stats["start"] == "given"
    assert out.objective < fifo.objective


def test_a_window_as_large_as_the_instance_frees_all_of_it_and_ends_the_run():
    """A first window that holds every task frees them all on every GPU: one exact step
    (CP-SAT, one worker, deterministic work) settles the instance and nothing is left."""
    inst = load_instance(INSTANCES / "fig1.json")
    plan = Plan.of(inst, solve(inst, "fifo").schedule)
    free, gpus = _window(inst, plan, inst.num_tasks, np.random.default_rng(0))
    assert sorted(free.tolist()) == list(range(inst.num_tasks))
    assert gpus.tolist() == list(range(inst.num_gpus))
    optimum = solve(inst, "cpsat").objective
    out = solve(inst, "lns", step_work=5.0, threads=1)
    assert out.stats.work == 1 and out.stats["proved_neighbourhoods"] == 1
    assert out.objective == optimum
