"""Simple dispatching rules: the baselines every heuristic must beat.

All place each task on the eligible GPU where it would finish earliest
(setup and barrier included); they differ only in the order of jobs. They take
no options. They take milliseconds on small instances but about a minute on 10^6
tasks, so they watch the run's time limit and stop flag: a rule that cannot finish
returns ``unknown`` with no schedule (a partial schedule is no schedule).
"""

from __future__ import annotations

import time

import numpy as np

from hare_opt.heuristics.listsched import ClusterState
from hare_opt.model import Instance, Result, Schedule, Status
from hare_opt.model.limits import OutOfTime
from hare_opt.model.options import NoOptions, Run


def place_job_eft(state: ClusterState, job: int) -> None:
    """Place every remaining task of ``job``, each on its earliest-finish GPU."""
    while not state.done(job):
        state.place(job, int(np.argmin(state.finishes(job))))


def _unknown(instance: Instance, name: str, t0: float, why: OutOfTime) -> Result:
    return Result(
        name,
        Status.UNKNOWN,
        Schedule.empty(),
        runtime_s=time.perf_counter() - t0,
        instance_name=instance.name,
        stats={"stopped": str(why)},
    )


def _by_order(instance: Instance, order: np.ndarray, name: str, run: Run | None = None) -> Result:
    t0 = time.perf_counter()
    state = ClusterState(instance)
    try:
        for pos, j in enumerate(order):
            if run is not None and not pos % 8:
                run.check()
            place_job_eft(state, int(j))
    except OutOfTime as why:
        return _unknown(instance, name, t0, why)
    return state.result(name, time.perf_counter() - t0)


def solve_fifo(
    instance: Instance, run: Run | None = None, options: NoOptions | None = None
) -> Result:
    """Jobs in arrival order (ties: file order), as FIFO cluster schedulers do."""
    return _by_order(instance, np.argsort(instance.release, kind="stable"), "fifo", run)


def solve_wspt(
    instance: Instance, run: Run | None = None, options: NoOptions | None = None
) -> Result:
    """Jobs by Smith's ratio weight / work on the fastest GPU type, largest first."""
    ratio = instance.weight / instance.min_work
    return _by_order(instance, np.lexsort((instance.release, -ratio)), "wspt", run)


def eft_state(
    instance: Instance, free_from: np.ndarray | None = None, run: Run | None = None
) -> ClusterState:
    """The greedy's placements: always the task that would finish earliest anywhere
    (ties: heavier job, then lower index); GPU g free from ``free_from[g]`` (default 0).
    ``run``: its limit and stop flag are watched (``OutOfTime``)."""
    state = ClusterState(instance)
    if free_from is not None:
        state.free[:] = free_from
    active = np.arange(instance.num_jobs)
    placed = 0
    while len(active):
        placed += 1
        if run is not None and not placed % 16:
            run.check()
        fin = state.finishes_of(active)
        first = fin.min(axis=1)
        pos = int(np.lexsort((active, -instance.weight[active], first))[0])
        best = int(active[pos])
        state.place(best, int(np.argmin(fin[pos])))
        if state.done(best):
            active = np.delete(active, pos)
    return state


def solve_eft(
    instance: Instance, run: Run | None = None, options: NoOptions | None = None
) -> Result:
    """Greedy over all jobs: always place the task that would finish earliest anywhere."""
    t0 = time.perf_counter()
    try:
        state = eft_state(instance, run=run)
    except OutOfTime as why:
        return _unknown(instance, "eft", t0, why)
    return state.result("eft", time.perf_counter() - t0)
