"""numba kernels of the compiled gang engine; ``compiled.py`` drives them.

A transcription of the reference event loop (``reference.Simulator.loop``) and of the
gang policies' decisions (``policies/gang.py``, ``tiresias.py``, ``allox.py``,
``gavel_las.py``) over int64 arrays, so that a run is one compiled loop. Same events,
same order, same ties, hence the same schedules (tested task for task).

Resumable: ``run`` returns a code when it needs Python (AlloX's assignment, Gavel-LAS's
LP: library solves; under leases, Gavel's round decision of ``gavel-fifo`` and
``gavel-las``, ``policies/gavel.py``, at each round start) with all its state in the
arrays, and continues where it stopped when called again after the caller wrote the
answer. Layout (built by ``compiled.py``):

* ``ctl`` (CTL,): scalars, slots below (``LEASE``: -2 per-round, -1 whole jobs, else
  the lease length in time units).
* ``jfix`` (5, N): release, K, rounds, setup, and the round span ``srtf`` ranks by;
  ``jst`` (8, N): barrier, round, processing placed (busy), first start, setup time,
  arrived, finished, waiting; ``gst`` (4, M): free, last job, lease hold, processing.
* ``heap`` (H, 3): events (time, kind, index), ordered as the reference's tuples;
  ``buf`` (tasks, 5): the executed schedule (job, round, task, gpu, start).
* ``evb`` (3, N): the jobs arrived, opened and finished at the current time.
* ``req``/``pairs``: the waiting jobs handed to AlloX's assignment, its (job, type)
  answer; under Gavel's rounds ``pairs`` holds the gangs to start as (job, GPU) rows,
  a job's rows together; ``alloc``/``received`` (N, T): Gavel-LAS's LP shares and time received.
"""

from __future__ import annotations

import numpy as np

from hare_opt.model.rules import earliest_start
from hare_opt.util.jit import PinnedJit

#: Pin of ``model.rules.earliest_start`` (``util.jit.source_pin``), compiled in below.
jit = PinnedJit(earliest_start, "9382e7301981c6ae", __name__)
_start = jit(earliest_start)

# Return codes of ``run``.
DONE, NEED_LP, NEED_PAIRS, NO_EVENT, PAST_TIME, TOO_MANY_EVENTS, HEAP_FULL, NEED_ROUND = range(8)
# Policies.
FIFO, SRTF, TIRESIAS, ALLOX, LAS = range(5)
# Event kinds (``events.py``).
ARRIVE, FREE, BARRIER = 0, 1, 2
# Phases of the loop.
EVENTS, DECIDE, DECIDE_LP_DONE, APPLY, APPLY_ROUND = range(5)
# ``ctl`` slots.
(
    NOW,
    LEFT,
    NEVENTS,
    PHASE,
    NHEAP,
    NBUF,
    NARR,
    NOPEN,
    NFIN,
    NPAIRS,
    MAXTIME,
    MAXEVENTS,
    RESERVED,
    LEASE_IDLE,
    LEASES,
    LEASE,
    POLICY,
    NREQ,
    OVERFLOW,
    STALE,
    REALLOC,
    SOLVED_AT,
    GAVEL,
    LEASE_FIT,
) = range(24)
CTL = 24
PER_ROUND, WHOLE_JOB = -2, -1
# Rows of ``jfix``, ``jst``, ``gst``.
REL, K, ROUNDS, OVH, SPAN = range(5)
BARR, RND, BUSY, FIRST, SETUP, ARRIVED, FINISHED, WAITING = range(8)
GFREE, GLAST, GHOLD, GBUSY = range(4)


@jit
def _less(h, a, b):
    for c in range(3):
        if h[a, c] != h[b, c]:
            return h[a, c] < h[b, c]
    return False


@jit
def _swap(h, a, b):
    for c in range(3):
        h[a, c], h[b, c] = h[b, c], h[a, c]


@jit
def _push(h, ctl, t, kind, x):
    n = ctl[NHEAP]
    if n >= h.shape[0]:
        ctl[OVERFLOW] = 1
        return
    h[n, 0], h[n, 1], h[n, 2] = t, kind, x
    ctl[NHEAP] = n + 1
    while n > 0:
        up = (n - 1) // 2
        if not _less(h, n, up):
            break
        _swap(h, n, up)
        n = up


