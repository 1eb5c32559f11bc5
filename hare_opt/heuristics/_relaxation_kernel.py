"""Numba kernel of step 1's search (``relaxation_points.AssignmentSearch``).

Why compiled: the planner runs step 1 at every re-plan (300 plans a 160-GPU run), and a
search to a local optimum evaluates hundreds of assignments a plan; each evaluation is a
pass over one job's tasks and a covering LP with a row per machine, microseconds here.

The relaxation with the assignment fixed (``relaxation_points`` says why this is its
optimum): every task ends at its round's barrier, each job's barriers are its earliest
chain, and whole jobs are delayed (``delta``) by the covering LP

    min sum_n w_n delta_n  s.t.  sum_n a[m, n] delta_n >= g[m] (machines with g > 0),

a[m, n] the work of job n on machine m, g[m] what machine m's Queyranne row still needs.
State arrays are ``AssignmentSearch``'s; a move of task i to machine q is evaluated
exactly (job i's chain redone, the LP solved again) and kept when it lowers the value.
"""

from __future__ import annotations

import math

import numpy as np

from hare_opt.util.jit import PinnedJit

#: No rule of another module is compiled in (the pin of nothing).
jit = PinnedJit((), "e3b0c44298fc1c14", __name__)
_TINY = 1e-12


@jit(callee=True)
def _f(cap, amin, amean, gamma, m, load):
    """f_m(load), ``Machines.f``: the least 2 S + Q a machine-m load may have."""
    return load * load / cap[m] + max(2.0 * amin[m] * load, 2.0 * amean[m] * load + gamma[m])


@jit(callee=True)
def _chain(n, gpu, jptr, rptr, p, d, rel, amin, bar, dr, x, a, lhs):
    """Job n at assignment ``gpu``: its earliest barriers ``bar`` and round lengths ``dr``
    (per round), every task's start ``x`` ending at its barrier (the latest starts that keep
    the job's completion), and per machine its work ``a`` and sum of p x ``lhs`` (both
    zeroed first). Returns the job's completion."""
    a[:] = 0.0
    lhs[:] = 0.0
    prev = -math.inf
    for r in range(jptr[n], jptr[n + 1]):
        b = -math.inf
        big = 0.0
        for i in range(rptr[r], rptr[r + 1]):
            m = gpu[i]
            s = max(prev, max(rel[n], amin[m])) + d[n, m]
            b = max(b, s)
            big = max(big, d[n, m])
        bar[r] = b
        dr[r] = big
        prev = b
    late = prev
    for r in range(jptr[n + 1] - 1, jptr[n] - 1, -1):
        for i in range(rptr[r], rptr[r + 1]):
            m = gpu[i]
            x[i] = late - d[n, m]
            a[m] += p[n, m]
            lhs[m] += p[n, m] * x[i]
        late -= dr[r]
    return prev


@jit(callee=True)
def cover(a, g, w, delta, lam):
    """The covering LP by the dual simplex (rows scaled to right-hand side 1, Bland's rule:
    finite). Fills ``delta`` (per job) and ``lam`` (per machine, the row duals); returns the
    optimum, inf if a row cannot be met (no work on its machine)."""
    mm, nn = a.shape
    delta[:] = 0.0
    lam[:] = 0.0
    rows = np.empty(mm, dtype=np.int64)
    k = 0
    for m in range(mm):
        if g[m] > _TINY * max(1.0, abs(g[m])):
            rows[k] = m
            k += 1
    if k == 0:
        return 0.0
    cols = nn + k
    tab = np.zeros((k, cols))
    beta = np.full(k, -1.0)
    cbar = np.zeros(cols)
    basis = np.empty(k, dtype=np.int64)
    for q in range(k):
        m = rows[q]
        for n in range(nn):
            tab[q, n] = -a[m, n] / g[m]
        tab[q, nn + q] = 1.0
        basis[q] = nn + q
    for n in range(nn):
        cbar[n] = w[n]
    for _ in range(1000 * (k + 1)):
        r = -1
        for q in range(k):
            if beta[q] < -1e-9 and (r < 0 or basis[q] < basis[r]):
                r = q
        if r < 0:
            break
        j = -1
        best = math.inf
        for c in range(cols):
            t = tab[r, c]
            if t < -_TINY:
                ratio = cbar[c] / -t
                if ratio < best:
                    best, j = ratio, c
        if j < 0:
            return math.inf
        piv = tab[r, j]
        for c in range(cols):
            tab[r, c] /= piv
        beta[r] /= piv
        for q in range(k):
            if q != r and tab[q, j] != 0.0:
                f = tab[q, j]
                for c in range(cols):
                    tab[q, c] -= f * tab[r, c]
                beta[q] -= f * beta[r]
        f = cbar[j]
        for c in range(cols):
            cbar[c] -= f * tab[r, c]
        basis[r] = j
    value = 0.0
    for q in range(k):
        if basis[q] < nn:
            delta[basis[q]] = max(beta[q], 0.0)
            value += w[basis[q]] * delta[basis[q]]
    for q in range(k):
        lam[rows[q]] = max(cbar[nn + q], 0.0) / g[rows[q]]
    return value


