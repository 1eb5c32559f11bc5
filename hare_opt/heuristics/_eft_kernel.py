"""Numba kernel of the relaxation's per-type starting point (``relaxation_points.eft_by_type``).

Why compiled: hare-paper builds this point at every re-plan, over every task of the
plan's relaxation (10^4 a plan at 160 GPUs); the NumPy loop costs about 35 us a task,
a quarter of a testbed plan. ``relaxation_points.eft_by_type_reference`` is the same
rule in NumPy; tests/test_relaxation.py checks both give the same point.

Per type the GPUs are scanned for the smallest (free, index): the heap order of the
reference. Jobs are compared by (earliest finish on any type) * n + rank, as there.
"""

from __future__ import annotations

import numpy as np

from hare_opt.heuristics._kernels import jit as _jit  # numba with the on-disk cache


@_jit(callee=True)
def _type_min(free, tgpu, lo, hi):
    """Position in ``tgpu[lo:hi]`` of the GPU with the smallest (free time, index)."""
    best = lo
    for q in range(lo + 1, hi):
        a, b = free[tgpu[q]], free[tgpu[best]]
        if a < b or (a == b and tgpu[q] < tgpu[best]):
            best = q
    return best


@_jit
def eft_by_type(free, tgpu, tptr, p, s, release, rounds, k_per_round, rank, elig, big, x, gpu):
    """Fill ``x`` (start) and ``gpu`` (type) of every task, job-major rows; returns each
    job's last barrier. ``free`` (per GPU, ceiled availability) is updated in place."""
    n, nt = p.shape
    first = np.zeros(n, dtype=np.int64)
    for j in range(1, n):
        first[j] = first[j - 1] + rounds[j - 1] * k_per_round[j - 1]
    barrier = release.copy()
    left = rounds.copy()
    placed = np.zeros(n, dtype=np.int64)
    round_end = np.zeros(n, dtype=np.int64)
    rnd = np.zeros(n, dtype=np.int64)
    fmin = np.empty(nt, dtype=np.int64)
    for k in range(nt):
        fmin[k] = free[tgpu[_type_min(free, tgpu, tptr[k], tptr[k + 1])]]
    fin = np.empty((n, nt), dtype=np.int64)
    for j in range(n):
        for k in range(nt):
            fin[j, k] = max(fmin[k], barrier[j]) + p[j, k] if elig[j, k] else big
    for _ in range(x.shape[0]):
        j, best = -1, 0
        for i in range(n):
            m = fin[i, 0]
            for k in range(1, nt):
                m = min(m, fin[i, k])
            key = m * n + rank[i]
            if j < 0 or key < best:
                j, best = i, key
        k = 0
        for t in range(1, nt):
            if fin[j, t] < fin[j, k]:
                k = t
        q = _type_min(free, tgpu, tptr[k], tptr[k + 1])
        g = tgpu[q]
        start = max(free[g], barrier[j])
        end = start + p[j, k]
        free[g] = end
        fmin[k] = free[tgpu[_type_min(free, tgpu, tptr[k], tptr[k + 1])]]
        row = first[j] + rnd[j] * k_per_round[j] + placed[j]
        x[row], gpu[row] = start, k
        round_end[j] = max(round_end[j], end + s[j, k])
        placed[j] += 1
        if placed[j] == k_per_round[j]:
            barrier[j], round_end[j], placed[j] = round_end[j], 0, 0
            rnd[j] += 1
            left[j] -= 1
        for i in range(n):
            fin[i, k] = max(fmin[k], barrier[i]) + p[i, k] if elig[i, k] and left[i] > 0 else big
        for t in range(nt):
            fin[j, t] = max(fmin[t], barrier[j]) + p[j, t] if elig[j, t] and left[j] > 0 else big
    return barrier
