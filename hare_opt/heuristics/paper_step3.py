"""Algorithm 1's step 3: list scheduling in the H order, in both readings of "earliest available".

The paper sends each task, in H order, to "the GPU with the earliest available time
phi_m" and starts it at max(t_i, phi_m). Read literally (``phi``, the default), that is
the eligible GPU whose free time phi_m is smallest (ties: earlier start, earlier end,
lower index); when several GPUs are free before the task is ready, that is the one idle
longest, whatever its speed. Read as "the GPU on which the task is available earliest"
(``start``), it is the GPU giving the earliest start max(t_i, phi_m) (+ setup), ties by
earlier end, then lower index. docs/theory.md (a) says what each reading rests on.

Placement rules (release, barrier with per-GPU sync, setup when a GPU last ran another
job) are ``ClusterState``'s; a state may start from a running cluster (``from_warm``).
``list_schedule`` runs the compiled kernel (``_paper_kernel``) on large inputs and
``list_schedule_reference``, the rule in plain Python, on small ones; a test checks
that both give the same schedule.
"""

from __future__ import annotations

import numpy as np

from hare_opt.heuristics.listsched import ClusterState
from hare_opt.model import Instance, OptionError
from hare_opt.model.planning import Warm

#: The two readings of step 3's "earliest available" GPU.
STEP3 = ("phi", "start")
#: List positions from which the compiled kernel is used (below, Python is as fast as
#: the call and needs no compilation).
COMPILED_FROM = 2000


def check_step3(step3: str, owner: str = "solver 'hare-paper'") -> str:
    if step3 not in STEP3:
        raise OptionError(
            f"must be one of {', '.join(STEP3)}, got {step3!r}", option="step3", owner=owner
        )
    return step3


def from_warm(inst: Instance, warm: Warm | None) -> ClusterState:
    """A ``ClusterState`` of the running cluster: GPU free times and last jobs, and each
    partly started round's tasks already placed (``K - left``) and their latest end +
    sync (``carry``)."""
    state = ClusterState(inst)
    if warm is not None:
        state.free[:] = warm.free
        state.last[:] = warm.last
        state.placed[:] = inst.tasks_per_round - np.asarray(warm.left, dtype=np.int64)
        state.round_end[:] = warm.carry
    return state


def past(state: ClusterState, left: np.ndarray, until: int) -> bool:
    """Whether no task of a job with positions ``left`` can start before ``until``: a task
    starts no earlier than its job's barrier (which only grows) and than the earliest free
    GPU of a type it can use (free times only grow)."""
    inst = state.inst
    live = np.asarray(left) > 0
    if not live.any():
        return True
    typefree = np.full(len(inst.gpu_types), np.iinfo(np.int64).max)
    np.minimum.at(typefree, inst.gpu_type_index, state.free)
    soonest = np.where(inst.eligible_by_type, typefree, np.iinfo(np.int64).max).min(axis=1)
    return bool((np.maximum(state.barrier, soonest)[live] >= until).all())


def list_schedule_reference(
    state: ClusterState,
    jobs: np.ndarray,
    step3: str = "phi",
    until: int | None = None,
    left: np.ndarray | None = None,
) -> ClusterState:
    """Step 3 in plain Python: the next task of ``jobs[0]``, ``jobs[1]``, ... in turn
    (``until``, ``left``: as ``list_schedule``)."""
    inst = state.inst
    index = np.arange(inst.num_gpus)
    big = np.iinfo(np.int64).max
    left = np.bincount(jobs, minlength=inst.num_jobs) if left is None else left
    for n in np.asarray(jobs).tolist():
        if until is not None and past(state, left, until):
            break
        left[n] -= 1
        starts = state.starts(n)
        ends = starts + inst.proc[n]
        if step3 == "start":
            key = np.lexsort((index, ends, starts))
        else:
            key = np.lexsort((index, ends, starts, np.where(inst.eligible[n], state.free, big)))
        state.place(n, int(key[0]))
    return state


def list_schedule(
    state: ClusterState,
    jobs: np.ndarray,
    step3: str = "phi",
    compiled: bool | None = None,
    until: int | None = None,
    left: np.ndarray | None = None,
) -> ClusterState:
    """Step 3 on ``state`` (updated in place): compiled from ``COMPILED_FROM`` positions
    on, or as ``compiled`` says.

    ``until``: stop before the first position from which no task can start before
    ``until`` (``past``): every job with positions left in the whole list (``left``, per
    job, counted down in place; default: ``jobs`` is the whole list) has its barrier and
    the earliest free GPU of each type it can use at ``until`` or later. Both only grow,
    so every later position would start at ``until`` or after: the tasks placed that start
    before ``until`` are exactly those of the full list schedule that do (an online plan
    needs no more than the work that can start before its next re-plan).
    """
    check_step3(step3)
    jobs = np.ascontiguousarray(jobs, dtype=np.int64)
    if left is None:
        left = np.bincount(jobs, minlength=state.inst.num_jobs).astype(np.int64)
    if not (len(jobs) >= COMPILED_FROM if compiled is None else compiled):
        return list_schedule_reference(state, jobs, step3, until, left)
    from hare_opt.heuristics._paper_kernel import list_schedule as kernel

    inst = state.inst
    can = (inst.rounds - state.round) * inst.tasks_per_round - state.placed
    need = np.bincount(jobs, minlength=inst.num_jobs)
    if (need > can).any():
        bad = int(np.flatnonzero(need > can)[0])
        raise ValueError(f"job {inst.jobs[bad].id!r} has fewer tasks left than positions")
    gtype = inst.gpu_type_index
    order = np.lexsort((np.arange(inst.num_gpus), state.free, gtype))  # by type, free, index
    tptr = np.r_[0, np.cumsum(inst.type_count)].astype(np.int64)
    buf = np.empty((len(jobs), 5), dtype=np.int64)
    nb = kernel(
        jobs,
        step3 == "start",
        gtype,
        tptr,
        order.astype(np.int64),
        inst.proc_by_type,
        inst.sync_by_type,
        inst.tasks_per_round,
        inst.release,
        inst.overhead,
        state.free,
        state.last,
        state.barrier,
        state.round,
        state.placed,
        state.round_end,
        buf,
        np.int64(np.iinfo(np.int64).max if until is None else until),
        left,
        np.ascontiguousarray(inst.eligible_by_type, dtype=np.bool_),
    )
    state.append(buf[:nb])
    return state


def warm_up() -> float:
    """Load (or, on the first run after installing, compile) the step-3 kernel; returns
    seconds, so that callers timing solvers can keep a one-off compile out of them."""
    import time

    from hare_opt.model import GPU, Job

    t0 = time.perf_counter()
    inst = Instance(
        (GPU("g0", "A"), GPU("g1", "B")),
        (Job("j0", {"A": 2, "B": 3}, rounds=2, tasks_per_round=2),),
        "warm-up",
    )
    for step3 in STEP3:
        list_schedule(ClusterState(inst), np.zeros(4, dtype=np.int64), step3, compiled=True)
    return time.perf_counter() - t0
