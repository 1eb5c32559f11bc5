"""Combinatorial lower bounds: each job's critical path, and the cluster's load.

Both are valid for every feasible schedule (proofs in docs/theory.md (b),
section "Lower bounds"); both are exact integer or rational arithmetic, so a
bound can never exceed the optimum by a rounding error.
"""

from __future__ import annotations

import heapq
from fractions import Fraction

import numpy as np

from hare_opt.model import Instance


def critical_path(inst: Instance) -> np.ndarray:
    """(N,) earliest completion of each job even if it had the idle cluster to itself.

    Round 1 cannot start before release + setup on any GPU (none ran the job
    before), a later round not before the previous barrier, and a round whose
    n_g tasks run on GPU g lasts at least max_g (n_g p_g + s_g): the minimum over
    assignments is ``round_time_first`` / ``round_time_next``.
    """
    return inst.release + inst.round_time_first + (inst.rounds - 1) * inst.round_time_next


def critical_path_bound(inst: Instance) -> int:
    """sum_j w_j * critical_path_j."""
    return sum(int(w) * int(c) for w, c in zip(inst.weight, critical_path(inst)))


def cluster_work(inst: Instance) -> np.ndarray:
    """(N,) GPU time a job needs at the least: every task on its fastest type, one setup."""
    return inst.min_work + inst.overhead


def min_sync(inst: Instance) -> np.ndarray:
    """(N,) smallest sync time over the GPU types that can run the job."""
    big = np.iinfo(np.int64).max
    return np.where(inst.eligible_by_type, inst.sync_by_type, big).min(axis=1)


def preemptive_wspt(release: list[int], work: list[int], weight: list[int]) -> list[Fraction]:
    """Mean busy times of the preemptive schedule that always runs the released job of
    largest weight/work, on one machine of unit speed.

    This schedule minimises sum_j w_j (M_j + p_j/2) over all preemptive (and
    processor-sharing) schedules with these releases (Goemans, SODA 1997), so
    that sum is a lower bound for any schedule of the jobs on that machine.
    ``solvers.bnb._search._load`` is its float twin, run at every node of that search.
    """
    n = len(work)
    by_release = sorted(range(n), key=lambda j: (release[j], j))
    left = list(work)
    acc = [0] * n  # sum over pieces [a, b) of b^2 - a^2
    heap: list[tuple[Fraction, int]] = []
    t, i = 0, 0
    while i < n or heap:
        if not heap:
            t = max(t, release[by_release[i]])
        while i < n and release[by_release[i]] <= t:
            j = by_release[i]
            heapq.heappush(heap, (Fraction(work[j], weight[j]), j))
            i += 1
        j = heap[0][1]
        run = left[j] if i == n else min(left[j], release[by_release[i]] - t)
        acc[j] += (t + run) ** 2 - t**2
        left[j] -= run
        t += run
        if left[j] == 0:
            heapq.heappop(heap)
    return [Fraction(acc[j], 2 * work[j]) for j in range(n)]


def load_lp(inst: Instance) -> tuple[list[Fraction], list[Fraction]]:
    """Mean busy times M_j and work V_j, in time units, on the cluster seen as one machine.

    The machine does M units of GPU time per time unit; job j needs
    V_j = cluster_work_j / M of its time. Computed in units of 1/M to stay integral.
    """
    m = inst.num_gpus
    work = [int(x) for x in cluster_work(inst)]
    busy = preemptive_wspt([int(r) * m for r in inst.release], work, [int(w) for w in inst.weight])
    return [b / m for b in busy], [Fraction(x, m) for x in work]


def load_bound(inst: Instance) -> Fraction:
    """sum_j w_j (M_j + V_j/2 + min sync_j): the cluster as one machine of aggregate speed.

    Any schedule maps to a processor-sharing schedule of that machine (GPU g
    running job j's task for time p_jg does p_j,min of its work, a setup o_j of
    it); job j's last task ends at least V_j/2 after its mean busy time there,
    and its sync follows.
    """
    busy, vol = load_lp(inst)
    return sum(
        (
            int(w) * (b + v / 2 + int(s))
            for w, b, v, s in zip(inst.weight, busy, vol, min_sync(inst))
        ),
        Fraction(0),
    )
