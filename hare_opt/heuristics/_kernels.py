"""Numba kernels of the round engine: ``rounds.py`` says what a round placement is.

Why plain arrays: the dispatch loop runs ~10^5 rounds of a few tasks each, so it
must compile as a whole; numba compiles loops over int64 arrays, not Python
objects. State layout (built by ``rounds.RoundEngine``):

* ``gst`` (3, M): per GPU ``free`` and ``last`` job (-1: none); row 2 (``srt``)
  holds every GPU sorted by (free, gpu) within its type's segment
  ``tptr[k]:tptr[k + 1]``. A type's two streams (GPUs that ran the job last,
  and the others) are filters of that segment: an O(M_k) scan at worst, cheaper
  than keeping sorted lists per job; the scan stops once the stream's GPUs are out.
* ``jst`` (4 + T, N): per job ``barrier``, ``rnd`` (round being placed), ``left``
  (tasks of that round still to place), ``carry`` (max end + sync of its tasks
  already placed), then per type k how many of its GPUs ran the job last (row 4 + k);
  ``fix`` (3, N): tasks per round, release, overhead.
* ``buf``: the runs (job, round, first task, gpu, count, start, period, rounds), grown
  by doubling: ``count`` tasks back to back from ``start``, in ``rounds`` rounds
  ``period`` apart (one round: period 0).

Repeats: in a dispatch most rounds take the same GPUs as the job's round before, each
run at the barrier. ``_repeat_limit`` proves for how many rounds that goes on for a job
placed alone (serial, the -hold dispatch: about 95% of the rounds at 300 jobs on 160
GPUs), ``_repeat_side_by_side`` for every job of a work-conserving dispatch at once
while no job is ready (jobs running side by side, each in its own period), and
``_repeat`` places them in one step, as periodic runs: the same tasks as one round at a
time (tested), at a fraction of the cost.

Compiled with numba's on-disk cache through ``util.jit.PinnedJit``: the spec's start
rule (``model.rules.earliest_start``) is compiled in, and its pin below makes an edit
of the rule visible (until the pin is updated the cache is off, and a test fails).
"""

from __future__ import annotations

import numpy as np

from hare_opt.model.rules import earliest_start
from hare_opt.util.jit import PinnedJit

#: Rounds with more tasks than this are filled by bisection on the barrier, not slot by slot.
STREAM_LIMIT = 256
_BIG = np.int64(1 << 62)
#: Added to own slots' tie key (``_tie``): larger than any time.
_OWN = np.int64(1 << 61)
#: Pin of ``model.rules.earliest_start`` (``util.jit.source_pin``), compiled in below.
jit = PinnedJit(earliest_start, "9382e7301981c6ae", __name__)
_start = jit(earliest_start)


@jit(callee=True)
def _count_free_by(free, srt, lo, hi, tie):
    """How many GPUs of the segment are free by ``tie`` (bisection on the sorted segment)."""
    a, b = lo, hi
    while a < b:
        mid = (a + b) // 2
        if free[srt[mid]] <= tie:
            a = mid + 1
        else:
            b = mid
    return a - lo


@jit(callee=True)
def _open_type(k, j, lo, hi, free, srt, own, rem, tie_n, step, r, o, b):
    """Start type k's two slot streams for job j (``2k + 1``: the GPUs that ran j last,
    no setup; ``2k``: the others): their sizes, the GPUs tied at their earliest start,
    and no step taken yet."""
    rem[2 * k + 1], rem[2 * k] = own[k, j], hi - lo - own[k, j]
    tie_n[2 * k + 1] = _count_free_by(free, srt, lo, hi, b) if own[k, j] else 0
    tie_n[2 * k] = _count_free_by(free, srt, lo, hi, max(r, b - o))
    step[2 * k + 1] = 0
    step[2 * k] = 0


@jit(callee=True)
def _next(sid, j, srt, lo, hi, last, tie_n, step, rem):
    """Next GPU of stream ``sid`` (-1 when exhausted): the first ``tie_n`` GPUs of the
    segment (their first slots tie) latest-freed first, then the rest by free time;
    odd ``sid``: GPUs whose last job is j, even: the others. ``rem[sid]``: how many of
    the stream's GPUs are still to come (the scan stops there)."""
    if rem[sid] == 0:
        step[sid] = hi - lo
        return -1
    mine = sid & 1 == 1
    i, s, n = tie_n[sid], step[sid], hi - lo
    while s < n:
        g = srt[lo + (i - 1 - s if s < i else s)]
        s += 1
        if (last[g] == j) == mine:
            step[sid] = s
            rem[sid] -= 1
            return g
    step[sid] = s
    return -1


@jit
def _less(h, a, b):
    """Heap order of slots: end, then later-freed GPU first, then GPU index."""
    for c in range(3):
        if h[a, c] != h[b, c]:
            return h[a, c] < h[b, c]
    return False


@jit
def _swap_rows(h, a, b):
    for x in range(h.shape[1]):
        h[a, x], h[b, x] = h[b, x], h[a, x]


@jit
def _sift_down(h, n, i):
    """Restore the heap order of ``h[:n]`` below row ``i`` after that row grew."""
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and _less(h, c + 1, c):
            c += 1
        if not _less(h, c, i):
            return
        _swap_rows(h, i, c)
        i = c


@jit(callee=True)
def _sift_up(h, i):
    """Restore the heap order after an entry was appended at ``h[i]``."""
    while i > 0:
        p = (i - 1) // 2
        if not _less(h, i, p):
            return
        _swap_rows(h, i, p)
        i = p