@jit
def _rows(cap, amin, amean, gamma, load, square, lhs, g):
    """g[m] = (f_m(L_m) - Q_m) / 2 - sum p x on m."""
    for m in range(g.shape[0]):
        g[m] = (_f(cap, amin, amean, gamma, m, load[m]) - square[m]) / 2.0 - lhs[m]


@jit
def setup(
    gpu,
    tjob,
    jptr,
    rptr,
    p,
    d,
    rel,
    w,
    cap,
    amin,
    amean,
    gamma,
    bar,
    dr,
    x,
    comp,
    work,
    jlhs,
    load,
    square,
    lhs,
    g,
    delta,
    lam,
):
    """Every job's chain and contribution at ``gpu`` (``work``, ``jlhs``: per machine
    and job, its work and sum of p x), the rows and the LP; returns (sum_n w_n C_n, the
    LP's optimum)."""
    nn, mm = p.shape
    load[:] = 0.0
    square[:] = 0.0
    lhs[:] = 0.0
    a = np.empty(mm)
    s = np.empty(mm)
    total = 0.0
    for n in range(nn):
        comp[n] = _chain(n, gpu, jptr, rptr, p, d, rel, amin, bar, dr, x, a, s)
        total += w[n] * comp[n]
        for m in range(mm):
            work[m, n] = a[m]
            jlhs[m, n] = s[m]
            lhs[m] += s[m]
    for i in range(gpu.shape[0]):
        pi = p[tjob[i], gpu[i]]
        load[gpu[i]] += pi
        square[gpu[i]] += pi * pi
    _rows(cap, amin, amean, gamma, load, square, lhs, g)
    return total, cover(work, g, w, delta, lam)


@jit(callee=True)
def _suffix(n, gpu, jptr, rptr, p, d, suf, top1, top1i, top2):
    """Per round of job n: the work on each machine of its rounds from there on (``suf``),
    and its longest task (span, task) and second longest span."""
    mm = suf.shape[1]
    run = np.zeros(mm)
    for r in range(jptr[n + 1] - 1, jptr[n] - 1, -1):
        t1, t2, i1 = -1.0, -1.0, -1
        for i in range(rptr[r], rptr[r + 1]):
            m = gpu[i]
            run[m] += p[n, m]
            v = d[n, m]
            if v > t1:
                t2, t1, i1 = t1, v, i
            elif v > t2:
                t2 = v
        for m in range(mm):
            suf[r, m] = run[m]
        top1[r], top1i[r], top2[r] = t1, i1, max(t2, 0.0)


@jit(callee=True)
def _scan(
    tries,
    gpu,
    tjob,
    trnd,
    p,
    d,
    elig,
    w,
    cap,
    amin,
    amean,
    gamma,
    dr,
    x,
    load,
    delta,
    lam,
    suf,
    top1,
    top1i,
    top2,
    best_est,
    best_mv,
):
    """Rank every move by its first-order estimate (the covering LP's duals, the change of
    its round's longest task): the ``tries`` best with a negative estimate, by (estimate,
    task x machines + machine), into ``best_est``/``best_mv``; returns how many."""
    mm = p.shape[1]
    nr = suf.shape[0]
    sl = np.empty(nr)
    for r in range(nr):
        acc = 0.0
        for m in range(mm):
            acc += lam[m] * suf[r, m]
        sl[r] = acc
    kept = 0
    for i in range(gpu.shape[0]):
        n, r, m = tjob[i], trnd[i], gpu[i]
        po = p[n, m]
        dwo = top2[r] if top1i[r] == i else top1[r]
        late = x[i] + d[n, m]
        leave = lam[m] * (
            (
                _f(cap, amin, amean, gamma, m, load[m] - po)
                - _f(cap, amin, amean, gamma, m, load[m])
                + po * po
            )
            / 2.0
            + po * x[i]
        )
        for q in range(mm):
            if q == m or not elig[n, q]:
                continue
            pq, dq = p[n, q], d[n, q]
            db = max(dwo, dq) - dr[r]
            est = w[n] * db - db * (sl[r] - lam[m] * po) + leave
            est += lam[q] * (
                (
                    _f(cap, amin, amean, gamma, q, load[q] + pq)
                    - _f(cap, amin, amean, gamma, q, load[q])
                    - pq * pq
                )
                / 2.0
                - pq * (late + db - dq)
            )
            est -= delta[n] * (lam[q] * pq - lam[m] * po)
            if est >= 0.0:
                continue
            mv = i * mm + q
            if kept == tries and (
                est > best_est[kept - 1] or (est == best_est[kept - 1] and mv > best_mv[kept - 1])
            ):
                continue
            pos = kept if kept < tries else tries - 1
            while pos > 0 and (
                best_est[pos - 1] > est or (best_est[pos - 1] == est and best_mv[pos - 1] > mv)
            ):
                best_est[pos] = best_est[pos - 1]
                best_mv[pos] = best_mv[pos - 1]
                pos -= 1
            best_est[pos] = est
            best_mv[pos] = mv
            if kept < tries:
                kept += 1
    return kept


