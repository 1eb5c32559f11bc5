"""The type-aggregated CP-SAT model of ``experiments/small_optima.py`` (one cumulative per
GPU type, for instances without setups) proves the same optima as the cpsat solver, and
its schedules pass the checker: the script's OPT figures in docs/theory.md rest on it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from hare_opt.checker import check
from hare_opt.generators import random_instance
from hare_opt.solvers import solve

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "small_optima.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("small_optima", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_same_optimum_as_cpsat(script, seed: int) -> None:
    inst = script.check_instance(seed)
    assert not (inst.overhead > 0).any() and (np.bincount(inst.gpu_type_index) >= 2).any()
    ref = solve(inst, "cpsat", time_limit=30)
    assert ref.status.value == "optimal"
    name, schedule, bound = script.by_type(inst, None, None, 30.0, 2)
    assert name == "OPTIMAL" and schedule is not None
    report = check(inst, schedule)
    assert report.feasible, report
    assert report.objective == ref.objective == bound


def test_refuses_setups(script) -> None:
    inst = random_instance(1, n_jobs=3, n_gpus=3, switch_overhead=(1, 4))
    assert (inst.overhead > 0).any()
    with pytest.raises(ValueError, match="overhead"):
        script.by_type(inst, None, None, 5.0, 1)