@jit(callee=True)
def _push_block(buf, nb, j, rnd, task0, g, count, start):
    if nb == buf.shape[0]:
        bigger = np.empty((2 * nb + 16, buf.shape[1]), dtype=np.int64)
        for q in range(nb):  # element-wise: see ``_pop``
            for c in range(buf.shape[1]):
                bigger[q, c] = buf[q, c]
        buf = bigger
    buf[nb, 0], buf[nb, 1], buf[nb, 2] = j, rnd, task0
    buf[nb, 3], buf[nb, 4], buf[nb, 5] = g, count, start
    buf[nb, 6], buf[nb, 7] = 0, 1
    return buf, nb + 1


@jit(callee=True)
def _last_start(buf, q):
    """Start of the last round of run ``buf[q]`` (one round, or ``rounds`` a period apart)."""
    return buf[q, 5] + (buf[q, 7] - 1) * buf[q, 6]


@jit
def _move(free, srt, lo, hi, g, end):
    """GPU g becomes free at ``end`` (later than now): keep its segment sorted."""
    a, b = lo, hi  # find g: bisection on (free, gpu)
    f = free[g]
    while a < b:
        mid = (a + b) // 2
        h = srt[mid]
        if free[h] < f or (free[h] == f and h < g):
            a = mid + 1
        else:
            b = mid
    x = a
    while x + 1 < hi:
        h = srt[x + 1]
        if free[h] > end or (free[h] == end and h > g):
            break
        srt[x] = h
        x += 1
    srt[x] = g
    free[g] = end