@jit
def search(
    evaluations,
    gpu,
    tjob,
    trnd,
    jptr,
    rptr,
    p,
    d,
    elig,
    rel,
    w,
    cap,
    amin,
    amean,
    gamma,
    bar,
    dr,
    x,
    comp,
    work,
    jlhs,
    load,
    square,
    lhs,
    g,
    delta,
    lam,
    value,
    best_est,
    best_mv,
    cursor,
):
    """First-improvement local search over one task's machine at a time, from ``gpu``.

    Each round of the search ranks every move by a first-order estimate (``_scan``) and
    evaluates the ``len(best_est)`` best with a negative estimate exactly, in that order;
    the first that lowers the value is made and the moves are ranked again. Stops when
    none of them does (``done``) or after ``evaluations`` exact evaluations; resumable:
    the ranked moves and the next to evaluate are kept in ``best_est``/``best_mv`` and
    ``cursor`` (how many ranked, next; 0 ranked: rank again), so that a search run in
    several calls evaluates exactly the moves one call would. State arrays are updated in
    place; ``value`` holds the current value and its part sum_n w_n C_n. Returns
    (evaluations used, done)."""
    nn, mm = p.shape
    tt = gpu.shape[0]
    nr = rptr.shape[0] - 1
    tries = best_est.shape[0]
    suf = np.zeros((nr, mm))
    top1 = np.zeros(nr)
    top2 = np.zeros(nr)
    top1i = np.zeros(nr, dtype=np.int64)
    for n in range(nn):
        _suffix(n, gpu, jptr, rptr, p, d, suf, top1, top1i, top2)
    # scratch of one evaluation
    tbar, tdr, tx = np.empty(nr), np.empty(nr), np.empty(tt)
    na, ns = np.empty(mm), np.empty(mm)
    gg, tl, ts, tlhs = np.empty(mm), np.empty(mm), np.empty(mm), np.empty(mm)
    tdelta, tlam, col = np.empty(nn), np.empty(mm), np.empty(mm)
    used = 0
    while used < evaluations:
        if cursor[0] == 0:
            cursor[0] = _scan(
                tries,
                gpu,
                tjob,
                trnd,
                p,
                d,
                elig,
                w,
                cap,
                amin,
                amean,
                gamma,
                dr,
                x,
                load,
                delta,
                lam,
                suf,
                top1,
                top1i,
                top2,
                best_est,
                best_mv,
            )
            cursor[1] = 0
            if cursor[0] == 0:
                return used, True
        if cursor[1] >= cursor[0]:  # every ranked move tried: a local optimum
            return used, True
        c = cursor[1]
        cursor[1] += 1
        used += 1
        i, q = best_mv[c] // mm, best_mv[c] % mm
        n, m = tjob[i], gpu[i]
        gpu[i] = q
        cn = _chain(n, gpu, jptr, rptr, p, d, rel, amin, tbar, tdr, tx, na, ns)
        for u in range(mm):
            tl[u] = load[u]
            ts[u] = square[u]
            tlhs[u] = lhs[u] - jlhs[u, n] + ns[u]
            col[u] = work[u, n]
            work[u, n] = na[u]
        tl[m] -= p[n, m]
        ts[m] -= p[n, m] * p[n, m]
        tl[q] += p[n, q]
        ts[q] += p[n, q] * p[n, q]
        _rows(cap, amin, amean, gamma, tl, ts, tlhs, gg)
        lp = cover(work, gg, w, tdelta, tlam)
        base = value[1] - w[n] * comp[n] + w[n] * cn
        new = base + lp
        if new < value[0] - 1e-9 * max(1.0, abs(value[0])):
            for r in range(jptr[n], jptr[n + 1]):
                bar[r], dr[r] = tbar[r], tdr[r]
                for k in range(rptr[r], rptr[r + 1]):
                    x[k] = tx[k]
            comp[n] = cn
            for u in range(mm):  # element-wise: see ``_kernels._pop``
                jlhs[u, n] = ns[u]
                load[u], square[u], lhs[u], g[u], lam[u] = tl[u], ts[u], tlhs[u], gg[u], tlam[u]
            for v in range(nn):
                delta[v] = tdelta[v]
            value[0], value[1] = new, base
            _suffix(n, gpu, jptr, rptr, p, d, suf, top1, top1i, top2)
            cursor[0] = 0  # rank again
        else:
            gpu[i] = m
            for u in range(mm):
                work[u, n] = col[u]
    return used, False
