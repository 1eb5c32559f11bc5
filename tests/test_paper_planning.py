"""hare-paper's online planner: blocks of rounds (coarsen / expand) and the policy with them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import instances

from hare_opt.checker import check
from hare_opt.heuristics.paper_planning import HarePaperPlanner, coarsen, expand, pairs
from hare_opt.heuristics.rules import solve_eft
from hare_opt.sim import simulate


@settings(max_examples=30)
@given(inst=instances(max_jobs=4, max_gpus=3, max_rounds=7, max_tasks=30))
@pytest.mark.parametrize("b", [1, 2, 3])
def test_blocks_of_rounds_keep_work_and_every_task(b, inst):
    """A coarse round is b rounds run back to back on one GPU: b task times and b syncs
    (one each in a b times longer unit); expanding a coarse schedule gives every fine task
    exactly once, on the coarse task's GPU, under its coarse round's first start."""
    coarse = coarsen(inst, b)  # in units of b: task and sync times stay, releases shrink
    assert (coarse.rounds == -(-inst.rounds // b)).all()
    assert (coarse.proc_by_type == inst.proc_by_type).all()
    assert (coarse.sync_by_type == inst.sync_by_type).all()
    assert (coarse.release == inst.release // b).all()
    plan = solve_eft(coarse).schedule
    fine = expand(inst, plan, b)
    assert len(fine) == inst.num_tasks
    keys = set(zip(fine.job.tolist(), fine.round.tolist(), fine.task.tolist()))
    assert len(keys) == inst.num_tasks
    assert check(inst, fine, max_messages=1).counts.get("missing", 0) == 0
    gpu_of = {(j, r, k): g for j, r, k, g in zip(plan.job, plan.round, plan.task, plan.gpu)}
    assert all(gpu_of[j, r // b, k] == g for j, r, k, g in
               zip(fine.job, fine.round, fine.task, fine.gpu))
    first = {}
    for j, r, s in zip(plan.job, plan.round, plan.start):
        first[j, r] = min(first.get((j, r), s), s)
    assert all(s == b * first[j, r // b] for j, r, s in zip(fine.job, fine.round, fine.start))
    assert pairs(coarse) <= pairs(inst)


def test_hare_paper_policy_in_blocks():
    """A residual over the pair budget is planned in blocks (b > 1), and the executed
    schedule is checked; the same workload at b = 1 also runs."""
    from hare_opt.generators import paper_instance

    inst = paper_instance(1, 4, "V100:2,K80:1", regime="paper", rounds=(6, 40),
                          mean_interarrival=1.0)
    run = simulate(inst, "hare-paper", pairs=60)
    assert check(inst, run.result.schedule).feasible
    assert run.result.stats["block_rounds_max"] > 1
    assert run.result.stats["plan_tasks"] is None  # no cut: the blocks make it fit
    assert run.result.stats["relaxations"] == run.result.stats["plans"]
    with pytest.raises(ValueError, match="block_rounds"):
        HarePaperPlanner(block_rounds=0)
    assert np.isfinite(run.metrics["total_weighted_jct"])
