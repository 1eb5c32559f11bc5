"""``experiments/small_optima.py``'s OPT figures (docs/theory.md) come from the cpsat
solver's pooled model: on the script's check instances (types of several GPUs, syncs,
releases, no setups) it proves the per-GPU model's optimum."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "small_optima.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("small_optima", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_pooled_model_proves_the_per_gpu_optimum(script, seed: int) -> None:
    inst = script.check_instance(seed)
    assert not (inst.overhead > 0).any() and (np.bincount(inst.gpu_type_index) >= 2).any()
    ref = script.pooled(inst, None, 30.0, 2, pool="gpus")
    got = script.pooled(inst, None, 30.0, 2)
    assert ref.status.value == got.status.value == "optimal"
    assert got.stats["model"] == "types" and ref.stats["model"] == "gpus"
    assert got.objective == ref.objective
