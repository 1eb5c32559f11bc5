"""Numba kernel of the branch and bound: ``solver.py`` says what the search is.

State of a node (one int64 row, offsets from ``layout``): per job the tasks
placed ``c`` and, per GPU, the job it ran ``last`` (-1: none): together the
node's *key*; then per GPU ``free``, per job ``ready`` (release or previous
barrier, raised to the node's time), ``bar`` (max end + sync of the placed tasks
of an unfinished round), the weighted completion ``cost`` of finished jobs and
the node's time ``t`` (start of the last task placed): the *vector*.

The search is a depth-first loop over explicit stacks so that it can stop after
a node budget and resume (the caller watches the clock). The memo is a hash
table of labels chained per bucket; a label is stored in canonical form
(identical GPUs sorted by (last, free)).
"""

from __future__ import annotations

import numpy as np

from hare_opt.model.rules import earliest_start
from hare_opt.util.jit import PinnedJit

#: Pin of ``model.rules.earliest_start`` (``util.jit.source_pin``), compiled in below.
jit = PinnedJit(earliest_start, "9382e7301981c6ae", __name__)
_start = jit(earliest_start)
#: Slack on float bounds: a node is pruned when its bound exceeds best - 1 + EPS.
EPS = 1e-6


@jit
def layout(n, m):
    """Offsets of c, last, free, ready, bar, cost, t and the row length."""
    c, last, free = 0, n, n + m
    ready, bar = n + 2 * m, 2 * n + 2 * m
    cost = 3 * n + 2 * m
    return c, last, free, ready, bar, cost, cost + 1, cost + 2


@jit(callee=True)
def _est(row, j, g, fix, n, m):
    """Earliest start of a task of job j on GPU g from this node (never before its time)."""
    _, lo_last, lo_free, lo_ready, _, _, lo_t, _ = layout(n, m)
    s = _start(row[lo_free + g], row[lo_last + g] == j, fix[1, j], fix[2, j], row[lo_ready + j])
    return max(s, row[lo_t])


@jit
def scratch(n, m):
    """Work arrays of ``bound``: (4, N) floats (load releases, weights, volumes, syncs) and
    (2, M) ints (per GPU: earliest start, tasks counted)."""
    return np.empty((4, n)), np.empty((2, m), dtype=np.int64)


