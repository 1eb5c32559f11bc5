"""Numba kernel of Algorithm 1's step 3 (``paper_step3``): list scheduling in a given order.

Why compiled: an online plan list-schedules every remaining batch (10^5-10^6 in the
paper regime) at every re-plan; the Python rule costs about 10 us a task.
``paper_step3.list_schedule_reference`` is the rule in plain Python, and
tests/test_paper_planning.py checks that both give the same schedule.

Layout: GPUs of type k are ``srt[tptr[k]:tptr[k + 1]]``, kept sorted by (free, index)
(``_kernels._move``), so a type's candidates are a prefix of its segment: under
``phi`` the GPUs tied at the type's smallest free time, under ``start`` those free
no later than the best start found so far (a GPU free later cannot start earlier).
Within a type every GPU has the same task time, so the keys reduce to (start, index);
across types they are compared whole. State arrays are ``ClusterState``'s, updated in
place; ``buf`` receives the rows (job, round, task, gpu, start).
"""

from __future__ import annotations

import numpy as np

from hare_opt.heuristics._kernels import _move, _start
from hare_opt.heuristics._kernels import jit as _jit  # numba with the on-disk cache

_BIG = np.int64(1 << 62)


@_jit(callee=True)
def _better(a0, a1, a2, a3, b0, b1, b2, b3):
    """(a0, a1, a2, a3) < (b0, b1, b2, b3) lexicographically."""
    if a0 != b0:
        return a0 < b0
    if a1 != b1:
        return a1 < b1
    if a2 != b2:
        return a2 < b2
    return a3 < b3


@_jit(callee=True)
def _past(left, barrier, free, srt, tptr, elig, until):
    """``paper_step3.past``: no task of a job with positions left can start before
    ``until`` (its barrier and its types' earliest free GPUs are there or later)."""
    ntypes = tptr.size - 1
    for j in range(left.size):
        if left[j] <= 0 or barrier[j] >= until:
            continue
        for k in range(ntypes):
            if elig[j, k] and tptr[k + 1] > tptr[k] and free[srt[tptr[k]]] < until:
                return False
    return True


#: Positions between two horizon tests (each O(jobs x types)).
CHECK_EVERY = 32


@_jit
def list_schedule(
    order,
    rule_start,
    gtype,
    tptr,
    srt,
    ptab,
    stab,
    kpr,
    release,
    overhead,
    free,
    last,
    barrier,
    rnd,
    placed,
    round_end,
    buf,
    until,
    left,
    elig,
):
    """Place one task of job ``order[i]`` for each i, by the rule (``rule_start``: the
    earliest start, ties by end then index; else the smallest free time, ties by start,
    end, index), stopping before the first position from which no task can start before
    ``until`` (``_past``, tested every ``CHECK_EVERY`` positions: a later stop places
    tasks that start after ``until``, nothing else). ``left``: per job, positions left in
    the whole list, counted down. Returns the number of rows written to ``buf``."""
    ntypes = tptr.size - 1
    nb = 0
    for i in range(order.size):
        if (
            until < _BIG
            and i % CHECK_EVERY == 0
            and _past(left, barrier, free, srt, tptr, elig, until)
        ):
            break
        j = order[i]
        r, o, b = release[j], overhead[j], barrier[j]
        bk0, bk1, bk2, bg, bst = _BIG, _BIG, _BIG, -1, _BIG
        for k in range(ntypes):
            p = ptab[j, k]
            if p <= 0:
                continue
            lo, hi = tptr[k], tptr[k + 1]
            tg, tst = -1, _BIG  # the type's best GPU and its start
            if rule_start:
                for q in range(lo, hi):
                    g = srt[q]
                    if free[g] > tst:
                        break
                    st = _start(free[g], last[g] == j, r, o, b)
                    if st < tst or (st == tst and g < tg):
                        tg, tst = g, st
                if _better(tst, tst + p, tg, 0, bk0, bk1, bg, 0):
                    bk0, bk1, bg, bst = tst, tst + p, tg, tst
            else:
                f0 = free[srt[lo]]
                for q in range(lo, hi):
                    g = srt[q]
                    if free[g] != f0:
                        break
                    st = _start(f0, last[g] == j, r, o, b)
                    if st < tst or (st == tst and g < tg):
                        tg, tst = g, st
                if _better(f0, tst, tst + p, tg, bk0, bk1, bk2, bg):
                    bk0, bk1, bk2, bg, bst = f0, tst, tst + p, tg, tst
        g = bg
        k = gtype[g]
        left[j] -= 1
        end = bst + ptab[j, k]
        buf[nb, 0], buf[nb, 1], buf[nb, 2], buf[nb, 3], buf[nb, 4] = j, rnd[j], placed[j], g, bst
        nb += 1
        _move(free, srt, tptr[k], tptr[k + 1], g, end)
        last[g] = j
        round_end[j] = max(round_end[j], end + stab[j, k])
        placed[j] += 1
        if placed[j] == kpr[j]:
            barrier[j] = round_end[j]
            rnd[j] += 1
            placed[j] = 0
            round_end[j] = 0
    return nb
