"""GPU time a schedule leaves unused while work waits, and GPU time it holds for a task
that cannot yet run.

* **Idle while waiting** (per GPU type T): the integral over time of min(idle GPUs of T,
  tasks waiting that T may run). A task *waits* from when its job alone would let it
  start (release, or its round's barrier) until its GPU begins it (its setup, when it
  has one); a GPU is *idle* when it neither processes nor sets up. This is the GPU time
  a work-conserving dispatcher could have used. Per job, the same with only that job's
  waiting tasks (the jobs' figures overlap: two jobs may wait for the same idle GPU).
* **Reserved idle**: the part of the gap before a task on its GPU (after the GPU's
  previous task) during which the task itself was not ready while some other task the
  GPU may run waited: the GPU was given to a task before it could process, and that
  kept work off it (as ``hare``'s plans keep a fast GPU through its job's sync). A gap
  no other task wanted is not counted. Counted against the task's job and the GPU's
  type; every GPU held counts, so it may exceed the idle-while-waiting figure, which
  counts no more GPUs than there were waiting tasks.
* **Work inflation**: processing time placed / the same tasks on the job's fastest type.

All exact in the instance's integer time unit (no binning).
"""

from __future__ import annotations

import numpy as np

from hare_opt.analysis.graph import Placed


def _level(t0: np.ndarray, t1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The count of intervals [t0, t1) covering each time, as breakpoints and the value
    from each breakpoint to the next (the last value is 0)."""
    keep = t1 > t0
    times = np.concatenate([t0[keep], t1[keep]])
    delta = np.concatenate([np.ones(keep.sum(), np.int64), -np.ones(keep.sum(), np.int64)])
    at, inv = np.unique(times, return_inverse=True)
    value = np.cumsum(np.bincount(inv, weights=delta, minlength=len(at)).astype(np.int64))
    return at, value


def _value_at(level: tuple[np.ndarray, np.ndarray], t: np.ndarray) -> np.ndarray:
    at, value = level
    if not len(at):
        return np.zeros(len(t), np.int64)
    i = np.searchsorted(at, t, side="right") - 1
    return np.where(i >= 0, value[np.maximum(i, 0)], 0)


def _min_integral(
    a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], offset_a: int = 0
) -> int:
    """Integral of min(offset_a - a(t), b(t)) over the times where b > 0."""
    if not len(b[0]):
        return 0
    lo, hi = b[0][0], b[0][-1]
    inside = a[0][(a[0] > lo) & (a[0] < hi)]
    t = np.unique(np.concatenate([b[0], inside]))
    va = offset_a - _value_at(a, t) if offset_a else _value_at(a, t)
    vb = _value_at(b, t)
    return int((np.minimum(va, vb)[:-1].clip(min=0) * np.diff(t)).sum())


def waiting(p: Placed) -> tuple[np.ndarray, np.ndarray]:
    """Each task's waiting interval [ready, start - setup) (empty when it did not wait)."""
    return p.ready, np.maximum(p.ready, p.start - p.setup)


def busy_level(p: Placed, gpu_type: int) -> tuple[np.ndarray, np.ndarray]:
    """How many GPUs of ``gpu_type`` process or set up at each time."""
    on = p.instance.gpu_type_index[p.gpu] == gpu_type
    return _level((p.start - p.setup)[on], p.end[on])


def idle_while_waiting(p: Placed) -> tuple[np.ndarray, np.ndarray]:
    """(T,) per GPU type, and (N, T) per job and type: GPU time idle while tasks that
    type may run waited (the module's definition)."""
    inst = p.instance
    w0, w1 = waiting(p)
    per_type = np.zeros(len(inst.gpu_types), np.int64)
    per_job = np.zeros((inst.num_jobs, len(inst.gpu_types)), np.int64)
    for k in range(len(inst.gpu_types)):
        busy = busy_level(p, k)
        count = int(inst.type_count[k])
        may = inst.eligible_by_type[p.job, k]
        per_type[k] = _min_integral(busy, _level(w0[may], w1[may]), offset_a=count)
        for j in np.unique(p.job[may & (w1 > w0)]):
            mine = may & (p.job == j)
            per_job[j, k] = _min_integral(busy, _level(w0[mine], w1[mine]), offset_a=count)
    return per_type, per_job


def idle_gaps(p: Placed, horizon: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every GPU's idle intervals up to ``horizon``: (GPU index, start, end)."""
    m = p.instance.num_gpus
    order = np.lexsort((p.start, p.gpu))
    g = p.gpu[order]
    busy0, busy1 = (p.start - p.setup)[order], p.end[order]
    first = np.r_[True, g[1:] != g[:-1]]
    last = np.r_[g[1:] != g[:-1], True]
    gpu = np.concatenate([g, g[last], np.setdiff1d(np.arange(m), g)])
    a = np.concatenate(
        [
            np.where(first, 0, np.r_[0, busy1[:-1]]),
            busy1[last],
            np.zeros(m - len(np.unique(g)), np.int64),
        ]
    )
    b = np.concatenate(
        [busy0, np.full(last.sum(), horizon), np.full(m - len(np.unique(g)), horizon)]
    )
    keep = b > a
    return gpu[keep], a[keep], b[keep]


def waiting_windows(p: Placed, gpu_type: int) -> tuple[np.ndarray, np.ndarray]:
    """The maximal intervals during which some task that ``gpu_type`` may run waited."""
    w0, w1 = waiting(p)
    may = p.instance.eligible_by_type[p.job, gpu_type]
    at, value = _level(w0[may], w1[may])
    on = value > 0  # the last value is 0, so every window ends at a breakpoint
    first = on & ~np.r_[False, on[:-1]]
    last = on & ~np.r_[on[1:], False]
    return at[first], at[np.flatnonzero(last) + 1]


def pieces(
    starts: np.ndarray, ends: np.ndarray, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The parts of the sorted disjoint windows [starts, ends) inside each [a, b): the
    index of the interval each part lies in, and the part's bounds."""
    lo = np.searchsorted(ends, a, side="right")
    hi = np.searchsorted(starts, b, side="left")
    count = np.maximum(hi - lo, 0)
    which = np.repeat(np.arange(len(a)), count)
    w = np.repeat(lo, count) + (np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count))
    p0 = np.maximum(starts[w], a[which])
    p1 = np.minimum(ends[w], b[which])
    keep = p1 > p0
    return which[keep], p0[keep], p1[keep]


def reserved_gaps(p: Placed) -> tuple[np.ndarray, np.ndarray]:
    """Per task, the gap on its GPU before it during which it was not ready: [a, b)."""
    has = p.prev >= 0
    gap0 = np.where(has, p.end[np.maximum(p.prev, 0)], 0)
    gap1 = np.where(has, np.minimum(p.ready, p.start - p.setup), 0)
    return gap0, np.maximum(gap1, gap0)


def reserved_idle(p: Placed) -> np.ndarray:
    """(n,) per task: GPU time its GPU sat idle after its previous task while this task
    was not yet ready and some other task the GPU may run was waiting (0 for a GPU's
    first task)."""
    inst = p.instance
    gap0, gap1 = reserved_gaps(p)
    out = np.zeros(p.n, np.int64)
    kind = inst.gpu_type_index[p.gpu]
    for k in range(len(inst.gpu_types)):
        on = np.flatnonzero((kind == k) & (gap1 > gap0))
        if len(on):
            which, p0, p1 = pieces(*waiting_windows(p, k), gap0[on], gap1[on])
            out[on] = np.bincount(which, weights=p1 - p0, minlength=len(on))
    return out


def _work(p: Placed) -> tuple[np.ndarray, np.ndarray]:
    """(N,) each job's processing time placed, and its tasks' time on its fastest type."""
    n = p.instance.num_jobs
    return (
        np.bincount(p.job, weights=p.end - p.start, minlength=n),
        np.bincount(p.job, weights=p.instance.min_task_time[p.job], minlength=n),
    )


def inflation(p: Placed) -> np.ndarray:
    """(N,) each job's processing time placed / its tasks on its fastest type."""
    placed, fastest = _work(p)
    return placed / np.maximum(fastest, 1)


def overall_inflation(p: Placed) -> float:
    """All processing time placed / all tasks on their jobs' fastest types."""
    placed, fastest = _work(p)
    return float(placed.sum() / max(fastest.sum(), 1))