@jit(callee=True)
def _smallest_slots(cand, nc, count, cnt):
    """Tasks per candidate (rows: first slot end, p, gpu, start) so that the ``count``
    earliest slots are used: the least barrier T with ``count`` slots ending by T,
    found by bisection; slots ending exactly at T are dropped from the first
    candidates (in stream order) until ``count`` remain. Writes ``cnt[gpu]``."""
    best = 0
    for c in range(1, nc):
        if cand[c, 0] < cand[best, 0]:
            best = c
    lo = cand[best, 0]
    hi = lo + (count - 1) * cand[best, 1]
    while lo < hi:
        mid = (lo + hi) // 2
        tot = 0
        for c in range(nc):
            tot += max((mid - cand[c, 0]) // cand[c, 1] + 1, 0)
        if tot >= count:
            hi = mid
        else:
            lo = mid + 1
    surplus = -count
    for c in range(nc):
        n = max((lo - cand[c, 0]) // cand[c, 1] + 1, 0)
        cnt[cand[c, 2]] = n
        surplus += n
    for c in range(nc):
        if surplus == 0:
            break
        g = cand[c, 2]
        if cnt[g] > 0 and cand[c, 0] + (cnt[g] - 1) * cand[c, 1] == lo:
            cnt[g] -= 1
            surplus -= 1


@jit(callee=True, inline="always")
def _tie(free, own):
    """A slot's second key, after its end: GPUs that ran the job last first (no setup,
    and the GPU stays with its job), then the one freed last (best fit)."""
    return -free - (_OWN if own else 0)


@jit(callee=True, inline="always")
def _booked(g, j, free, last, guard, t):
    """Whether job j may not take a slot on GPU g now: g is still busy at clock t with a
    job that ranks before j in the dispatch (``guard[0]``) and has rounds left
    (``guard[1]``), so that job's next round is not pushed back by a later job's batch
    booked on its GPU. (Free GPUs are offered to all: that is work conservation.)"""
    i = last[g]
    return i >= 0 and i != j and free[g] > t and guard[1, i] > 0 and guard[0, i] < guard[0, j]


@jit(callee=True, forceinline=True)  # per slot: a call with 17 arguments costs ~15% at 10^6 tasks
def _head(
    heap,
    at,
    sid,
    j,
    k,
    ptab,
    ktab,
    tptr,
    srt,
    free,
    last,
    tie_n,
    step,
    rem,
    r,
    o,
    b,
    guard,
    t,
):
    """Write stream ``sid``'s next GPU not ``_booked`` as heap row ``at``: (first slot key,
    tie key, gpu, start, sid); False when the stream is exhausted."""
    g = _next(sid, j, srt, tptr[k], tptr[k + 1], last, tie_n, step, rem)
    while g >= 0 and _booked(g, j, free, last, guard, t):
        g = _next(sid, j, srt, tptr[k], tptr[k + 1], last, tie_n, step, rem)
    if g < 0:
        return False
    st = _start(free[g], sid & 1 == 1, r, o, b)
    heap[at, 0] = st + ptab[j, k] + ktab[j, k]
    heap[at, 1], heap[at, 2], heap[at, 3], heap[at, 4] = _tie(free[g], sid & 1 == 1), g, st, sid
    return True


@jit
def place_round(j, gtype, tptr, fix, ptab, stab, ktab, gst, jst, ws, heap, buf, nb, guard, t):
    """Place job j's next round (see ``RoundEngine.place_round``) at clock t, on GPUs not
    ``_booked`` (``guard`` all zero: any GPU); returns (barrier, buf, nb). Slots are
    ranked by end + ``ktab[j, k]`` (the sync when ranked sync first, plus the slot
    penalty), the barrier uses ``stab``. ``ws`` (6, M + 2T) and ``heap`` (M + 2T, 5) are
    scratch."""
    free, last, srt = gst[0], gst[1], gst[2]
    barrier, rnd, left, carry = jst[0], jst[1], jst[2], jst[3]
    K, b, r, o = left[j], barrier[j], fix[1, j], fix[2, j]
    ntypes = tptr.size - 1
    tie_n, step, cnt, run_st, order, rem = ws[0], ws[1], ws[2], ws[3], ws[4], ws[5]
    own = jst[4:]
    for k in range(ntypes):
        if ptab[j, k] > 0:
            lo, hi = tptr[k], tptr[k + 1]
            _open_type(k, j, lo, hi, free, srt, own, rem, tie_n, step, r, o, b)
    nruns = 0
    if K > STREAM_LIMIT:  # huge rounds: every GPU is a candidate
        nc = 0
        for k in range(ntypes):
            if ptab[j, k] > 0:
                for sid in (2 * k + 1, 2 * k):
                    while _head(
                        heap,
                        nc,
                        sid,
                        j,
                        k,
                        ptab,
                        ktab,
                        tptr,
                        srt,
                        free,
                        last,
                        tie_n,
                        step,
                        rem,
                        r,
                        o,
                        b,
                        guard,
                        t,
                    ):
                        heap[nc, 1] = ptab[j, k]  # bisection rows: (end, p, gpu, start)
                        nc += 1
        _smallest_slots(heap, nc, K, cnt)
        for c in range(nc):
            g = heap[c, 2]
            if cnt[g] > 0:
                run_st[g] = heap[c, 3]
                order[nruns] = g
                nruns += 1
    else:  # merge the streams slot by slot
        hn = 0
        for k in range(ntypes):
            if ptab[j, k] > 0:
                for sid in (2 * k + 1, 2 * k):
                    if _head(
                        heap,
                        hn,
                        sid,
                        j,
                        k,
                        ptab,
                        ktab,
                        tptr,
                        srt,
                        free,
                        last,
                        tie_n,
                        step,
                        rem,
                        r,
                        o,
                        b,
                        guard,
                        t,
                    ):
                        hn += 1
                        _sift_up(heap, hn - 1)
        for _ in range(K):
            e, g, st, sid = heap[0, 0], heap[0, 2], heap[0, 3], heap[0, 4]
            if cnt[g] == 0:
                run_st[g] = st
                order[nruns] = g
                nruns += 1
            cnt[g] += 1
            k = gtype[g]
            heap[0, 0], heap[0, 4] = e + ptab[j, k], -1  # the GPU's next slot
            _sift_down(heap, hn, 0)
            if sid >= 0 and _head(
                heap,
                hn,
                sid,
                j,
                k,
                ptab,
                ktab,
                tptr,
                srt,
                free,
                last,
                tie_n,
                step,
                rem,
                r,
                o,
                b,
                guard,
                t,
            ):
                hn += 1
                _sift_up(heap, hn - 1)
    rd, task0, end_sync = rnd[j], fix[0, j] - K, carry[j]
    for q in range(nruns):
        g = order[q]
        n, st = cnt[g], run_st[g]
        cnt[g] = 0
        buf, nb = _push_block(buf, nb, j, rd, task0, g, n, st)
        task0 += n
        k = gtype[g]
        end = st + n * ptab[j, k]
        end_sync = max(end_sync, end + stab[j, k])
        _move(free, srt, tptr[k], tptr[k + 1], g, end)
        if last[g] != j:
            if last[g] >= 0:
                own[k, last[g]] -= 1
            own[k, j] += 1
            last[g] = j
    barrier[j] = end_sync
    rnd[j] = rd + 1
    if fix[0, j] != K:  # a partly started round is complete: the next ones are whole
        left[j], carry[j] = fix[0, j], 0
    return end_sync, buf, nb


@jit(callee=True)
def _same_shape(buf, a0, a1, ba, b0, b1, bb):
    """Whether the last rounds of runs ``buf[a0:a1]`` and ``buf[b0:b1]`` (placed from
    barriers ``ba`` and ``bb``) are one shape: the same GPUs and counts in the same
    order, every run starting at its round's barrier."""
    if a1 - a0 != b1 - b0:
        return False
    for q in range(a1 - a0):
        x, y = a0 + q, b0 + q
        if (
            buf[x, 3] != buf[y, 3]
            or buf[x, 4] != buf[y, 4]
            or _last_start(buf, x) != ba
            or _last_start(buf, y) != bb
        ):
            return False
    return True


@jit(callee=True)
def _round_keys(j, buf, s0, s1, sync_first, gtype, ptab, stab):
    """(span, dmax, phi, gmax) of job j's round ``buf[s0:s1]``, placed in the shape of the
    round before it from barrier b: the period, and the largest key the round takes,
    (b + dmax, -(b + phi), gmax) (end (+ sync), its GPU's free time, the GPU)."""
    span = 0
    for q in range(s0, s1):
        k = gtype[buf[q, 3]]
        span = max(span, buf[q, 4] * ptab[j, k] + stab[j, k])
    dmax, phi, gmax = -1, 0, -1
    for q in range(s0, s1):
        g, c = buf[q, 3], buf[q, 4]
        k = gtype[g]
        p = ptab[j, k]
        d = p + (stab[j, k] if sync_first else 0) + (c - 1) * p
        f = c * p - span
        if d > dmax or (d == dmax and (f < phi or (f == phi and g > gmax))):
            dmax, phi, gmax = d, f, g
    return span, dmax, phi, gmax


@jit(callee=True)
def _static_limit(
    j, buf, s0, s1, b, span, dmax, phi, gmax, sync_first, gtype, tptr, fix, ptab, stab, gst, mark
):
    """The last barrier up to which no GPU g with ``mark[g] == 0``, in the state it has
    now, takes a slot of job j's round ``buf[s0:s1]`` repeated (``_repeat_limit``)."""
    r, o = fix[1, j], fix[2, j]
    limit = _BIG
    for k in range(tptr.size - 1):
        ps = ptab[j, k] + (stab[j, k] if sync_first else 0)
        if ptab[j, k] == 0 or ps > dmax:
            continue  # ineligible, or its first slot always ends after the round's last
        for at_k in range(tptr[k], tptr[k + 1]):
            g = gst[2, at_k]
            if mark[g]:
                continue
            fg, own = gst[0, g], gst[1, g] == j
            a = fg if own else max(fg, r) + o
            if ps < dmax:
                lim = a + ps - dmax - 1
            elif not own:  # ties go to the round's GPUs, which ran j last (``_tie``)
                lim = _BIG
            else:
                at = max(a, b)
                lim = _BIG if fg < at + phi or (fg == at + phi and g > gmax) else at - 1
            if own:  # in j's stream, g must stay behind the round's GPUs of its type
                for q in range(s0, s1):
                    x = buf[q, 3]
                    fx = b - span + buf[q, 4] * ptab[j, k]  # x's free time at barrier b
                    if gtype[x] == k and (fg > fx or (fg == fx and g > x)):
                        lim = min(lim, (fg if fg > b else b) - 1)
            limit = min(limit, lim)
    return limit


@jit(callee=True)
def _repeat_limit(j, buf, s0, s1, b, sync_first, gtype, tptr, fix, ptab, stab, gst, mark):
    """(period, last barrier): job j's round ``buf[s0:s1]``, placed from barrier ``b`` in
    the shape of the round before it (``_same_shape``), is placed again in that shape,
    one period later each time, from every barrier up to the last (< b: not even once).

    Why: the round's GPUs (set S) ran j last and start each round at its barrier, so
    their slots' keys (end, -free, gpu) only shift; every other GPU g keeps its state,
    and its first slot ends at max(A_g, b) + p (+ s), A_g its earliest start but for the
    barrier. While every such key stays above the largest key the round takes, the
    merge never takes g's slot, and takes the same slots as before. g's lead in end
    shrinks while b grows to A_g, then stays; at equal ends the free-time tie moves in
    S's favour. So each g allows the barriers below a threshold (conservative at ties).
    ``mark`` (M,) is zero scratch.
    """
    span, dmax, phi, gmax = _round_keys(j, buf, s0, s1, sync_first, gtype, ptab, stab)
    for q in range(s0, s1):
        mark[buf[q, 3]] = 1
    limit = _static_limit(
        j,
        buf,
        s0,
        s1,
        b,
        span,
        dmax,
        phi,
        gmax,
        sync_first,
        gtype,
        tptr,
        fix,
        ptab,
        stab,
        gst,
        mark,
    )
    for q in range(s0, s1):
        mark[buf[q, 3]] = 0
    return span, limit


@jit(callee=True)
def _repeat(j, n, s0, s1, span, gtype, tptr, ptab, gst, jst, buf):
    """Place job j's next ``n`` rounds in the shape of ``buf[s0:s1]`` (its last round,
    just placed), each at the previous round's barrier, ``span`` apart: what ``n`` calls
    of ``place_round`` would do once ``_repeat_limit`` allows it. The runs become
    periodic: ``rounds`` rounds, ``period`` apart (no row per round)."""
    free, last, srt = gst[0], gst[1], gst[2]
    barrier, rnd = jst[0], jst[1]
    last_start = barrier[j] + (n - 1) * span
    for q in range(s0, s1):
        g = buf[q, 3]
        k = gtype[g]
        buf[q, 6], buf[q, 7] = span, buf[q, 7] + n
        _move(free, srt, tptr[k], tptr[k + 1], g, last_start + buf[q, 4] * ptab[j, k])
        last[g] = j
    barrier[j] = last_start + span
    rnd[j] += n


@jit
def run_serial(
    order,
    rounds,
    repeat,
    sync_first,
    gtype,
    tptr,
    fix,
    ptab,
    stab,
    ktab,
    gst,
    jst,
    ws,
    heap,
    buf,
    nb,
):
    """Each job of ``order`` in turn, all its rounds; with ``repeat``, rounds that provably
    repeat the last one's shape are placed in one step (``_repeat_limit``: the same
    blocks as one by one). Returns (buf, nb, rounds placed that way)."""
    repeated = 0
    anyone = np.zeros((2, rounds.size), dtype=np.int64)  # ``place_round`` on any GPU
    for j in order:
        left = rounds[j]
        pa0, pa1, pb = -1, -1, -1
        while left:
            b, nb0 = jst[0, j], nb
            _, buf, nb = place_round(
                j,
                gtype,
                tptr,
                fix,
                ptab,
                stab,
                ktab,
                gst,
                jst,
                ws,
                heap,
                buf,
                nb,
                anyone,
                0,
            )
            left -= 1
            if (
                repeat
                and left
                and _same_shape(buf, pa0, pa1, pb, nb0, nb, b)
                and fix[0, j] <= STREAM_LIMIT
            ):
                span, limit = _repeat_limit(
                    j, buf, nb0, nb, jst[0, j], sync_first, gtype, tptr, fix, ptab, stab, gst, ws[2]
                )
                if limit >= jst[0, j]:
                    n = min(left, (limit - jst[0, j]) // span + 1)
                    _repeat(j, n, nb0, nb, span, gtype, tptr, ptab, gst, jst, buf)
                    left -= n
                    repeated += n
                    b = jst[0, j] - span
            pa0, pa1, pb = nb0, nb, b
    return buf, nb, repeated


@jit
def _pop(h, n):
    """Drop the top of the heap ``h[:n]``; returns the new size."""
    n -= 1
    for c in range(h.shape[1]):  # not ``h[0] = h[n]``: an array copied into a slice
        h[0, c] = h[n, c]  # compiles numba's shape-mismatch message (string code, ~2 s)
    _sift_down(h, n, 0)
    return n


@jit(callee=True)
def _wait(gheap, gptr, gsize, q, barrier, rank, j):
    """Job j waits for its next round in group q's heap (slice of ``gheap``)."""
    h = gheap[gptr[q] : gptr[q + 1]]
    h[gsize[q], 0], h[gsize[q], 1], h[gsize[q], 2] = barrier, rank, j
    gsize[q] += 1
    _sift_up(h, gsize[q] - 1)


@jit(callee=True)
def _untouched(j, buf, s0, s1, gtype, ptab, gst):
    """Whether the GPUs of job j's last round ``buf[s0:s1]`` are as it left them (free at
    the end of its runs, j their last job): then its next round sees them as if it came
    right after that one."""
    if s1 <= s0:
        return False
    for q in range(s0, s1):
        g = buf[q, 3]
        if gst[1, g] != j or gst[0, g] != _last_start(buf, q) + buf[q, 4] * ptab[j, gtype[g]]:
            return False
    return True


@jit(callee=True)
def _repeat_waiting(
    j,
    left,
    gheap,
    gptr,
    gsize,
    group,
    rank,
    buf,
    nb0,
    nb,
    b,
    sync_first,
    gtype,
    tptr,
    fix,
    ptab,
    stab,
    gst,
    jst,
    ws,
):
    """``run_interleaved``, after job j placed ``buf[nb0:nb]`` from barrier ``b`` in its last
    round's shape and waits again: place at once the rounds the loop would place next in
    that shape (``buf[nb0:nb]`` become periodic); returns the last round's barrier before.

    The caller checks that no job is ready. While j's barrier stays below U, every
    other waiting job's key, the loop's t is j's barrier (j's GPUs of each type free
    before it), only j becomes ready, its first slot is on one of its own GPUs (free by
    then): it is placed again, and ``_repeat_limit`` says how long its round keeps the
    shape."""
    q = group[j]
    h = gheap[gptr[q] : gptr[q + 1]]
    if h[0, 2] != j:  # another job waits with a barrier at most j's
        return b
    u = _BIG
    for c in (1, 2):
        if c < gsize[q]:
            u = min(u, h[c, 0])
    for other in range(gsize.size):
        if other != q and gsize[other]:
            u = min(u, gheap[gptr[other], 0])
    at = jst[0, j]
    span, limit = _repeat_limit(
        j, buf, nb0, nb, at, sync_first, gtype, tptr, fix, ptab, stab, gst, ws[2]
    )
    limit = min(limit, u - 1)
    if limit < at:
        return b
    n = min(left[j], (limit - at) // span + 1)
    _repeat(j, n, nb0, nb, span, gtype, tptr, ptab, gst, jst, buf)
    left[j] -= n
    gsize[q] = _pop(h, gsize[q])
    if left[j]:
        _wait(gheap, gptr, gsize, q, jst[0, j], rank[j], j)
    return jst[0, j] - span


@jit(callee=True)
def _least_multiple(d, m, lo, hi, stk):
    """Least x >= 0 with lo <= (x d) mod m <= hi, for 0 <= lo <= hi < m (_BIG: none).

    Euclid's descent: when no multiple of d lands in [lo, hi] below m, the interval lies
    between two multiples of d, and x d - y m lands in it exactly when (y m) mod d is in
    [(-hi) mod d, (-lo) mod d]: the same question for (m mod d, d), so the moduli shrink
    as in Euclid's algorithm; the least such y >= 1 gives the least x, the least with
    x d >= lo + y m. ``stk`` (3, 128) is scratch for the levels."""
    depth = 0
    while True:
        if lo == 0:
            x = 0
            break
        d %= m
        if d == 0:
            return _BIG
        x = (lo + d - 1) // d
        if d * x <= hi:
            break
        stk[0, depth], stk[1, depth], stk[2, depth] = d, m, lo
        depth += 1
        d, m, lo, hi = m % d, d, (d - hi % d) % d, (d - lo % d) % d
    while depth:
        depth -= 1
        d, m, lo = stk[0, depth], stk[1, depth], stk[2, depth]
        x = (lo + m * x + d - 1) // d
    return x


@jit
def _first_hit(a, d, m, lo, hi, stk):
    """Least n >= 0 with lo <= (a + n d) mod m <= hi, for 0 <= lo <= hi < m (_BIG: none)."""
    a, d = a % m, d % m
    x, y = (lo - a) % m, (hi - a) % m
    if x <= y:
        return _least_multiple(d, m, x, y, stk)
    return min(_least_multiple(d, m, x, m - 1, stk), _least_multiple(d, m, 0, y, stk))


@jit(callee=True)
def _pair_horizon(
    j, b, span, dmax, k, kb, kspan, buf, s0, s1, sync_first, gtype, fix, ptab, stab, stk
):
    """The first of job j's decisions b, b + span, ... at which j, repeating its round
    (largest key end b + dmax, on a GPU that ran j last), would take a slot on a GPU of
    job k's round ``buf[s0:s1]``, k repeating its own every ``kspan`` from barrier ``kb``
    (_BIG: never).

    k's run of c tasks on g starts at each of k's barriers, so at a time whose phase in
    k's period is f (0 < f < kspan) g has been free for u = f - c p_k (u < 0: busy).
    j's slot there (b >= r_j + o_j) starts at b + max(o_j - u, 0) and ends ps later; a tie
    with the round's end goes to j's own GPU (``_tie``), so j takes it only if it ends
    sooner: never when ps >= dmax, else when u >= o_j - (dmax - ps) + 1. At f = 0 k's
    decision and j's coincide and either may come first: u is -c p_k or kspan - c p_k."""
    o = fix[2, j]
    first = _BIG
    for q in range(s0, s1):
        g = buf[q, 3]
        tau = gtype[g]
        if ptab[j, tau] == 0:
            continue
        ps = ptab[j, tau] + (stab[j, tau] if sync_first else 0)
        if ps >= dmax:
            continue
        lo, hi = o - (dmax - ps) + 1, kspan
        cp = buf[q, 4] * ptab[k, tau]
        a = (b - (kb - kspan)) % kspan  # b's phase: k's round in flight began at kb - kspan
        x, y = max(cp + lo, 1), min(cp + hi, kspan - 1)
        if x <= y:
            first = min(first, _first_hit(a, span, kspan, x, y, stk))
        if lo <= -cp <= hi or lo <= kspan - cp <= hi:
            first = min(first, _first_hit(a, span, kspan, 0, 0, stk))
    return first


@jit(callee=True)
def _repeat_side_by_side(
    t,
    left,
    gheap,
    gptr,
    gsize,
    shaped,
    prev,
    sync_first,
    gtype,
    tptr,
    fix,
    ptab,
    stab,
    gst,
    jst,
    ws,
    buf,
    cand,
    keys,
    stk,
):
    """Work-conserving dispatch with no job ready at clock t: place at once every round
    the loop would place before the first decision this cannot vouch for, when each job
    still waiting for its barrier repeats its last round's shape (its runs become
    periodic). Returns the rounds so placed.

    Candidates: jobs waiting for their barrier (> t) whose last round was placed in the
    shape of the one before (``shaped``) on GPUs left as they were (``_untouched``),
    with two rounds or more left. Every other waiting job acts first at its key, so the
    horizon H is at most the least of those keys. Until H, each candidate j becomes
    ready at its barriers, alone or with candidates that touch other GPUs, and places
    its round in the same shape when no GPU outside its round offers a slot below the
    round's largest key: the GPUs of no candidate keep their state (``_static_limit``
    bounds j's barriers), a candidate k's GPUs follow k's period (``_pair_horizon``), and
    j's rounds run out (its last round is left to the loop). Then j's first slot is on
    its own GPU, free at its barrier, so j does not wait either. H is the first
    decision any of these rules out; each candidate's decisions before H are placed.
    ``cand`` (2, N) and ``keys`` (N, 3) zero, ``stk`` (3, 128) and ``ws[2]`` (zero) are
    scratch."""
    barrier, mark = jst[0], ws[2]
    horizon, nc, low = _BIG, 0, _BIG
    for q in range(gsize.size):
        for i in range(gptr[q], gptr[q] + gsize[q]):
            j, key = gheap[i, 2], gheap[i, 0]
            if (
                shaped[j]
                and key == barrier[j]
                and key > t
                and left[j] >= 2
                and barrier[j] >= fix[1, j] + fix[2, j]
                and _untouched(j, buf, prev[0, j], prev[1, j], gtype, ptab, gst)
            ):
                cand[0, nc] = j
                nc += 1
                low = min(low, key)
            else:
                horizon = min(horizon, key)
    if horizon <= low:
        return 0
    for c in range(nc):
        j = cand[0, c]
        for q in range(prev[0, j], prev[1, j]):
            mark[buf[q, 3]] = c + 1
    for c in range(nc):
        j = cand[0, c]
        b = barrier[j]
        span, dmax, phi, gmax = _round_keys(
            j, buf, prev[0, j], prev[1, j], sync_first, gtype, ptab, stab
        )
        keys[c, 0], keys[c, 1], keys[c, 2] = span, dmax, phi
        lim = _static_limit(
            j,
            buf,
            prev[0, j],
            prev[1, j],
            b,
            span,
            dmax,
            phi,
            gmax,
            sync_first,
            gtype,
            tptr,
            fix,
            ptab,
            stab,
            gst,
            mark,
        )
        horizon = min(
            horizon, b if lim < b else b + ((lim - b) // span + 1) * span, b + (left[j] - 1) * span
        )
    for c in range(nc):
        j = cand[0, c]
        b = barrier[j]
        for e in range(nc):
            if e == c or horizon <= b:
                continue
            k = cand[0, e]
            n = _pair_horizon(
                j,
                b,
                keys[c, 0],
                keys[c, 1],
                k,
                barrier[k],
                keys[e, 0],
                buf,
                prev[0, k],
                prev[1, k],
                sync_first,
                gtype,
                fix,
                ptab,
                stab,
                stk,
            )
            if n < _BIG:
                horizon = min(horizon, b + n * keys[c, 0])
    for c in range(nc):
        j = cand[0, c]
        for q in range(prev[0, j], prev[1, j]):
            mark[buf[q, 3]] = 0
    placed = 0
    for c in range(nc):
        j = cand[0, c]
        span, b = keys[c, 0], barrier[j]
        if horizon > b:
            n = (horizon - 1 - b) // span + 1
            _repeat(j, n, prev[0, j], prev[1, j], span, gtype, tptr, ptab, gst, jst, buf)
            left[j] -= n
            placed += n
            prev[2, j] = barrier[j] - span
    for c in range(nc):
        cand[1, cand[0, c]] = 1
    if placed:  # the candidates wait for their new barriers
        for q in range(gsize.size):
            h = gheap[gptr[q] : gptr[q + 1]]
            for i in range(gsize[q]):
                if cand[1, h[i, 2]]:
                    h[i, 0] = barrier[h[i, 2]]
            for i in range(gsize[q] // 2 - 1, -1, -1):
                _sift_down(h, gsize[q], i)
    for c in range(nc):
        cand[1, cand[0, c]] = 0
    return placed


@jit(callee=True)
def _first_gpu(j, tptr, fix, ptab, ktab, gst, jst, ws, guard, t):
    """The GPU of job j's first slot, the one ``place_round`` would take first: least
    (end + ``ktab``, -free, gpu) over the heads of j's streams. Uses
    the stream scratch rows of ``ws`` (0, 1, 5) as ``place_round`` does, not ``cnt``."""
    free, last, srt = gst[0], gst[1], gst[2]
    b, r, o = jst[0, j], fix[1, j], fix[2, j]
    tie_n, step, rem = ws[0], ws[1], ws[5]
    own = jst[4:]
    best, be, bf = -1, _BIG, 0
    for k in range(tptr.size - 1):
        # every slot of type k starts at >= max(its first free time, b): skip a type
        # that cannot tie the best slot found
        if ptab[j, k] > 0 and max(free[srt[tptr[k]]], b) + ptab[j, k] + ktab[j, k] <= be:
            lo, hi = tptr[k], tptr[k + 1]
            _open_type(k, j, lo, hi, free, srt, own, rem, tie_n, step, r, o, b)
            for sid in (2 * k + 1, 2 * k):
                g = _next(sid, j, srt, lo, hi, last, tie_n, step, rem)
                while g >= 0 and _booked(g, j, free, last, guard, t):
                    g = _next(sid, j, srt, lo, hi, last, tie_n, step, rem)
                if g < 0:
                    continue
                e = _start(free[g], sid & 1 == 1, r, o, b) + ptab[j, k] + ktab[j, k]
                f = _tie(free[g], sid & 1 == 1)
                if best < 0 or e < be or (e == be and (f < bf or (f == bf and g < best))):
                    best, be, bf = g, e, f
    return best


@jit(callee=True)
def _settled(until, left, group, gtypes, tptr, free, srt, barrier, tf):
    """Whether nothing placed from now on can start before ``until``: every job with
    rounds left has its barrier, or every GPU it may use, at ``until`` or later. (A
    task starts at or after its round's barrier and its GPU's free time, and neither
    ever decreases.) ``tf`` (groups,) is scratch."""
    for q in range(gtypes.shape[0]):
        f = _BIG
        for k in range(tptr.size - 1):
            if gtypes[q, k]:
                f = min(f, free[srt[tptr[k]]])
        tf[q] = f
    for j in range(left.size):  # noqa: SIM110 - numba compiles the loop, not a generator
        if left[j] and max(tf[group[j]], barrier[j]) < until:
            return False
    return True


@jit
def run_interleaved(
    order,
    rounds,
    repeat,
    conserve,
    group,
    gtypes,
    until,
    sync_first,
    gtype,
    tptr,
    fix,
    ptab,
    stab,
    ktab,
    gst,
    jst,
    ws,
    heap,
    buf,
    nb,
):
    """``rounds.run_interleaved``'s loop. ``group[j]``: job j's group of jobs with the
    same eligible types (``gtypes[group]``); each group has a heap of waiting jobs (key,
    rank, job) and a heap of ready ones (rank, job), in slices of ``gheap`` and
    ``rheap``. A waiting job's key is its barrier, or, once it chose to wait for a busy
    GPU, the time that GPU frees (it is looked at again then). The groups' order does
    not matter: t is a minimum over them and ranks are a total order. ``guard`` holds
    each job's rank and rounds left for ``_booked``. ``until``: stop once ``_settled``.
    Returns (buf, nb, rounds placed as repeats, times a ready job waited for a busy GPU).

    ``conserve`` off: the ``-hold`` form. t is the earliest time a *waiting* job could
    start (ready jobs do not move it) and the first ready job in ``order`` places its
    round, whether or not a GPU is free, on any GPU: a GPU whose job syncs is kept for
    that job's next round when the job outranks the ready ones."""
    n_jobs, n_groups = rounds.size, gtypes.shape[0]
    free, srt, barrier = gst[0], gst[2], jst[0]
    rank = np.zeros(n_jobs, dtype=np.int64)
    for i in range(order.size):
        rank[order[i]] = i
    guard = np.zeros((2, n_jobs), dtype=np.int64)  # ``_booked``: rank, rounds left
    left = guard[1]
    for j in range(n_jobs):  # element-wise: see ``_pop``
        left[j] = rounds[j]
    if conserve:
        for j in range(n_jobs):
            guard[0, j] = rank[j]
    noguard = np.zeros((2, n_jobs), dtype=np.int64)
    gptr = np.zeros(n_groups + 1, dtype=np.int64)
    for j in range(n_jobs):
        gptr[group[j] + 1] += 1
    for q in range(n_groups):
        gptr[q + 1] += gptr[q]
    gsize = np.zeros(n_groups, dtype=np.int64)
    gheap = np.empty((n_jobs, 3), dtype=np.int64)
    for j in range(n_jobs):
        _wait(gheap, gptr, gsize, group[j], barrier[j], rank[j], j)
    rsize = np.zeros(n_groups, dtype=np.int64)
    rheap = np.zeros((n_jobs, 3), dtype=np.int64)
    tf = np.zeros(n_groups, dtype=np.int64)  # per group, its types' first free time
    mf = np.zeros(n_groups, dtype=np.int64)  # scratch of ``_settled``
    t = -_BIG
    todo = n_jobs
    prev = np.full((3, n_jobs), -1, dtype=np.int64)  # each job's last round: blocks, barrier
    shaped = np.zeros(n_jobs, dtype=np.bool_)  # its last round repeated the one before
    cand = np.zeros((2, n_jobs), dtype=np.int64)  # scratch of ``_repeat_side_by_side``
    keys = np.zeros((n_jobs, 3), dtype=np.int64)
    stk = np.zeros((3, 128), dtype=np.int64)
    repeated, waited = 0, 0
    while todo:
        tmin = _BIG
        for q in range(n_groups):
            if gsize[q] or rsize[q]:
                f = _BIG
                for k in range(tptr.size - 1):
                    if gtypes[q, k]:
                        f = min(f, free[srt[tptr[k]]])
                tf[q] = f
                if conserve:
                    tmin = min(tmin, f if rsize[q] else max(gheap[gptr[q], 0], f))
                elif gsize[q]:
                    tmin = min(tmin, max(gheap[gptr[q], 0], f))
        t = max(t, tmin) if conserve else tmin
        if t >= until and _settled(until, left, group, gtypes, tptr, free, srt, barrier, mf):
            break  # the rest starts at ``until`` or later: the caller asked for less
        best = -1
        for q in range(n_groups):
            h = gheap[gptr[q] : gptr[q + 1]]
            r = rheap[gptr[q] : gptr[q + 1]]
            while gsize[q] and h[0, 0] <= t:
                r[rsize[q], 0], r[rsize[q], 1] = h[0, 1], h[0, 2]
                rsize[q] += 1
                _sift_up(r, rsize[q] - 1)
                gsize[q] = _pop(h, gsize[q])
            if (
                rsize[q]
                and (tf[q] <= t or not conserve)
                and (best < 0 or r[0, 0] < rheap[gptr[best], 0])
            ):
                best = q
        r = rheap[gptr[best] : gptr[best + 1]]
        j = r[0, 1]
        rsize[best] = _pop(r, rsize[best])
        if conserve:
            g = _first_gpu(j, tptr, fix, ptab, ktab, gst, jst, ws, noguard, t)
            if free[g] > t:  # its first batch ends soonest on a GPU still busy: wait
                _wait(gheap, gptr, gsize, best, free[g], rank[j], j)
                waited += 1
                continue
        b, nb0 = barrier[j], nb
        was = repeat and _untouched(j, buf, prev[0, j], prev[1, j], gtype, ptab, gst)
        before = left[j]
        _, buf, nb = place_round(
            j, gtype, tptr, fix, ptab, stab, ktab, gst, jst, ws, heap, buf, nb, guard, t
        )
        left[j] -= 1
        if not left[j]:
            todo -= 1
            continue
        _wait(gheap, gptr, gsize, group[j], barrier[j], rank[j], j)
        same = (
            was
            and _same_shape(buf, prev[0, j], prev[1, j], prev[2, j], nb0, nb, b)
            and fix[0, j] <= STREAM_LIMIT
        )
        prev[0, j], prev[1, j], prev[2, j] = nb0, nb, b
        if conserve:
            shaped[j] = same
            if same and rsize.sum() == 0:
                repeated += _repeat_side_by_side(
                    t,
                    left,
                    gheap,
                    gptr,
                    gsize,
                    shaped,
                    prev,
                    sync_first,
                    gtype,
                    tptr,
                    fix,
                    ptab,
                    stab,
                    gst,
                    jst,
                    ws,
                    buf,
                    cand,
                    keys,
                    stk,
                )
        elif same:
            prev[2, j] = _repeat_waiting(
                j,
                left,
                gheap,
                gptr,
                gsize,
                group,
                rank,
                buf,
                nb0,
                nb,
                b,
                sync_first,
                gtype,
                tptr,
                fix,
                ptab,
                stab,
                gst,
                jst,
                ws,
            )
            repeated += before - 1 - left[j]
            if not left[j]:
                todo -= 1
    return buf, nb, repeated, waited


@jit
def expand_runs(blocks, gtype, ptab, out):
    """Fill ``out`` (5, tasks) with the task rows (job, round, task, gpu, start) of the
    runs ``blocks`` (see ``rounds.expand_blocks``) in one pass. ``out`` comes from
    the caller so that tracemalloc counts it."""
    i = 0
    for b in range(blocks.shape[0]):
        j, g = blocks[b, 0], blocks[b, 3]
        p = ptab[j, gtype[g]]
        for r in range(blocks[b, 7]):
            at = blocks[b, 5] + r * blocks[b, 6]
            for n in range(blocks[b, 4]):
                out[0, i], out[1, i], out[2, i] = j, blocks[b, 1] + r, blocks[b, 2] + n
                out[3, i], out[4, i] = g, at + n * p
                i += 1
