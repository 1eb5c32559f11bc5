"""``geobatch``: geometric batches, each list-scheduled without idling; a proved factor.

Why this algorithm: ``hare``'s search has no a-priori bound of its own, and the
serial fallback's bound grows with the number of GPUs. Here the factor
(docs/theory.md (c), ``bounds.approx``) depends only on task-time, sync and
setup ratios and on the share of the cluster each job may use, never on the
number of GPUs or jobs. ``hare`` runs it as one of its candidates.

* Batches (Hall, Schulz, Shmoys and Wein's doubling idea): at tau_l = tau_0 2^l,
  take from the unscheduled jobs with r_j <= tau_l and P_j <= tau_l (span alone
  on the idle cluster) the longest prefix, in order of w_j / W_j, whose cluster
  work fits M tau_l, plus the next one: at least the weight of any set that
  some schedule completes by tau_l, which is what the proof needs.
* A batch starts when every GPU is free and is list-scheduled task by task
  without idling: whenever a GPU is idle and a job of the batch has a ready
  task it may run there (released, round barrier passed), a task starts (with a
  setup if the GPU last ran another job); jobs in w_j / W_j order, each on the GPUs
  that ran it last first, then by task time + sync, type index, GPU index. The loop
  is compiled (``_geobatch_kernel``); tests/test_geobatch.py replays it in Python.
* Each job runs only on its types at most theta times slower than its fastest
  (``bounds.approx.restriction``). By default geobatch runs at theta*, the theta
  with the smallest factor, at theta = 1 (fastest types only) and at theta = inf
  (no restriction), and returns the best schedule: never worse than theta*'s, so
  theta*'s factor holds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from hare_opt.bounds import lower_bound
from hare_opt.bounds.approx import (
    approx_terms,
    best_restriction,
    geometric_bound,
    grid_start,
    ratio_order,
    restriction,
)
from hare_opt.bounds.combinatorial import cluster_work
from hare_opt.bounds.guarantee import solo_span
from hare_opt.heuristics._geobatch_kernel import run_batch
from hare_opt.model import Instance, Result, Schedule, Status
from hare_opt.model.options import Options, Run, option


def plan_batches(inst: Instance) -> list[tuple[int, list[int]]]:
    """(tau_l, jobs) for every non-empty batch, jobs in priority (w / W) order."""
    order = ratio_order(inst).tolist()
    span, work = solo_span(inst).tolist(), cluster_work(inst).tolist()
    release = inst.release.tolist()
    todo = set(range(inst.num_jobs))
    tau, out = grid_start(inst), []
    while todo:
        cap, used, batch = inst.num_gpus * tau, 0, []
        for j in order:
            if j in todo and release[j] <= tau and span[j] <= tau:
                batch.append(j)
                used += work[j]
                if used > cap:  # the one fractional job of the knapsack: taken whole
                    break
        if batch:
            out.append((tau, batch))
            todo.difference_update(batch)
        tau *= 2
    return out


class _Kernel:
    """The kernel's arrays for one instance and restriction (see ``_geobatch_kernel``)."""

    def __init__(self, inst: Instance, keep_t: np.ndarray):
        n, m = inst.num_jobs, inst.num_gpus
        p = inst.proc_by_type
        self.gtype = np.ascontiguousarray(inst.gpu_type_index, dtype=np.int64)
        self.tptr = np.concatenate([[0], np.cumsum(inst.type_count)]).astype(np.int64)
        # kept types of each job by (task time + sync, type index)
        key = np.where(keep_t, p + inst.sync_by_type, np.iinfo(np.int64).max)
        self.ktypes = np.ascontiguousarray(np.argsort(key, axis=1, kind="stable"), np.int64)
        self.nkt = keep_t.sum(axis=1).astype(np.int64)
        self.static = (
            self.gtype,
            self.tptr,
            self.ktypes,
            self.nkt,
            np.ascontiguousarray(p, np.int64),
            np.ascontiguousarray(inst.sync_by_type, np.int64),
            np.ascontiguousarray(inst.overhead, np.int64),
            np.ascontiguousarray(inst.tasks_per_round, np.int64),
            np.ascontiguousarray(inst.rounds, np.int64),
            np.ascontiguousarray(inst.release, np.int64),
        )
        self.last = np.full(m, -1, np.int64)
        self.rows = np.empty((inst.num_tasks, 5), np.int64)
        self.nr = 0
        self.done = np.zeros(n, np.int64)
        self.scratch = (
            np.empty(m, np.int64),
            np.zeros(len(self.tptr) - 1, np.int64),
            np.empty((m, 2), np.int64),
            np.empty((n, 2), np.int64),
        )

    def run(self, jobs: list[int], start: int) -> int:
        """Schedule one batch from ``start``; returns when every GPU is free again."""
        free, self.nr = run_batch(
            np.array(jobs, np.int64),
            start,
            *self.static,
            self.last,
            self.rows,
            self.nr,
            self.done,
            *self.scratch,
        )
        return int(free)


