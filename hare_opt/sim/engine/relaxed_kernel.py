"""numba kernels of the compiled engine for relaxed policies; ``relaxed.py`` drives them.

A transcription of the reference event loop (``reference.Simulator.loop``, relaxed
``start``) and of two policies' decisions over int64 arrays: the plan followers'
dispatch (``policies/plan.py``: ``decide``, ``_dispatch``, ``_should_replan``) and
``hlas`` (``policies/hlas.py``). Same events, same order, same ties, hence the same
schedules (tested task for task). Resumable like the gang engine (``kernel.py``, whose
layout, event heap and start rule this one shares): ``run`` returns ``NEED_PLAN`` when
a plan follower re-plans (the planner is Python), with the state in the arrays, and
goes on where it stopped once the caller has loaded the plan.

Layout beyond ``kernel.py``'s (built by ``relaxed.py``):

* ``ctl`` (CTL,): ``kernel.py``'s slots, then this engine's (below).
* ``jst`` (JROWS, N): ``kernel.py``'s rows, then tasks of the current round placed,
  its max end + sync so far (``ClusterState``'s ``placed`` and ``round_end``), tasks
  placed, the types whose queue waits for the job's round (a bit mask), hlas's
  ready flag and class, and the busy GPU its next task waits for (``_decide_hlas``).
* ``types``: GPU ``gtype`` (M,); type k's GPUs, ascending, are ``tgpu[tptr[k]:tptr[k + 1]]``.
* A plan's queues: GPU g's runs are a heap in rows ``qlo[g]:qlo[g + 1]`` of ``qh``
  (QCOLS columns, ordered by (start, round in the plan, run index)), ``qn[g]`` of
  them; ``puntil`` (N,) is the policy's ``planned_until``. A work-conserving follower
  (``ctl[CONSERVING]``) keeps them by type and job instead: segment s = k N + j, rows
  ``wlo[s]:wlo[s + 1]`` of ``wh``, is a heap of ``wn[s]`` keys of runs in ``qh``,
  ordered by (round, start, round in the plan, run index) (``_key``), and
  ``tjobs[k, :tnj[k]]`` are the jobs with runs of type k.
* hlas: ``rlist[:ctl[NREADY]]``, the ready jobs by (arrival, job); ``tree``: per type k
  a min-tree of its GPUs' free times in ``tree[toff[k]:toff[k + 1]]`` (leaves in the
  type's GPU order, ``gpos``); ``own`` (3, max(N, M)): per job the first GPU that ran
  it last, per GPU the next and previous such GPU of the same job (-1: none).
"""

from __future__ import annotations

import math

import numpy as np

from hare_opt.heuristics import _kernels as R
from hare_opt.model.rules import earliest_start
from hare_opt.sim.engine import kernel as K
from hare_opt.util.jit import PinnedJit

_BIG = R._BIG

#: Pin of what is compiled in from other modules (``util.jit.source_pin``): the start
#: rule, the gang engine's event heap and start time, the round engine's row heap.
jit = PinnedJit(
    (
        earliest_start,
        K._less,
        K._swap,
        K._push,
        K._pop,
        K._start_time,
        R._less,
        R._swap_rows,
        R._sift_down,
        R._pop,
    ),
    "da43202d59b5216e",
    __name__,
)

