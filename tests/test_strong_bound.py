"""The contention LP (hare_opt.bounds.strong_bound) never exceeds a proved optimum."""

from __future__ import annotations

from conftest import INSTANCES  # noqa: I001
from hypothesis import given
from strategies import instances

from hare_opt.bounds import critical_path_bound, lower_bound, strong_bound
from hare_opt.io import load_instance
from hare_opt.model import ceil_bound
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


def test_a_loaded_cluster_lifts_it_above_the_critical_path():
    # small-04 is a busy cluster: contention pushes completions past the critical paths
    inst = load_instance(INSTANCES / "small" / "small-04.json")
    best = solve(inst, "hare")
    value = strong_bound(inst, int(best.objective))
    assert critical_path_bound(inst) < value <= best.objective
    assert lower_bound(inst, bounds={"critical_path": critical_path_bound(inst),
                                     "strong": value}) == ceil_bound(value)
