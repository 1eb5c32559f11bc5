"""Independent oracles: optima written from the spec alone, and closed forms of special cases.

None of them uses hare_opt's schedulers, its placement rule or its ``ClusterState``:
a bug there cannot hide behind the same bug here. The model's ``Instance`` is only
read for its data (and, in ``one_job``, ``min_round_time``, itself checked against a
literal enumeration in test_model.py).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.optimize import linear_sum_assignment

from hare_opt.model import Instance


def brute_force(inst: Instance) -> int:
    """The optimum, by depth-first search over placement sequences.

    Placing tasks one by one, each at its earliest start after the tasks already on
    its GPU, reaches every left-shifted schedule (order the tasks by start time), and
    every schedule is dominated by one; tasks of one round are identical, so a step
    picks a job, not a task. Pruned by a bound that every completion respects (a job
    still ends after its placed tasks sync and, if unfinished, after one more task);
    GPUs of one type with the same free time and last job are interchangeable.
    """
    jobs = inst.jobs
    gtypes = [g.type for g in inst.gpus]
    fastest = [min(job.task_time.values()) for job in jobs]
    best = math.inf

    def bound(rnd, rend, barrier, cost) -> int:
        return cost + sum(
            job.weight * max(barrier[j] + fastest[j], rend[j])
            for j, job in enumerate(jobs)
            if rnd[j] < job.rounds
        )

    def dfs(free, last, rnd, placed, rend, barrier, cost):
        nonlocal best
        if all(rnd[j] == job.rounds for j, job in enumerate(jobs)):
            best = min(best, cost)
            return
        if bound(rnd, rend, barrier, cost) >= best:
            return
        for j, job in enumerate(jobs):
            if rnd[j] == job.rounds:
                continue
            seen = set()
            for g, gt in enumerate(gtypes):
                if gt not in job.task_time or (gt, free[g], last[g]) in seen:
                    continue
                seen.add((gt, free[g], last[g]))
                if last[g] == j:
                    s = max(free[g], barrier[j])
                else:  # the setup may overlap the barrier wait, not the release
                    s = max(max(free[g], job.release) + job.switch_overhead, barrier[j])
                e = s + job.task_time[gt]
                f2, l2 = free[:g] + (e,) + free[g + 1 :], last[:g] + (j,) + last[g + 1 :]
                r2, p2, e2, b2, c2 = list(rnd), list(placed), list(rend), list(barrier), cost
                p2[j] += 1
                e2[j] = max(rend[j], e + job.sync_on(gt))
                if p2[j] == job.tasks_per_round:
                    r2[j], p2[j], b2[j], e2[j] = r2[j] + 1, 0, e2[j], 0
                    if r2[j] == job.rounds:
                        c2 += job.weight * b2[j]
                dfs(f2, l2, tuple(r2), tuple(p2), tuple(e2), tuple(b2), c2)

    n, m = len(jobs), len(gtypes)
    dfs((0,) * m, (-1,) * m, (0,) * n, (0,) * n, (0,) * n, tuple(j.release for j in jobs), 0)
    return int(best)


def smith(inst: Instance) -> int:
    """1||sum w_j C_j (one GPU, one task per job, no releases or sync): Smith's rule.

    Every task pays its setup (nothing runs before it, or another job did), so a job
    occupies p_j + o_j; ordering by (p_j + o_j) / w_j is optimal (exchange argument).
    """
    assert inst.num_gpus == 1 and (inst.rounds == 1).all() and (inst.tasks_per_round == 1).all()
    length = inst.proc[:, 0] + inst.overhead
    t = total = 0
    for j in sorted(range(inst.num_jobs), key=lambda j: length[j] / inst.weight[j]):
        t += int(length[j])
        total += int(inst.weight[j]) * t
    return total


def horn(inst: Instance) -> int:
    """R||sum C_j (one task per job, unit weights, no releases, sync or setups): the
    optimum of Horn's assignment of jobs to (GPU, position from the end) slots, where a
    job k-th from the end on GPU g counts k times its time there."""
    n, m = inst.num_jobs, inst.num_gpus
    big = 10**9
    cost = np.array(
        [
            [
                k * inst.proc[j, g] if inst.eligible[j, g] else big
                for g in range(m)
                for k in range(1, n + 1)
            ]
            for j in range(n)
        ]
    )
    rows, cols = linear_sum_assignment(cost)
    return int(cost[rows, cols].sum())


def one_job(inst: Instance) -> int:
    """A single job: its best round, then the same GPUs every round (no new setups)."""
    assert inst.num_jobs == 1
    rounds = int(inst.rounds[0])
    span = inst.min_round_time(0, setup=True) + (rounds - 1) * inst.min_round_time(0, setup=False)
    return int(inst.weight[0]) * (int(inst.release[0]) + span)


def round_time(proc, sync, count: int, setup: int) -> int:
    """min over all placements of ``count`` tasks of the latest (setup + n p + s) of a used GPU.

    The span depends only on how many tasks each GPU gets, so enumerating the
    count vectors covers every assignment.
    """
    best = math.inf
    for n in itertools.product(range(count + 1), repeat=len(proc)):
        if sum(n) == count:
            best = min(best, max(setup + c * p + s for c, p, s in zip(n, proc, sync) if c))
    return best