# Return codes: kernel.py's, and these.
DONE, NO_EVENT, PAST_TIME, TOO_MANY_EVENTS, HEAP_FULL = (
    K.DONE,
    K.NO_EVENT,
    K.PAST_TIME,
    K.TOO_MANY_EVENTS,
    K.HEAP_FULL,
)
NEED_PLAN, GROW, INELIGIBLE = 10, 11, 12
# Policies.
PLAN, HLAS = 0, 1
# Event kinds (``events.py``).
ARRIVE, FREE, BARRIER, WAKE = 0, 1, 2, 3
# Phases.
EVENTS, DECIDE, PLANNED = 0, 1, 2
# ``ctl`` slots after kernel.py's: re-plan at every arrival; the policy's flags
# (new jobs, types woken, waiting, starved: bit masks); tasks queued; the last plan's
# time, the least gap and the low water; what the current events brought (arrivals,
# freed types, a wake-up); hlas: ready jobs, idle GPUs; a bad placement's job and GPU;
# a work-conserving follower; a job's round opened by the current events.
(
    ARRIVAL,
    NEWJOBS,
    WAITING_T,
    STARVED,
    QUEUED,
    LASTPLAN,
    GAP,
    WATER,
    ARRIVED_NOW,
    FREED,
    WOKEN,
    NREADY,
    IDLE,
    BAD_JOB,
    BAD_GPU,
    CONSERVING,
    OPENED,
) = range(K.CTL, K.CTL + 17)
CTL = K.CTL + 17
# ``jst`` rows after kernel.py's.
PLACED, RENDS, TASKS, BLOCKED, READY, CLASS, BEST, BEST_AT, BEST_TASKS = range(
    K.WAITING + 1, K.WAITING + 10
)
JROWS = K.WAITING + 10
# Queue columns: the key (start of the next task, its round in the plan, run index),
# then job, task within the round, tasks a round, step, round (instance numbering),
# rounds left, start of the current round, period.
(QSTART, QKEY, QSEQ, QJOB, QN, QCOUNT, QSTEP, QRND, QLEFT, QROUND0, QPERIOD) = range(11)
QCOLS = 11


@jit
def _place(j, g, ctl, jfix, proc, sync, jst, gst, heap, buf):
    """``Simulator.start`` (relaxed): job j's next task on idle GPU g at its start time,
    placed as ``ClusterState.place`` does, with the simulator's counters and events."""
    now = ctl[K.NOW]
    start = K._start_time(j, g, now, jfix, jst, gst)
    setup = 0 if gst[K.GLAST, g] == j else jfix[K.OVH, j]
    jst[K.SETUP, j] += setup
    ctl[K.RESERVED] += max(0, start - setup - now)
    p = proc[j, g]
    nb = ctl[K.NBUF]
    buf[nb, 0], buf[nb, 1], buf[nb, 2] = j, jst[K.RND, j], jst[PLACED, j]
    buf[nb, 3], buf[nb, 4] = g, start
    ctl[K.NBUF] = nb + 1
    gst[K.GFREE, g] = start + p
    gst[K.GLAST, g] = j
    gst[K.GBUSY, g] += p
    jst[RENDS, j] = max(jst[RENDS, j], start + p + sync[j, g])
    jst[PLACED, j] += 1
    if jst[K.FIRST, j] < 0:
        jst[K.FIRST, j] = start
    jst[TASKS, j] += 1
    jst[K.BUSY, j] += p
    K._push(heap, ctl, start + p, FREE, g)
    if jst[PLACED, j] == jfix[K.K, j]:  # the round is complete: its barrier is known
        jst[K.BARR, j] = jst[RENDS, j]
        jst[K.RND, j] += 1
        jst[PLACED, j] = 0
        jst[RENDS, j] = 0
        K._push(heap, ctl, jst[K.BARR, j], BARRIER, j)


@jit(callee=True)
def _set_up(j, g, setup, ctl, jst, gst, heap):
    """``Simulator.setup``: idle GPU g set up for job j now, busy for ``setup``."""
    t = ctl[K.NOW] + setup
    jst[K.SETUP, j] += setup
    gst[K.GFREE, g] = t
    gst[K.GLAST, g] = j
    K._push(heap, ctl, t, FREE, g)


@jit(callee=True)
def _wake(ctl, heap, t):
    """``Simulator.wake_at``."""
    if t > ctl[K.NOW]:
        K._push(heap, ctl, t, WAKE, -1)


# --- plan followers -------------------------------------------------------------------
@jit(callee=True)
def _advance(r):
    """Run ``r`` (a row of ``qh``) moves on to its next task; False when it has none left."""
    if r[QN] + 1 < r[QCOUNT]:  # the round's next task
        r[QN] += 1
        r[QSTART] += r[QSTEP]
    elif r[QLEFT] > 1:  # the run's next round
        r[QLEFT] -= 1
        r[QROUND0] += r[QPERIOD]
        r[QSTART] = r[QROUND0]
        r[QN] = 0
        r[QKEY] += 1
        r[QRND] += 1
    else:
        return False
    return True