@jit
def bound(row, proc, sync, fix, rt, minp, mins, n, m, cut, fbuf, ibuf):
    """Lower bound on the objective of every completion of ``row``.

    cost + max(sum_j w_j path_j, load): path_j is job j's critical path from the
    node (its open round on the GPUs from their earliest starts, then minimum
    round times); load is the cluster as one machine of speed M (preemptive
    WSPT with releases, mean busy times; Goemans 1997), which also charges a
    setup to a job no GPU ran last. The load part is skipped when the path part
    already reaches ``cut``. ``fbuf``, ``ibuf``: from ``scratch``.
    """
    lo_c, lo_last, _, _, lo_bar, lo_cost, _, _ = layout(n, m)
    est, used = ibuf[0], ibuf[1]
    cost = row[lo_cost]
    path = 0
    nj = 0
    for j in range(n):
        cj = row[lo_c + j]
        k = fix[3, j]
        tj = k * fix[4, j]
        if cj == tj:
            continue
        # earliest start on every GPU, and the earliest moment its work (a setup) may begin
        first = np.int64(1) << 62
        on_some = False
        for g in range(m):
            if proc[j, g] < 0:
                continue
            est[g] = _est(row, j, g, fix, n, m)
            used[g] = 0
            if row[lo_last + g] == j:
                on_some = True
                first = min(first, est[g])
            else:
                first = min(first, est[g] - fix[2, j])
        # the round's barrier: the nrem-th smallest end + sync over the GPUs' successive slots
        done_in = cj % k
        nrem = k - done_in
        b = 0
        for _ in range(nrem):
            bestv, bestg = np.int64(1) << 62, -1
            for g in range(m):
                if proc[j, g] >= 0:
                    v = est[g] + (used[g] + 1) * proc[j, g] + sync[j, g]
                    if v < bestv:
                        bestv, bestg = v, g
            used[bestg] += 1
            b = bestv
        if done_in > 0 and row[lo_bar + j] > b:
            b = row[lo_bar + j]
        path += fix[0, j] * (b + ((tj - cj - nrem) // k) * rt[j])
        fbuf[0, nj] = first
        fbuf[1, nj] = fix[0, j]
        fbuf[2, nj] = ((tj - cj) * minp[j] + (0 if on_some else fix[2, j])) / m
        fbuf[3, nj] = mins[j]
        nj += 1
    if nj == 0 or cost + path >= cut:
        return float(cost + path)
    return max(float(cost + path), cost + _load(fbuf[0], fbuf[1], fbuf[2], fbuf[3], nj))


@jit
def _load(q, w, v, s, nj):
    """sum_j w_j (M_j + V_j / 2 + s_j) of preemptive WSPT (largest w/V first) with releases q.

    The float twin of ``hare_opt.bounds.combinatorial.preemptive_wspt`` (exact, in
    Fractions, which numba cannot run); here it runs at every node.
    """
    order = np.argsort(q[:nj], kind="mergesort")  # stable: the same order compiled or not
    left = v[:nj].copy()
    acc = np.zeros(nj)
    t = 0.0
    i = 0
    active = 0
    while i < nj or active > 0:
        if active == 0:
            t = max(t, float(q[order[i]]))
        while i < nj and q[order[i]] <= t:
            active += 1
            i += 1
        best, kbest = -1.0, -1
        for a in range(i):
            k = order[a]
            if left[k] > 1e-12:
                ratio = w[k] / v[k] if v[k] > 0 else 1e300
                if ratio > best:
                    best, kbest = ratio, k
        run = left[kbest] if i == nj else min(left[kbest], q[order[i]] - t)
        acc[kbest] += (t + run) ** 2 - t * t
        left[kbest] -= run
        t += run
        if left[kbest] <= 1e-12:
            left[kbest] = 0.0
            active -= 1
    total = 0.0
    for k in range(nj):
        mb = acc[k] / (2 * v[k]) if v[k] > 0 else t
        total += w[k] * (mb + v[k] / 2 + s[k])
    return total


@jit(callee=True)
def child(row, out, j, g, proc, sync, fix, n, m):
    """``out`` = ``row`` with the next task of job j placed on GPU g; returns its start."""
    lo_c, lo_last, lo_free, lo_ready, lo_bar, lo_cost, lo_t, width = layout(n, m)
    for i in range(width):
        out[i] = row[i]
    s = _est(row, j, g, fix, n, m)
    e = s + proc[j, g]
    reach = e + sync[j, g]
    k = fix[3, j]
    cj = row[lo_c + j]
    out[lo_c + j] = cj + 1
    out[lo_free + g] = e
    out[lo_last + g] = j
    out[lo_bar + j] = max(row[lo_bar + j], reach) if cj % k else reach
    if (cj + 1) % k == 0:
        out[lo_ready + j] = out[lo_bar + j]
        out[lo_bar + j] = 0
        if cj + 1 == k * fix[4, j]:
            out[lo_cost] += fix[0, j] * out[lo_ready + j]
            out[lo_ready + j] = 0
    out[lo_t] = s
    for i in range(n):
        if out[lo_c + i] < fix[3, i] * fix[4, i] and out[lo_ready + i] < s:
            out[lo_ready + i] = s
    return s


@jit
def canonical(row, out, groups, gptr, n, m):
    """``out`` = ``row`` with the GPUs of each type sorted by (last, free)."""
    _, lo_last, lo_free, _, _, _, _, width = layout(n, m)
    for i in range(width):
        out[i] = row[i]
    for a in range(len(gptr) - 1):
        lo, hi = gptr[a], gptr[a + 1]
        for x in range(lo + 1, hi):  # insertion sort of (last, free) pairs in place
            y = x
            while y > lo:
                ga, gb = groups[y - 1], groups[y]
                la, lb = out[lo_last + ga], out[lo_last + gb]
                if la < lb or (la == lb and out[lo_free + ga] <= out[lo_free + gb]):
                    break
                out[lo_last + ga], out[lo_last + gb] = lb, la
                fa = out[lo_free + ga]
                out[lo_free + ga] = out[lo_free + gb]
                out[lo_free + gb] = fa
                y -= 1


@jit(callee=True)
def _hash(row, nkey):
    h = np.uint64(1469598103934665603)
    for i in range(nkey):
        h = (h ^ np.uint64(row[i] + 2)) * np.uint64(1099511628211)
    return h


@jit(callee=True)
def dominated(key_row, head, nxt, labels, dead, count, n, m):
    """True when a stored label dominates ``key_row`` (same key, vector <= elementwise);
    else stored labels it dominates are marked dead and it is stored (in a dead label's
    place, or a new one while room is left)."""
    nkey = n + m
    width = labels.shape[1]
    slot = np.int64(_hash(key_row, nkey) & np.uint64(len(head) - 1))
    i = head[slot]
    spare = -1
    while i >= 0:
        if dead[i]:
            spare = i
        else:
            same = True
            for x in range(nkey):
                if labels[i, x] != key_row[x]:
                    same = False
                    break
            if same:
                le, ge = True, True
                for x in range(nkey, width):
                    if labels[i, x] > key_row[x]:
                        le = False
                    elif labels[i, x] < key_row[x]:
                        ge = False
                if le:
                    return True
                if ge:
                    dead[i] = True
        i = nxt[i]
    if spare >= 0:  # reuse a dominated label of this bucket
        for c in range(key_row.size):  # element-wise: see ``_kernels._pop``
            labels[spare, c] = key_row[c]
        dead[spare] = False
    elif count[0] < len(labels):
        i = count[0]
        for c in range(key_row.size):
            labels[i, c] = key_row[c]
        nxt[i] = head[slot]
        head[slot] = i
        count[0] += 1
    return False


@jit
def rehash(labels, count, head, nxt, n, m):
    """Chain the first ``count`` labels into an empty ``head`` (after the memo grew)."""
    for i in range(count):
        slot = np.int64(_hash(labels[i], n + m) & np.uint64(len(head) - 1))
        nxt[i] = head[slot]
        head[slot] = i


@jit
def expand(row, d, chj, chg, nch, proc, fix, gtype, n, m):
    """Children of the node at depth d, by earliest start then w/p (largest first);
    a GPU identical to an earlier one in (type, last, free) is skipped."""
    _, lo_last, lo_free, _, _, _, _, _ = layout(n, m)
    keys = np.empty(n * m)
    js = np.empty(n * m, dtype=np.int64)
    gs = np.empty(n * m, dtype=np.int64)
    cnt = 0
    for j in range(n):
        if row[j] == fix[3, j] * fix[4, j]:
            continue
        for g in range(m):
            if proc[j, g] < 0:
                continue
            twin = False
            for h in range(g):
                if (
                    gtype[h] == gtype[g]
                    and row[lo_last + h] == row[lo_last + g]
                    and row[lo_free + h] == row[lo_free + g]
                ):
                    twin = True
                    break
            if twin:
                continue
            s = _est(row, j, g, fix, n, m)
            keys[cnt] = s + proc[j, g] / (proc[j, g] + fix[0, j])
            js[cnt], gs[cnt] = j, g
            cnt += 1
    order = np.argsort(keys[:cnt], kind="mergesort")  # stable: ties keep their index order
    for a in range(cnt):
        chj[d, a] = js[order[a]]
        chg[d, a] = gs[order[a]]
    nch[d] = cnt


@jit
def run(
    states,
    chj,
    chg,
    nch,
    ptr,
    depth,
    moves,
    best_moves,
    best,
    proc,
    sync,
    fix,
    rt,
    minp,
    mins,
    gtype,
    groups,
    gptr,
    head,
    nxt,
    labels,
    dead,
    count,
    stats,
    budget,
):
    """Advance the depth-first search by at most ``budget`` nodes.

    Returns 0 when the search is over (``best`` is then optimal), 1 when the budget
    ran out (call again to resume). ``moves[d]`` is (job, gpu, start) of the task
    placed at depth d; ``best_moves`` those of the best complete schedule.
    """
    n, m = proc.shape
    _, _, _, _, _, lo_cost, _, width = layout(n, m)
    total = 0
    for j in range(n):
        total += fix[3, j] * fix[4, j]
    canon = np.empty(width, dtype=np.int64)
    fbuf, ibuf = scratch(n, m)
    spent = 0
    while spent < budget:
        d = depth[0]
        if d < 0:
            return 0
        if ptr[d] >= nch[d]:
            depth[0] = d - 1
            continue
        a = ptr[d]
        ptr[d] += 1
        j, g = chj[d, a], chg[d, a]
        out = states[d + 1]
        s = child(states[d], out, j, g, proc, sync, fix, n, m)
        moves[d, 0], moves[d, 1], moves[d, 2] = j, g, s
        spent += 1
        stats[0] += 1
        if d + 1 == total:
            if out[lo_cost] < best[0]:
                best[0] = out[lo_cost]
                for q in range(moves.shape[0]):  # element-wise: see ``_kernels._pop``
                    for c in range(moves.shape[1]):
                        best_moves[q, c] = moves[q, c]
                stats[2] += 1
            continue
        # Bound first: a label stored in the memo should be one worth searching.
        cut = best[0] - 1 + EPS
        if bound(out, proc, sync, fix, rt, minp, mins, n, m, cut, fbuf, ibuf) > cut:
            stats[3] += 1
            continue
        canonical(out, canon, groups, gptr, n, m)
        if dominated(canon, head, nxt, labels, dead, count, n, m):
            stats[1] += 1
            continue
        expand(out, d + 1, chj, chg, nch, proc, fix, gtype, n, m)
        ptr[d + 1] = 0
        depth[0] = d + 1
    return 1


@jit
def open_bound(states, chj, chg, nch, ptr, depth, best, proc, sync, fix, rt, minp, mins):
    """Lowest bound over the children not yet searched: with ``best``, a proved lower bound
    when the search stops early (every searched subtree holds nothing below ``best``)."""
    n, m = proc.shape
    _, _, _, _, _, _, _, width = layout(n, m)
    out = np.empty(width, dtype=np.int64)
    fbuf, ibuf = scratch(n, m)
    low = float(best[0])
    for d in range(depth[0] + 1):
        for a in range(ptr[d], nch[d]):
            child(states[d], out, chj[d, a], chg[d, a], proc, sync, fix, n, m)
            v = bound(out, proc, sync, fix, rt, minp, mins, n, m, 1e300, fbuf, ibuf)
            if v < low:
                low = v
    return low