@jit
def _pop(h, ctl):
    """Remove the root (the caller has read it). The heap is this module's own, not the
    round engine's (``heuristics/_kernels.py``): numba's cache of a kernel follows the
    file it is in only, so a shared helper edited elsewhere would stay stale here."""
    n = ctl[NHEAP] - 1
    ctl[NHEAP] = n
    if n == 0:
        return
    _swap(h, 0, n)
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _less(h, c + 1, c):
            c += 1
        if not _less(h, c, i):
            break
        _swap(h, c, i)
        i = c


@jit
def _start_time(j, g, now, jfix, jst, gst):
    """``Simulator.start_time``: the spec's earliest start, never before now (+ setup)."""
    same = gst[GLAST, g] == j
    e = _start(gst[GFREE, g], same, jfix[REL, j], jfix[OVH, j], jst[BARR, j])
    floor = now if same else now + jfix[OVH, j]
    return max(e, floor)


@jit(callee=True)
def _start_gang(j, chosen, ctl, jfix, proc, sync, jst, gst, heap, buf):
    """``Simulator.start_gang``: one round (per-round) or the lease's rounds on
    ``chosen``; returns the rounds placed."""
    now, k, lease = ctl[NOW], jfix[K, j], ctl[LEASE]
    start = 0
    for i in range(k):
        start = max(start, _start_time(j, chosen[i], now, jfix, jst, gst))
    r0, ovh = jst[RND, j], jfix[OVH, j]
    setups, reserved, work, span = 0, 0, 0, 0
    for i in range(k):
        g = chosen[i]
        su = 0 if gst[GLAST, g] == j else ovh
        setups += su
        reserved += start - su - now
        work += proc[j, g]
        span = max(span, proc[j, g] + sync[j, g])
    n = 1
    if lease == WHOLE_JOB:
        n = jfix[ROUNDS, j] - r0
    elif lease != PER_ROUND:
        room = now + lease - start  # semantics.lease_rounds
        n = min(jfix[ROUNDS, j] - r0, max(1, room // span if ctl[LEASE_FIT] else -(-room // span)))
    nb = ctl[NBUF]
    for r in range(n):
        at = start + r * span
        for i in range(k):
            buf[nb, 0], buf[nb, 1], buf[nb, 2], buf[nb, 3], buf[nb, 4] = j, r0 + r, i, chosen[i], at
            nb += 1
    ctl[NBUF] = nb
    last, end = start + (n - 1) * span, start + n * span
    for i in range(k):
        g = chosen[i]
        p = proc[j, g]
        gst[GFREE, g] = last + p
        gst[GLAST, g] = j
        gst[GBUSY, g] += n * p
        if lease == PER_ROUND:
            _push(heap, ctl, start + p, FREE, g)
        else:
            gst[GHOLD, g] = end
    jst[BARR, j] = end
    jst[RND, j] = r0 + n
    jst[BUSY, j] += n * work
    jst[SETUP, j] += setups
    if jst[FIRST, j] < 0:
        jst[FIRST, j] = start
    ctl[RESERVED] += reserved
    if lease != PER_ROUND:
        ctl[LEASE_IDLE] += k * (end - now) - n * work - setups - reserved
        ctl[LEASES] += 1
    _push(heap, ctl, end, BARRIER, j)
    return n


@jit(callee=True)
def _best(j, cand, nc, pol, ctl, jfix, proc, sync, jst, gst, keys, chosen):
    """``GangPolicy.best`` over ``cand[:nc]`` (ascending): the K lowest keys (earliest
    finish; tiresias: none), ties by GPU index, into ``chosen``."""
    k = jfix[K, j]
    if pol == TIRESIAS:
        for i in range(k):
            chosen[i] = cand[i]
        return
    now = ctl[NOW]
    for i in range(nc):
        g = cand[i]
        keys[i] = _start_time(j, g, now, jfix, jst, gst) + proc[j, g] + sync[j, g]
    order = np.argsort(keys[:nc], kind="mergesort")
    for i in range(k):
        chosen[i] = cand[order[i]]


@jit(callee=True)
def _start_best(
    j, cand, nc, free, nfree, pol, ctl, jfix, proc, sync, jst, gst, heap, buf, keys, chosen
):
    """Start ``j`` on its best K of ``cand[:nc]``, which leave ``free[:nfree]`` (the same
    array or another); the job leaves the queue. Returns (rounds started, GPUs left)."""
    _best(j, cand, nc, pol, ctl, jfix, proc, sync, jst, gst, keys, chosen)
    n = _start_gang(j, chosen, ctl, jfix, proc, sync, jst, gst, heap, buf)
    jst[WAITING, j] = 0
    return n, _remove(free, nfree, chosen, jfix[K, j])


@jit(callee=True)
def _idle(ctl, gst, idle):
    """Idle GPUs (free and not held) in ascending order; returns how many."""
    now, ni = ctl[NOW], 0
    for g in range(gst.shape[1]):
        if max(gst[GFREE, g], gst[GHOLD, g]) <= now:
            idle[ni] = g
            ni += 1
    return ni


@jit(callee=True)
def _waiting(jst, w):
    nw = 0
    for j in range(jst.shape[1]):
        if jst[WAITING, j]:
            w[nw] = j
            nw += 1
    return nw


@jit(callee=True)
def _remove(lst, n, chosen, k):
    """``lst[:n]`` without ``chosen[:k]``, order kept; returns the new length."""
    m = 0
    for i in range(n):
        g = lst[i]
        keep = True
        for c in range(k):
            if chosen[c] == g:
                keep = False
                break
        if keep:
            lst[m] = g
            m += 1
    return m


@jit(callee=True)
def _eligible_idle(j, idle, ni, elig, cand):
    nc = 0
    for i in range(ni):
        if elig[j, idle[i]]:
            cand[nc] = idle[i]
            nc += 1
    return nc


@jit(callee=True)
def _decide_gang(ctl, jfix, proc, sync, elig, thr, jst, gst, heap, buf, s):
    """``GangPolicy.decide`` (gavel-fifo blocking; srtf, tiresias backfilling)."""
    w, prim, sec, idle, cand, keys, chosen = s
    pol = ctl[POLICY]
    nw = _waiting(jst, w)
    if nw == 0:
        return
    ni = _idle(ctl, gst, idle)
    if ni == 0:
        return
    if pol == FIFO:  # the oldest waiting job first; it blocks the queue until it fits
        while ni > 0 and nw > 0:
            h = 0
            for i in range(1, nw):
                a, b = w[i], w[h]
                if jfix[REL, a] < jfix[REL, b] or (jfix[REL, a] == jfix[REL, b] and a < b):
                    h = i
            j = w[h]
            nc = _eligible_idle(j, idle, ni, elig, cand)
            if nc < jfix[K, j]:
                return
            ni = _start_best(
                j, cand, nc, idle, ni, pol, ctl, jfix, proc, sync, jst, gst, heap, buf, keys, chosen
            )[1]
            w[h] = w[nw - 1]
            nw -= 1
        return
    # Backfilling: a job that does not fit the idle GPUs now never fits in this decision.
    nf = 0
    for i in range(nw):
        j = w[i]
        if _eligible_idle(j, idle, ni, elig, cand) >= jfix[K, j]:
            w[nf] = j
            nf += 1
    if nf == 0:
        return
    for i in range(nf):
        j = w[i]
        sec[i] = jfix[REL, j]
        if pol == SRTF:
            prim[i] = (jfix[ROUNDS, j] - jst[RND, j]) * jfix[SPAN, j]
        else:  # tiresias: the queue of its attained service
            b, q = float(jst[BUSY, j]), 0
            for t in range(len(thr)):
                if thr[t] <= b:
                    q += 1
            prim[i] = q
    o1 = np.argsort(sec[:nf], kind="mergesort")
    p1 = np.empty(nf, dtype=np.int64)
    for i in range(nf):
        p1[i] = prim[o1[i]]
    o2 = np.argsort(p1, kind="mergesort")
    for r in range(nf):
        if ni == 0:
            break
        j = w[o1[o2[r]]]
        nc = _eligible_idle(j, idle, ni, elig, cand)
        if nc >= jfix[K, j]:
            ni = _start_best(
                j, cand, nc, idle, ni, pol, ctl, jfix, proc, sync, jst, gst, heap, buf, keys, chosen
            )[1]


@jit(callee=True)
def _free_by_type(ctl, gst, gtype, idle, freeg, nfree):
    """Idle GPUs per type, ascending (``GangPolicy.idle_by_type``)."""
    ni = _idle(ctl, gst, idle)
    nfree[:] = 0
    for i in range(ni):
        t = gtype[idle[i]]
        freeg[t, nfree[t]] = idle[i]
        nfree[t] += 1
    return ni


@jit(callee=True)
def _start_on_type(j, t, ctl, jfix, proc, sync, jst, gst, heap, buf, freeg, nfree, keys, chosen):
    """``GangPolicy.start_on_type``: rounds started (0: it did not fit)."""
    if not jst[WAITING, j] or nfree[t] < jfix[K, j]:
        return 0
    n, nfree[t] = _start_best(
        j,
        freeg[t],
        nfree[t],
        freeg[t],
        nfree[t],
        LAS,
        ctl,
        jfix,
        proc,
        sync,
        jst,
        gst,
        heap,
        buf,
        keys,
        chosen,
    )
    return n


@jit(callee=True)
def _decide_las(
    ctl,
    jfix,
    proc,
    sync,
    fits,
    pbt,
    alloc,
    received,
    jst,
    gst,
    gtype,
    heap,
    buf,
    s,
    freeg,
    nfree,
    pneg,
    prel,
    pjob,
    ptyp,
):
    """``GavelLASPolicy.decide`` after its LP: (job, type) pairs by priority share
    allocated / share received, highest first; ties by arrival, job, type."""
    w, _, _, idle, _, keys, chosen = s
    nw = _waiting(jst, w)
    if nw == 0:
        return
    if _free_by_type(ctl, gst, gtype, idle, freeg, nfree) == 0:
        return
    now, npair = ctl[NOW], 0
    for i in range(nw):
        j = w[i]
        age = max(1, now - jfix[REL, j])
        for t in range(fits.shape[1]):
            if fits[j, t] and jfix[K, j] <= nfree[t]:  # the others cannot start now
                share = received[j, t] / age
                pneg[npair] = -(alloc[j, t] / max(share, 1e-9))
                prel[npair], pjob[npair], ptyp[npair] = jfix[REL, j], j, t
                npair += 1
    o1 = np.argsort(prel[:npair], kind="mergesort")
    p1 = np.empty(npair)
    for i in range(npair):
        p1[i] = pneg[o1[i]]
    o2 = np.argsort(p1, kind="mergesort")
    for r in range(npair):
        q = o1[o2[r]]
        j, t = pjob[q], ptyp[q]
        n = _start_on_type(
            j, t, ctl, jfix, proc, sync, jst, gst, heap, buf, freeg, nfree, keys, chosen
        )
        if n:
            received[j, t] += float(n * pbt[j, t])


@jit(callee=True)
def _startable(ctl, jfix, fits, jst, gst, gtype, s, freeg, nfree):
    """Waiting jobs, if some (job, type) pair fits the idle GPUs now (else 0: a decision
    of allox starts nothing, whatever its assignment says)."""
    w, _, _, idle, _, _, _ = s
    nw = _waiting(jst, w)
    if nw == 0 or _free_by_type(ctl, gst, gtype, idle, freeg, nfree) == 0:
        return 0
    for i in range(nw):
        j = w[i]
        for t in range(fits.shape[1]):
            if fits[j, t] and jfix[K, j] <= nfree[t]:
                return nw
    return 0


@jit
def run(
    ctl,
    jfix,
    proc,
    sync,
    elig,
    gtype,
    fits,
    pbt,
    thr,
    jst,
    gst,
    heap,
    buf,
    evb,
    req,
    pairs,
    alloc,
    received,
):
    """Advance the simulation until it ends (``DONE``), needs Python (``NEED_LP``,
    ``NEED_PAIRS``, ``NEED_ROUND``) or cannot go on (a guard's code)."""
    n, m, nt = jst.shape[1], gst.shape[1], fits.shape[1]
    s = (
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty(m, dtype=np.int64),
        np.empty(m, dtype=np.int64),
        np.empty(m, dtype=np.int64),
        np.empty(m, dtype=np.int64),
    )
    freeg = np.empty((nt, m), dtype=np.int64)
    nfree = np.zeros(nt, dtype=np.int64)
    pneg = np.empty(n * nt)
    prel = np.empty(n * nt, dtype=np.int64)
    pjob = np.empty(n * nt, dtype=np.int64)
    ptyp = np.empty(n * nt, dtype=np.int64)
    pol = ctl[POLICY]
    while True:
        if ctl[OVERFLOW]:
            return HEAP_FULL
        phase = ctl[PHASE]
        if phase == EVENTS:
            if ctl[LEFT] == 0:
                return DONE
            if ctl[NHEAP] == 0:
                return NO_EVENT
            t = heap[0, 0]
            if t > ctl[MAXTIME]:
                return PAST_TIME
            ctl[NOW] = t
            na, no, nf = 0, 0, 0
            while ctl[NHEAP] > 0 and heap[0, 0] == t:  # in (time, kind, index) order
                kind, x = heap[0, 1], heap[0, 2]
                _pop(heap, ctl)
                if kind == ARRIVE:
                    jst[ARRIVED, x] = 1
                    evb[0, na] = x
                    na += 1
                elif kind == BARRIER:
                    done = jst[RND, x] >= jfix[ROUNDS, x]
                    if done and jst[BARR, x] == t:
                        jst[FINISHED, x] = 1
                        evb[2, nf] = x
                        nf += 1
                        ctl[LEFT] -= 1
                    elif not done:
                        evb[1, no] = x
                        no += 1
            ctl[NARR], ctl[NOPEN], ctl[NFIN] = na, no, nf
            ctl[NEVENTS] += 1
            if ctl[NEVENTS] > ctl[MAXEVENTS]:
                return TOO_MANY_EVENTS
            if ctl[LEFT] == 0:
                return DONE
            ctl[PHASE] = DECIDE
        elif phase == DECIDE:
            if ctl[GAVEL]:  # policies/gang.py gavel_decide: a round starts when all is idle
                ctl[PHASE] = EVENTS
                if _idle(ctl, gst, s[3]) == m:
                    ctl[PHASE] = APPLY_ROUND
                    return NEED_ROUND
                continue
            for i in range(ctl[NARR]):
                jst[WAITING, evb[0, i]] = 1
            for i in range(ctl[NOPEN]):
                jst[WAITING, evb[1, i]] = 1
            ctl[PHASE] = DECIDE_LP_DONE
            if pol == LAS:  # GavelLASPolicy.decide: the LP of the active jobs, when due
                if ctl[NARR] + ctl[NFIN] > 0:
                    ctl[STALE] = 1
                if (
                    ctl[STALE]
                    and (ctl[SOLVED_AT] < 0 or ctl[NOW] - ctl[SOLVED_AT] >= ctl[REALLOC])
                    and _waiting(jst, s[0])
                    and _idle(ctl, gst, s[3])
                ):
                    ctl[STALE], ctl[SOLVED_AT] = 0, ctl[NOW]
                    return NEED_LP
        elif phase == DECIDE_LP_DONE:
            ctl[PHASE] = EVENTS
            if pol == ALLOX:
                nw = _startable(ctl, jfix, fits, jst, gst, gtype, s, freeg, nfree)
                if nw:
                    for i in range(nw):  # element-wise: see ``_kernels._pop``
                        req[i] = s[0][i]
                    ctl[NREQ] = nw
                    ctl[PHASE] = APPLY
                    return NEED_PAIRS
            elif pol == LAS:
                _decide_las(
                    ctl,
                    jfix,
                    proc,
                    sync,
                    fits,
                    pbt,
                    alloc,
                    received,
                    jst,
                    gst,
                    gtype,
                    heap,
                    buf,
                    s,
                    freeg,
                    nfree,
                    pneg,
                    prel,
                    pjob,
                    ptyp,
                )
            else:
                _decide_gang(ctl, jfix, proc, sync, elig, thr, jst, gst, heap, buf, s)
        elif phase == APPLY_ROUND:  # Gavel's round: the gangs in ``pairs``, in order
            ctl[PHASE] = EVENTS
            chosen = s[6]
            i = 0
            while i < ctl[NPAIRS]:
                j, k = pairs[i, 0], 0
                while i < ctl[NPAIRS] and pairs[i, 0] == j:
                    chosen[k] = pairs[i, 1]
                    k += 1
                    i += 1
                _start_gang(j, chosen, ctl, jfix, proc, sync, jst, gst, heap, buf)
        else:  # APPLY: AlloX's answer, tried in order (GangPolicy.start_on_type)
            ctl[PHASE] = EVENTS
            _free_by_type(ctl, gst, gtype, s[3], freeg, nfree)
            for i in range(ctl[NPAIRS]):
                _start_on_type(
                    pairs[i, 0],
                    pairs[i, 1],
                    ctl,
                    jfix,
                    proc,
                    sync,
                    jst,
                    gst,
                    heap,
                    buf,
                    freeg,
                    nfree,
                    s[5],
                    s[6],
                )
