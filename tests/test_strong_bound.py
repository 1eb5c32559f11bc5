"""The contention LP (hare_opt.bounds.strong_bound) never exceeds a proved optimum."""

from __future__ import annotations

import itertools

import numpy as np
from conftest import INSTANCES  # noqa: I001
from hypothesis import given
from strategies import instances

from hare_opt.bounds import critical_path_bound, lower_bound, strong_bound
from hare_opt.bounds.strong import max_task_rate, round_patterns, strong_lp
from hare_opt.io import load_instance
from hare_opt.model import GPU, Instance, Job, ceil_bound
from hare_opt.solvers import solve


@given(instances(max_tasks=8))
def test_below_the_optimum(inst):
    opt = solve(inst, "bnb", special=False, time_limit=30)
    assert opt.status == "optimal"
    for buckets in (7, 50):
        value = strong_bound(inst, int(opt.objective), buckets=buckets)
        assert value is not None
        assert ceil_bound(value) <= opt.objective
        assert value >= critical_path_bound(inst) - 1e-6 * critical_path_bound(inst)


@given(instances(max_tasks=8))
def test_a_completion_window_that_holds_the_optimum_keeps_the_lp_below_it(inst):
    """Branching on completion times is sound: with every job's completion fixed to the
    optimum's own that schedule is still in the LP, so its value stays <= OPT; the whole
    window's solution completes each job there, and a window no schedule can meet is
    infeasible (value inf: nothing to search)."""
    opt = solve(inst, "bnb", special=False, time_limit=30)
    assert opt.status == "optimal" and opt.report is not None
    done = np.asarray(opt.report.completion, float)
    lp = strong_lp(
        inst, int(opt.objective), buckets=50, completion=dict(enumerate(zip(done, done)))
    )
    assert lp is not None and ceil_bound(lp.value) <= opt.objective
    assert np.allclose(lp.completion, done)
    far = float(opt.objective) + 1  # no job completes after OPT (weights are >= 1)
    gone = strong_lp(inst, int(opt.objective), buckets=50, completion={0: (far, far)})
    assert gone is not None and gone.value == float("inf")


def test_a_loaded_cluster_lifts_it_above_the_critical_path():
    # small-04 is a busy cluster: contention pushes completions past the critical paths
    inst = load_instance(INSTANCES / "small" / "small-04.json")
    best = solve(inst, "hare")
    value = strong_bound(inst, int(best.objective))
    assert critical_path_bound(inst) < value <= best.objective
    assert lower_bound(
        inst, bounds={"critical_path": critical_path_bound(inst), "strong": value}
    ) == ceil_bound(value)


def test_round_patterns_are_every_split_with_its_least_duration():
    """Every split of a round over the eligible types, once, with the least time a round
    of that split lasts: found by trying every assignment of its tasks to GPUs."""
    gpus = (GPU("a", "A"), GPU("b", "A"), GPU("c", "B"))
    job = Job("j", {"A": 3, "B": 5}, rounds=2, tasks_per_round=3, sync_time={"A": 1, "B": 2})
    inst = Instance(gpus, (job,))
    counts, least = round_patterns(inst, 0)
    assert sorted(map(tuple, counts.tolist())) == [(a, 3 - a) for a in range(4)]
    for row, d in zip(counts.tolist(), least.tolist()):
        best = None
        for gpu_of in itertools.product(range(3), repeat=3):  # task -> GPU
            n = np.bincount(gpu_of, minlength=3)
            if (n[0] + n[1], n[2]) != tuple(row):
                continue
            end = max(n[g] * (3 if g < 2 else 5) + (1 if g < 2 else 2) for g in range(3) if n[g])
            best = end if best is None else min(best, end)
        assert d == best
    assert max_task_rate(inst)[0] == 2 / 3 + 1 / 5


def test_mixing_types_lifts_it_where_fluid_work_does_not():
    """A round on two fast GPUs lasts 2; one task on the slow GPU makes it last 10. Fluid
    work alone lets each job put a share of its work on the slow GPU and both finish
    early (the LP without its round rows gave 56.8); with them the bound closes more than
    half the distance from the critical path (48) to OPT (72)."""
    gpus = (GPU("a", "F"), GPU("b", "F"), GPU("c", "S"))
    jobs = (
        Job("x", {"F": 2, "S": 10}, rounds=4, tasks_per_round=2, weight=3),
        Job("y", {"F": 2, "S": 10}, rounds=4, tasks_per_round=2, weight=3),
    )
    inst = Instance(gpus, jobs)
    opt = solve(inst, "bnb", special=False, time_limit=30)
    assert opt.status == "optimal"
    value = strong_bound(inst, int(opt.objective))
    assert (critical_path_bound(inst) + opt.objective) / 2 < ceil_bound(value) <= opt.objective