@dataclass
class GeoBatch:
    """A geobatch run: its objective and figures; the schedule is built on demand
    (``hare`` usually discards it, and building it costs as much as the run)."""

    inst: Instance
    objective: int
    stats: dict
    rows: np.ndarray  # (tasks, 5): job, round, task, gpu, start

    def schedule(self) -> Schedule:
        return Schedule.from_indices(self.inst, *self.rows.T)


def run_geobatch(inst: Instance, theta: float | None = None, *, extra: bool = True) -> GeoBatch:
    """Run geobatch; figures: theta (of the run returned), theta_star, factor (proved, at
    theta_star), batches (taus, starts), certificate (factor x geometric bound).

    ``theta`` None: run at theta_star, the threshold with the smallest proved factor,
    and at theta = 1 and theta = inf (when they restrict differently), and return the
    best schedule (ties: theta_star first). The factor of theta_star stays proved: the
    objective is at most theta_star's run's. ``extra`` False: theta_star's run only.
    """
    if theta is None:
        theta_star, keep_star, terms = best_restriction(inst)
        tries = [(theta_star, keep_star)]
        for th in (1.0, math.inf) if extra else ():
            keep_t = restriction(inst, th)
            if not any((keep_t == k).all() for _, k in tries):
                tries.append((th, keep_t))
    else:
        theta_star, keep_star = theta, restriction(inst, theta)
        terms, tries = approx_terms(inst, keep_star), [(theta, keep_star)]
    batches = plan_batches(inst)
    best: tuple[int, float, Any, list[int]] | None = None
    for th, keep_t in tries:
        kernel = _Kernel(inst, keep_t)
        free, starts = 0, []
        for _, jobs in batches:
            starts.append(free)  # its jobs become ready at max(start, release)
            free = kernel.run(jobs, free)
        objective = int(inst.weight @ kernel.done)
        if best is None or objective < best[0]:
            best = (objective, th, kernel.rows, starts)
    assert best is not None  # tries is never empty
    objective, th, rows, starts = best
    lb_geo = geometric_bound(inst)
    stats = {
        "theta": th,
        "theta_star": theta_star,
        "factor": float(terms["factor"]),
        "batches": len(batches),
        "batch_taus": [tau for tau, _ in batches],
        "batch_starts": starts,
        "geometric_bound": float(lb_geo),
        # proved: objective <= factor x geometric_bound (docs/theory.md (c))
        "certificate": float(terms["factor"] * lb_geo),
    }
    return GeoBatch(inst, objective, stats, rows)


def geobatch(inst: Instance, theta: float | None = None) -> tuple[Schedule, int, dict]:
    """The schedule, its objective and figures (``run_geobatch``)."""
    run = run_geobatch(inst, theta)
    return run.schedule(), run.objective, run.stats


@dataclass(frozen=True)
class GeobatchOptions(Options):
    """``theta``: the slowest-to-fastest task-time ratio of the types each job may use
    (default: the threshold with the smallest proved factor, plus the extra runs)."""

    theta: float | None = option(
        None,
        lo=1.0,
        doc="keep types at most theta times slower than a job's fastest (default: best factor)",
    )


def solve_geobatch(
    instance: Instance, run: Run | None = None, options: GeobatchOptions | None = None
) -> Result:
    """Geometric batches of non-idling list schedules. No search, so the run's limits do
    not apply (it takes milliseconds)."""
    run = run or Run()
    opts = options or GeobatchOptions()
    t0 = time.perf_counter()
    geo = run_geobatch(instance, opts.theta)
    return Result(
        "geobatch",
        Status.FEASIBLE,
        geo.schedule(),
        objective=geo.objective,
        lower_bound=lower_bound(instance, lp=False),
        runtime_s=time.perf_counter() - t0,
        instance_name=instance.name,
        stats=geo.stats,
    )


def warm_up() -> float:
    """Load (or, on the first run after installing, compile) the geobatch kernel; returns
    seconds, so that ``solve`` keeps a one-off compile out of the time limit."""
    from hare_opt.model import GPU, Job

    t0 = time.perf_counter()
    inst = Instance(
        (GPU("g0", "A"), GPU("g1", "B")),
        (Job("j0", {"A": 2, "B": 3}, rounds=2, tasks_per_round=2), Job("j1", {"A": 1}, release=1)),
        "warm-up",
    )
    run_geobatch(inst)
    return time.perf_counter() - t0
