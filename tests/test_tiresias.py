"""Tiresias's queues demote at its own thresholds, in GPU-seconds, whatever the workload."""

from __future__ import annotations

import numpy as np
import pytest

from hare_opt.generators import paper_instance
from hare_opt.model.units import unit_seconds
from hare_opt.sim.policies.tiresias import TIRESIAS_LIMITS_S
from hare_opt.sim.policy import get_policy
from hare_opt.sim.simulator import Simulator


def _limits(inst, **options):
    pol = get_policy("tiresias", **options)
    sim = Simulator(inst, pol)
    pol.reset(sim)
    return pol._limits


def test_default_limits_are_tiresias_gpu_seconds_in_the_instance_unit():
    inst = paper_instance(0, 6, "V100:8,K80:4", regime="paper")
    sec = unit_seconds(inst.time_unit)
    assert TIRESIAS_LIMITS_S == (3250.0, 7200.0)
    assert np.allclose(_limits(inst) * sec, TIRESIAS_LIMITS_S)
    # a workload with twice the task times keeps the same limits (not relative to it)
    longer = inst.with_jobs(
        [
            j.__class__(**{**j.__dict__, "task_time": {t: 2 * v for t, v in j.task_time.items()}})
            for j in inst.jobs
        ]
    )
    assert np.allclose(_limits(longer), _limits(inst))


def test_queue_rounds_gives_the_relative_limits_instead():
    inst = paper_instance(0, 6, "V100:8,K80:4", regime="paper")
    rel = _limits(inst, queue_rounds=(10.0, 100.0))
    assert rel[1] == pytest.approx(10 * rel[0])
    assert not np.allclose(rel, _limits(inst))
