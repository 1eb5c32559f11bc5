"""Numba kernel of ``geobatch``'s list scheduling: one batch, task by task, without idling.

Why compiled: the list schedule handles every task (10^6 on the benchmark
instances), and ``hare`` runs it as a candidate on every solve; in Python it
costs about 8 us a task. tests/test_geobatch.py replays the same rule in
plain Python and compares.

Layout: GPUs of type k are ``gseg[tptr[k]:tptr[k + 1]]`` (by index); the idle
ones of type k are ``idl[tptr[k]:tptr[k] + icnt[k]]``, kept sorted by index.
``ktypes[j, :nkt[j]]`` are job j's kept types by task time + sync (ties: type index).
Heaps hold (time, id) rows ordered lexicographically.
"""

from __future__ import annotations

import numpy as np

from hare_opt.heuristics._kernels import jit as _jit  # numba with the on-disk cache


@_jit(callee=True)
def _hpush(h, n, a, b):
    h[n, 0], h[n, 1] = a, b
    i = n
    while i > 0:
        p = (i - 1) // 2
        if h[p, 0] < h[i, 0] or (h[p, 0] == h[i, 0] and h[p, 1] <= h[i, 1]):
            break
        h[p, 0], h[i, 0] = h[i, 0], h[p, 0]
        h[p, 1], h[i, 1] = h[i, 1], h[p, 1]
        i = p
    return n + 1


@_jit(callee=True)
def _hpop(h, n):
    n -= 1
    h[0, 0], h[0, 1] = h[n, 0], h[n, 1]
    i = 0
    while True:
        a, b, m = 2 * i + 1, 2 * i + 2, i
        if a < n and (h[a, 0] < h[m, 0] or (h[a, 0] == h[m, 0] and h[a, 1] < h[m, 1])):
            m = a
        if b < n and (h[b, 0] < h[m, 0] or (h[b, 0] == h[m, 0] and h[b, 1] < h[m, 1])):
            m = b
        if m == i:
            return n
        h[m, 0], h[i, 0] = h[i, 0], h[m, 0]
        h[m, 1], h[i, 1] = h[i, 1], h[m, 1]
        i = m


@_jit(callee=True)
def _idle_add(idl, icnt, tptr, k, g):
    lo = tptr[k]
    i = lo + icnt[k]
    while i > lo and idl[i - 1] > g:
        idl[i] = idl[i - 1]
        i -= 1
    idl[i] = g
    icnt[k] += 1


@_jit(callee=True)
def _idle_del(idl, icnt, tptr, k, pos):
    hi = tptr[k] + icnt[k] - 1
    for i in range(pos, hi):
        idl[i] = idl[i + 1]
    icnt[k] -= 1


@_jit
def run_batch(
    jobs,
    start,
    gtype,
    tptr,
    ktypes,
    nkt,
    ptab,
    stab,
    over,
    kpr,
    rounds,
    release,
    last,
    rows,
    nr,
    done,
    idl,
    icnt,
    frees,
    bars,
):
    """List-schedule ``jobs`` (priority order) from ``start`` with every GPU idle; a job
    becomes ready at its release (an event like a barrier).

    Returns (time every GPU is free again, rows used). Fills ``rows[nr:]`` with
    (job, round, task, gpu, start), ``done[j]`` with C_j, updates ``last``.
    """
    nj = jobs.shape[0]
    m = gtype.shape[0]
    ntypes = tptr.shape[0] - 1
    used = np.zeros(ntypes, np.bool_)  # types some job of the batch may use
    for r in range(nj):
        for q in range(nkt[jobs[r]]):
            used[ktypes[jobs[r], q]] = True
    nidle = 0  # idle GPUs of used types: the loop's condition
    for k in range(ntypes):
        icnt[k] = 0
    for g in range(m):
        _idle_add(idl, icnt, tptr, gtype[g], g)
        nidle += used[gtype[g]]
    left = np.empty(nj, np.int64)
    rnd = np.zeros(nj, np.int64)
    carry = np.zeros(nj, np.int64)
    ready = np.empty(nj, np.int64)  # ranks with a ready unstarted task, ascending
    nready, nf, nb = 0, 0, 0
    for r in range(nj):
        left[r] = kpr[jobs[r]]
        if release[jobs[r]] <= start:
            ready[nready] = r
            nready += 1
        else:
            nb = _hpush(bars, nb, release[jobs[r]], r)
    t, end_all = start, start
    while True:
        pos = 0
        while nidle > 0 and pos < nready:
            r = ready[pos]
            j = jobs[r]
            for phase in range(2):  # GPUs that ran j last first, then the others
                for q in range(nkt[j]):
                    k = ktypes[j, q]
                    i = tptr[k]
                    while i < tptr[k] + icnt[k] and left[r] > 0:
                        g = idl[i]
                        same = last[g] == j
                        if same != (phase == 0):
                            i += 1
                            continue
                        st = t if same else t + over[j]
                        end = st + ptab[j, k]
                        rows[nr, 0], rows[nr, 1], rows[nr, 2] = j, rnd[r], kpr[j] - left[r]
                        rows[nr, 3], rows[nr, 4] = g, st
                        nr += 1
                        nf = _hpush(frees, nf, end, g)
                        end_all = max(end_all, end)
                        carry[r] = max(carry[r], end + stab[j, k])
                        last[g] = j
                        _idle_del(idl, icnt, tptr, k, i)
                        nidle -= 1
                        left[r] -= 1
            if left[r] > 0:
                pos += 1
                continue
            for i in range(pos, nready - 1):  # round fully started: wait for its barrier
                ready[i] = ready[i + 1]
            nready -= 1
            rnd[r] += 1
            if rnd[r] < rounds[j]:
                nb = _hpush(bars, nb, carry[r], r)
                left[r] = kpr[j]
                carry[r] = 0
            else:
                done[j] = carry[r]
        if nf == 0 and nb == 0:
            return end_all, nr
        t = frees[0, 0] if nf > 0 else bars[0, 0]
        if nb > 0 and bars[0, 0] < t:
            t = bars[0, 0]
        while nf > 0 and frees[0, 0] <= t:
            g = frees[0, 1]
            nf = _hpop(frees, nf)
            _idle_add(idl, icnt, tptr, gtype[g], g)
            nidle += used[gtype[g]]
        while nb > 0 and bars[0, 0] <= t:
            r = bars[0, 1]
            nb = _hpop(bars, nb)
            i = nready
            while i > 0 and ready[i - 1] > r:
                ready[i] = ready[i - 1]
                i -= 1
            ready[i] = r
            nready += 1