@jit(callee=True)
def _next_task(h, n):
    """Drop the first task of the heap top's run; returns the heap's new size."""
    if not _advance(h[0]):
        return R._pop(h, n)
    R._sift_down(h, n, 0)
    return n


@jit(callee=True)
def _key(w, r):
    """Row ``w`` of a work-conserving heap (``wh``) keys run ``r``: the round of its next
    task, then that task's queue order (start, round in the plan x 2^32 + run index)."""
    w[0], w[1], w[2] = r[QRND], r[QSTART], (r[QKEY] << 32) + r[QSEQ]


@jit(callee=True)
def _next_ready(w, n, qh):
    """``_next_task`` on a job's heap ``w`` of a work-conserving queue (runs in ``qh``)."""
    r = qh[w[0, 3]]
    if not _advance(r):
        return R._pop(w, n)
    _key(w[0], r)
    R._sift_down(w, n, 0)
    return n


@jit
def load_plan(runs, qh, qlo, qn):
    """Queue a plan: ``runs`` (R, 9) rows (GPU, job, round, plan round, start, step,
    count, period, rounds) in plan order into per-GPU heaps (``qh`` rows ``qlo[g]:``,
    which the caller sized by GPU). Returns the tasks queued."""
    qn[:] = 0
    tasks = 0
    for i in range(runs.shape[0]):
        k = runs[i, 0]
        row = qh[qlo[k] + qn[k]]
        row[QSTART], row[QKEY], row[QSEQ], row[QJOB] = runs[i, 4], runs[i, 3], i, runs[i, 1]
        row[QN], row[QCOUNT], row[QSTEP], row[QRND] = 0, runs[i, 6], runs[i, 5], runs[i, 2]
        row[QLEFT], row[QROUND0], row[QPERIOD] = runs[i, 8], runs[i, 4], runs[i, 7]
        qn[k] += 1
        tasks += runs[i, 6] * runs[i, 8]
    for k in range(qn.size):  # heapify each GPU's runs
        h = qh[qlo[k] : qlo[k + 1]]
        for i in range(qn[k] // 2 - 1, -1, -1):
            R._sift_down(h, qn[k], i)
    return tasks


@jit
def load_ready(runs, seq, qh, wh, wlo, wn):
    """Queue a plan for a work-conserving follower: ``runs`` as ``load_plan``'s, sorted by
    (type, job), ``seq`` their indices in plan order, into rows of ``qh``; segment
    s = type x N + job, rows ``wlo[s]:wlo[s + 1]`` of ``wh``, is the heap of the job's
    runs of that type (``_key``; column 3: the run's row). Returns the tasks queued."""
    tasks = 0
    for i in range(runs.shape[0]):
        row = qh[i]
        row[QSTART], row[QKEY], row[QSEQ], row[QJOB] = runs[i, 4], runs[i, 3], seq[i], runs[i, 1]
        row[QN], row[QCOUNT], row[QSTEP], row[QRND] = 0, runs[i, 6], runs[i, 5], runs[i, 2]
        row[QLEFT], row[QROUND0], row[QPERIOD] = runs[i, 8], runs[i, 4], runs[i, 7]
        _key(wh[i], row)
        wh[i, 3] = i
        tasks += runs[i, 6] * runs[i, 8]
    for s in range(wn.size):
        wn[s] = wlo[s + 1] - wlo[s]
        w = wh[wlo[s] : wlo[s + 1]]
        for i in range(wn[s] // 2 - 1, -1, -1):
            R._sift_down(w, wn[s], i)
    return tasks


@jit(callee=True)
def _ineligible(j, g, elig, ctl):
    """Whether job j cannot run on GPU g; if so the pair is kept for the error message."""
    if elig[j, g]:
        return False
    ctl[BAD_JOB], ctl[BAD_GPU] = j, g
    return True


@jit(callee=True)
def _start_on_idle(j, k, ni, ctl, jfix, proc, sync, elig, jst, gst, heap, buf, idle):
    """Start job j's next task on one of type k's ``ni`` idle GPUs (``idle``): one that
    ran j last, else the first; it leaves ``idle``. Returns ``INELIGIBLE`` if j cannot
    run there, else 0."""
    at = 0  # no setup on a GPU that ran the job last
    for i in range(ni):
        if gst[K.GLAST, idle[i]] == j:
            at = i
            break
    g = idle[at]
    if _ineligible(j, g, elig, ctl):
        return INELIGIBLE
    _place(j, g, ctl, jfix, proc, sync, jst, gst, heap, buf)
    for i in range(at, ni - 1):
        idle[i] = idle[i + 1]
    return 0


@jit(callee=True)
def _idle_of(k, now, gst, tptr, tgpu, idle):
    """Type k's idle GPUs into ``idle``, ascending; returns how many."""
    ni = 0
    for x in range(tptr[k], tptr[k + 1]):
        if gst[K.GFREE, tgpu[x]] <= now:
            idle[ni] = tgpu[x]
            ni += 1
    return ni


@jit
def _dispatch_ready(
    work,
    ctl,
    jfix,
    proc,
    sync,
    elig,
    jst,
    gst,
    heap,
    buf,
    tptr,
    tgpu,
    qh,
    wh,
    wlo,
    wn,
    tjobs,
    tnj,
    puntil,
    idle,
):
    """``PlanPolicy._dispatch_ready`` on the types in bit mask ``work``, lowest first;
    returns 0, or ``INELIGIBLE``."""
    now, n = ctl[K.NOW], jst.shape[1]
    while work:
        k = 0
        while not (work >> k) & 1:
            k += 1
        work &= ~(1 << k)
        ni = _idle_of(k, now, gst, tptr, tgpu, idle)
        while ni:
            pick, bs, bk = -1, 0, 0
            i = 0
            while i < tnj[k]:
                j = tjobs[k, i]
                s = k * n + j
                w = wh[wlo[s] : wlo[s + 1]]
                cur = jst[K.RND, j]
                while wn[s] and w[0, 0] < cur:  # stale: that round was completed elsewhere
                    wn[s] = _next_ready(w, wn[s], qh)
                    ctl[QUEUED] -= 1
                if wn[s] == 0:
                    tnj[k] -= 1
                    tjobs[k, i] = tjobs[k, tnj[k]]
                    continue
                if (
                    w[0, 0] == cur
                    and jst[K.BARR, j] <= now
                    and (pick < 0 or w[0, 1] < bs or (w[0, 1] == bs and w[0, 2] < bk))
                ):
                    pick, bs, bk = j, w[0, 1], w[0, 2]
                i += 1
            if pick < 0:
                break
            s = k * n + pick
            wn[s] = _next_ready(wh[wlo[s] : wlo[s + 1]], wn[s], qh)
            ctl[QUEUED] -= 1
            if wn[s] == 0:
                for i in range(tnj[k]):
                    if tjobs[k, i] == pick:
                        tnj[k] -= 1
                        tjobs[k, i] = tjobs[k, tnj[k]]
                        break
            cur = jst[K.RND, pick]
            if _start_on_idle(pick, k, ni, ctl, jfix, proc, sync, elig, jst, gst, heap, buf, idle):
                return INELIGIBLE
            ni -= 1
            if (
                jst[K.RND, pick] != cur
                and jst[K.RND, pick] == puntil[pick]
                and jst[K.RND, pick] < jfix[K.ROUNDS, pick]
            ):
                ctl[NEWJOBS] = 1  # its planned horizon ran out
        if tnj[k] == 0 and ni:
            ctl[STARVED] |= 1 << k  # idle until the next plan
    return 0


@jit
def _dispatch(
    work, ctl, jfix, proc, sync, elig, jst, gst, heap, buf, tptr, tgpu, qh, qlo, qn, puntil
):
    """``PlanPolicy._dispatch`` on the types in bit mask ``work``, lowest first, each
    type's GPUs ascending (GPU g's queue: rows ``qlo[g]:qlo[g + 1]`` of ``qh``); returns
    0, or ``INELIGIBLE`` if the plan put a job on a GPU it cannot run on."""
    now = ctl[K.NOW]
    while work:
        k = 0
        while not (work >> k) & 1:
            k += 1
        work &= ~(1 << k)
        wake = -1
        for x in range(tptr[k], tptr[k + 1]):
            g = tgpu[x]
            if gst[K.GFREE, g] > now:
                continue
            h = qh[qlo[g] : qlo[g + 1]]
            while qn[g]:
                j, rnd = h[0, QJOB], h[0, QRND]
                cur = jst[K.RND, j]
                if cur > rnd:  # stale: that round was completed elsewhere
                    qn[g] = _next_task(h, qn[g])
                    ctl[QUEUED] -= 1
                    continue
                setup = 0 if gst[K.GLAST, g] == j else jfix[K.OVH, j]
                due = h[0, QSTART] - setup  # not before the plan says (its setup first)
                if cur < rnd:  # wait until the previous round is fully started
                    jst[BLOCKED, j] |= 1 << k
                    if setup and now >= due:  # its setup, as planned
                        if _ineligible(j, g, elig, ctl):
                            return INELIGIBLE
                        _set_up(j, g, setup, ctl, jst, gst, heap)
                    elif setup and (wake < 0 or due < wake):
                        wake = due
                    break
                if now < due:
                    if wake < 0 or due < wake:
                        wake = due
                    break
                qn[g] = _next_task(h, qn[g])
                ctl[QUEUED] -= 1
                if _ineligible(j, g, elig, ctl):
                    return INELIGIBLE
                _place(j, g, ctl, jfix, proc, sync, jst, gst, heap, buf)
                if jst[K.RND, j] != cur:
                    work |= jst[BLOCKED, j]
                    jst[BLOCKED, j] = 0
                    if jst[K.RND, j] == puntil[j] and jst[K.RND, j] < jfix[K.ROUNDS, j]:
                        ctl[NEWJOBS] = 1  # its planned horizon ran out
                break
            if qn[g] == 0 and gst[K.GFREE, g] <= now:
                ctl[STARVED] |= 1 << k  # idle until the next plan
        if wake >= 0:
            _wake(ctl, heap, wake)
            ctl[WAITING_T] |= 1 << k
    return 0


@jit
def _should_replan(ctl, jfix, jst, heap, puntil):
    """``PlanPolicy._should_replan``."""
    if ctl[QUEUED] >= ctl[WATER] and not (ctl[NEWJOBS] and ctl[STARVED]):
        return False
    t = ctl[LASTPLAN] + ctl[GAP]
    if ctl[K.NOW] < t:
        _wake(ctl, heap, t)
        return False
    for j in range(jst.shape[1]):  # a job arrived and not finished with rounds unplanned
        if jst[K.ARRIVED, j] and not jst[K.FINISHED, j] and puntil[j] < jfix[K.ROUNDS, j]:
            return True
    return False


# --- hlas -------------------------------------------------------------------------------
@jit(callee=True)
def _hlas_class(j, jst, weight, min_task, q):
    """``HLASPolicy.job_class``: floor(log2(1 + service / (weight q))), the same floats."""
    service = jst[TASKS, j] * min_task[j]
    return int(math.log2(1 + service / (weight[j] * q)))


@jit(callee=True)
def _hlas_ready(j, ctl, jfix, jst, rlist, weight, min_task, q):
    """Add job j (arrived or opened now) to the ready list, kept by (arrival, job)."""
    if jst[READY, j]:
        return
    jst[READY, j] = 1
    jst[CLASS, j] = _hlas_class(j, jst, weight, min_task, q)
    n = ctl[NREADY]
    i = n
    while i > 0 and (
        jfix[K.REL, rlist[i - 1]] > jfix[K.REL, j]
        or (jfix[K.REL, rlist[i - 1]] == jfix[K.REL, j] and rlist[i - 1] > j)
    ):
        rlist[i] = rlist[i - 1]
        i -= 1
    rlist[i] = j
    ctl[NREADY] = n + 1


@jit(callee=True)
def _set_free(g, v, gtype, gpos, tree, toff):
    """GPU g's leaf in its type's min-tree of free times (``_best_gpu``) becomes ``v``."""
    k = gtype[g]
    base, size = toff[k], (toff[k + 1] - toff[k]) // 2
    at = size + gpos[g]
    tree[base + at] = v
    while at > 1:
        at //= 2
        tree[base + at] = min(tree[base + 2 * at], tree[base + 2 * at + 1])


@jit(callee=True)
def _leftmost(k, x, tree, toff):
    """The first GPU of type k (its position in the type) free by ``x``, or -1."""
    base, size = toff[k], (toff[k + 1] - toff[k]) // 2
    if tree[base + 1] > x:
        return -1
    at = 1
    while at < size:
        at = 2 * at if tree[base + 2 * at] <= x else 2 * at + 1
    return at - size


@jit(callee=True)
def _best_gpu(j, ctl, jfix, ptype, gtype, gpos, tptr, tgpu, gst, tree, toff, own):
    """argmin over GPUs of ``Simulator.finishes(j)`` (the first GPU at the minimum) for a
    ready job (arrived, barrier passed): its start on a GPU is then max(free, now), plus
    the setup where the GPU last ran another job. So among a type's GPUs that need the
    setup, the first idle one wins, else the first that frees up first: one descent of
    the type's min-tree of free times, the job's own GPUs (``own``: linked lists of the
    GPUs each job ran last) left out; they count one by one."""
    now, o = ctl[K.NOW], jfix[K.OVH, j]
    big = _BIG
    g = own[0, j]
    while g >= 0:
        _set_free(g, big, gtype, gpos, tree, toff)
        g = own[1, g]
    best, at = big, -1
    for k in range(tptr.size - 1):
        p = ptype[j, k]
        if p == 0:
            continue
        i = _leftmost(k, now, tree, toff)
        f = now
        if i < 0:  # every GPU of the type busy (or the job's)
            f = tree[toff[k] + 1]
            if f >= big:
                continue
            i = _leftmost(k, f, tree, toff)
        g, f = tgpu[tptr[k] + i], f + o + p
        if f < best or (f == best and g < at):
            best, at = f, g
    g = own[0, j]
    while g >= 0:
        free = gst[K.GFREE, g]
        _set_free(g, free, gtype, gpos, tree, toff)
        p = ptype[j, gtype[g]]
        f = max(free, now) + p
        if p > 0 and (f < best or (f == best and g < at)):
            best, at = f, g
        g = own[1, g]
    return at


@jit(callee=True)
def _own(j, g, gst, own):
    """GPU g is about to run job j: move it to j's list of GPUs that ran it last."""
    x = gst[K.GLAST, g]
    if x == j:
        return
    if x >= 0:  # unlink g from x's list
        prev, nxt = own[2, g], own[1, g]
        if prev >= 0:
            own[1, prev] = nxt
        else:
            own[0, x] = nxt
        if nxt >= 0:
            own[2, nxt] = prev
    own[1, g], own[2, g] = own[0, j], -1
    if own[0, j] >= 0:
        own[2, own[0, j]] = g
    own[0, j] = g


@jit(callee=True)
def _finish(j, g, ctl, jfix, proc, gst):
    """``Simulator.finishes(j)[g]`` for a ready job (see ``_best_gpu``)."""
    setup = 0 if gst[K.GLAST, g] == j else jfix[K.OVH, j]
    return max(gst[K.GFREE, g], ctl[K.NOW]) + setup + proc[j, g]


@jit(callee=True)
def _decide_hlas(
    ctl,
    jfix,
    proc,
    sync,
    jst,
    gst,
    heap,
    buf,
    rlist,
    weight,
    min_task,
    q,
    ptype,
    gtype,
    gpos,
    tptr,
    tgpu,
    tree,
    toff,
    own,
):
    """``HLASPolicy.decide``: ready jobs by (class, arrival, job), each job's next tasks on
    the GPU where they finish first while that GPU is idle.

    A job that waits for a busy GPU g remembers it: every GPU's finish time for the job
    only grows (time passes, other jobs take GPUs and need a setup after), except
    through the job's own tasks; so while g's stays the same, g is still the first GPU
    where the job finishes first, and the job still waits."""
    now, n = ctl[K.NOW], 0
    for i in range(ctl[NREADY]):  # still ready: arrived, unfinished, past its barrier
        j = rlist[i]
        if (
            jst[K.ARRIVED, j]
            and not jst[K.FINISHED, j]
            and jst[K.RND, j] < jfix[K.ROUNDS, j]
            and jst[K.BARR, j] <= now
        ):
            rlist[n] = j
            n += 1
        else:
            jst[READY, j] = 0
    ctl[NREADY] = n
    idle = ctl[IDLE]
    if idle == 0 or n == 0:
        return 0
    c, got, ngot = -1, np.empty(n, dtype=np.int64), 0
    while idle:
        nxt = -1  # the smallest class above c: its jobs go next, by (arrival, job)
        for i in range(n):
            cl = jst[CLASS, rlist[i]]
            if cl > c and (nxt < 0 or cl < nxt):
                nxt = cl
        if nxt < 0:
            break
        c = nxt
        for i in range(n):
            j = rlist[i]
            if jst[CLASS, j] != c:
                continue
            r, before = jst[K.RND, j], jst[TASKS, j]
            while idle and jst[K.RND, j] == r:
                g = jst[BEST_AT, j]
                if (
                    g < 0
                    or jst[BEST_TASKS, j] != jst[TASKS, j]
                    or gst[K.GFREE, g] <= now
                    or _finish(j, g, ctl, jfix, proc, gst) != jst[BEST, j]
                ):
                    g = _best_gpu(
                        j, ctl, jfix, ptype, gtype, gpos, tptr, tgpu, gst, tree, toff, own
                    )
                if gst[K.GFREE, g] > now:  # its best GPU is busy: wait for it
                    jst[BEST_AT, j], jst[BEST_TASKS, j] = g, jst[TASKS, j]
                    jst[BEST, j] = _finish(j, g, ctl, jfix, proc, gst)
                    break
                _own(j, g, gst, own)
                _place(j, g, ctl, jfix, proc, sync, jst, gst, heap, buf)
                _set_free(g, gst[K.GFREE, g], gtype, gpos, tree, toff)
                idle -= 1
            if jst[TASKS, j] != before:
                got[ngot] = j
                ngot += 1
            if not idle:
                break
    ctl[IDLE] = idle
    for i in range(ngot):  # new classes once the decision's order is spent
        jst[CLASS, got[i]] = _hlas_class(got[i], jst, weight, min_task, q)
    return 0


# --- the loop ---------------------------------------------------------------------------
@jit(callee=True)
def _serve(
    work,
    ctl,
    jfix,
    proc,
    sync,
    elig,
    jst,
    gst,
    heap,
    buf,
    tptr,
    tgpu,
    qh,
    qlo,
    qn,
    wh,
    wlo,
    wn,
    tjobs,
    tnj,
    puntil,
    idle,
):
    """The plan follower's dispatch of the types in ``work``: strict or work-conserving."""
    if ctl[CONSERVING]:
        return _dispatch_ready(
            work,
            ctl,
            jfix,
            proc,
            sync,
            elig,
            jst,
            gst,
            heap,
            buf,
            tptr,
            tgpu,
            qh,
            wh,
            wlo,
            wn,
            tjobs,
            tnj,
            puntil,
            idle,
        )
    return _dispatch(
        work, ctl, jfix, proc, sync, elig, jst, gst, heap, buf, tptr, tgpu, qh, qlo, qn, puntil
    )


@jit
def run(
    ctl,
    jfix,
    proc,
    sync,
    elig,
    jst,
    gst,
    heap,
    buf,
    gtype,
    tptr,
    tgpu,
    qh,
    qlo,
    qn,
    wh,
    wlo,
    wn,
    tjobs,
    tnj,
    puntil,
    rlist,
    weight,
    min_task,
    q,
    ptype,
    gpos,
    tree,
    toff,
    own,
    headroom,
):
    """Advance until the run ends (``DONE``), a plan follower re-plans (``NEED_PLAN``), the
    event heap needs room (``GROW``: fewer than ``headroom`` free rows before a decision)
    or it cannot go on (a guard's code)."""
    idle = np.empty(gst.shape[1], dtype=np.int64)
    every = (1 << (tptr.size - 1)) - 1
    pol = ctl[K.POLICY]
    while True:
        if ctl[K.OVERFLOW]:
            return HEAP_FULL
        phase = ctl[K.PHASE]
        if phase == EVENTS:
            if ctl[K.LEFT] == 0:
                return DONE
            if ctl[K.NHEAP] == 0:
                return NO_EVENT
            t = heap[0, 0]
            if t > ctl[K.MAXTIME]:
                return PAST_TIME
            ctl[K.NOW] = t
            ctl[ARRIVED_NOW], ctl[FREED], ctl[WOKEN], ctl[OPENED] = 0, 0, 0, 0
            while ctl[K.NHEAP] > 0 and heap[0, 0] == t:  # in (time, kind, index) order
                kind, x = heap[0, 1], heap[0, 2]
                K._pop(heap, ctl)
                if kind == ARRIVE:
                    jst[K.ARRIVED, x] = 1
                    ctl[ARRIVED_NOW] = 1
                    if pol == HLAS:
                        _hlas_ready(x, ctl, jfix, jst, rlist, weight, min_task, q)
                elif kind == FREE:
                    ctl[FREED] |= 1 << gtype[x]
                    ctl[IDLE] += 1
                elif kind == BARRIER:
                    done = jst[K.RND, x] >= jfix[K.ROUNDS, x]
                    if done and jst[K.BARR, x] == t:
                        jst[K.FINISHED, x] = 1
                        ctl[K.LEFT] -= 1
                    elif not done:
                        ctl[OPENED] = 1
                        if pol == HLAS:
                            _hlas_ready(x, ctl, jfix, jst, rlist, weight, min_task, q)
                else:
                    ctl[WOKEN] = 1
            ctl[K.NEVENTS] += 1
            if ctl[K.NEVENTS] > ctl[K.MAXEVENTS]:
                return TOO_MANY_EVENTS
            if ctl[K.LEFT] == 0:
                return DONE
            ctl[K.PHASE] = DECIDE
        elif heap.shape[0] - ctl[K.NHEAP] < headroom:
            return GROW
        elif phase == DECIDE:
            ctl[K.PHASE] = EVENTS
            if pol == HLAS:
                rc = _decide_hlas(
                    ctl,
                    jfix,
                    proc,
                    sync,
                    jst,
                    gst,
                    heap,
                    buf,
                    rlist,
                    weight,
                    min_task,
                    q,
                    ptype,
                    gtype,
                    gpos,
                    tptr,
                    tgpu,
                    tree,
                    toff,
                    own,
                )
                if rc:
                    return rc
                continue
            if ctl[ARRIVED_NOW]:
                ctl[NEWJOBS] = 1
            if ctl[ARRIVAL] and ctl[NEWJOBS]:  # the paper's rule: re-plan first
                ctl[K.PHASE] = PLANNED
                return NEED_PLAN
            work = ctl[FREED]
            if ctl[WOKEN]:
                work |= ctl[WAITING_T]
                ctl[WAITING_T] = 0
            if ctl[CONSERVING] and ctl[OPENED]:  # a job's next round may start now
                work |= every
            rc = _serve(
                work,
                ctl,
                jfix,
                proc,
                sync,
                elig,
                jst,
                gst,
                heap,
                buf,
                tptr,
                tgpu,
                qh,
                qlo,
                qn,
                wh,
                wlo,
                wn,
                tjobs,
                tnj,
                puntil,
                idle,
            )
            if rc:
                return rc
            if _should_replan(ctl, jfix, jst, heap, puntil):
                ctl[K.PHASE] = PLANNED
                return NEED_PLAN
        else:  # PLANNED: the caller loaded the new plan; every type's queue is served
            ctl[K.PHASE] = EVENTS
            rc = _serve(
                every,
                ctl,
                jfix,
                proc,
                sync,
                elig,
                jst,
                gst,
                heap,
                buf,
                tptr,
                tgpu,
                qh,
                qlo,
                qn,
                wh,
                wlo,
                wn,
                tjobs,
                tnj,
                puntil,
                idle,
            )
            if rc:
                return rc
