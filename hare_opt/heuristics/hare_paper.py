"""The paper's Hare heuristic (Algorithm 1 of Chen et al., HPDC '22), implemented as printed.

Kept separate from our own ``hare`` so that the paper's claim can be tested
as stated: relax (step 1), order tasks by H_i = max_m (x^_i + p_{i,m}/2)
(step 2), then list-schedule in that order, each task on the eligible GPU that
becomes free first, *not* the fastest (step 3). The relaxation and the
choices the paper leaves open are documented in docs/theory.md (a).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from hare_opt.heuristics.listsched import ClusterState
from hare_opt.heuristics.relaxation import (
    MAX_ASSIGNMENTS,
    Relaxation,
    availability,
    solve_relaxation,
)
from hare_opt.model import Instance, OptionError, Result, Schedule, Status, ceil_bound
from hare_opt.model.limits import OutOfTime
from hare_opt.model.options import Options, Run, option

#: Share of the time limit for the relaxation (step 1); steps 2-3 must fit in the rest.
RELAX_SHARE = 0.8
#: Seconds past the limit the list scheduling may take before it gives up (it is
#: milliseconds on small instances; only huge ones are stopped).
FINISH_GRACE_S = 0.5


def priorities(inst: Instance, relax: Relaxation) -> np.ndarray:
    """H_i = x^_i + max_m p_{i,m} / 2 over the GPUs that can run task i."""
    pmax = np.where(inst.eligible, inst.proc, 0).max(axis=1)
    return relax.x + pmax[relax.tasks.job] / 2.0


def task_order(inst: Instance, relax: Relaxation) -> tuple[np.ndarray, int]:
    """Job of each list position, and how many positions broke a job's round order.

    Sorted by H (ties: relaxed start, then job, round, task). The tasks of a
    job are identical but for their round, so the k-th position of job n is
    given to n's k-th task in round order; an H order that put a later round
    first would thus be repaired without moving any position. For a feasible
    relaxation this never happens (H_j - H_i = x_j - x_i >= p + s > 0 for a
    task j of a later round), and the count reported is expected to be 0.
    """
    t = relax.tasks
    h = priorities(inst, relax)
    order = np.lexsort((t.task, t.round, t.job, relax.x, h))
    inversions = 0
    seen: dict[int, int] = {}
    for i in order.tolist():
        n = int(t.job[i])
        if seen.get(n, -1) > t.round[i]:
            inversions += 1
        seen[n] = max(seen.get(n, -1), int(t.round[i]))
    return t.job[order], inversions


def list_schedule(inst: Instance, jobs: np.ndarray, gpu_available=None,
                  run: Run | None = None) -> ClusterState:
    """Step 3: each task to the eligible GPU free earliest (phi_m), as early as it can start.

    Ties between equally free GPUs go to the earlier start (setup included),
    then the earlier end, then the lower index; the paper does not say.
    GPU m is free from ``gpu_available[m]`` (rounded up: times are integers).
    ``run``: its limit and stop flag are watched (``OutOfTime``).
    """
    state = ClusterState(inst)
    if gpu_available is not None:
        state.free[:] = np.ceil(availability(inst, gpu_available)).astype(np.int64)
    for pos, n in enumerate(jobs.tolist()):
        if run is not None and not pos % 64:
            run.check(FINISH_GRACE_S)
        starts = state.starts(n)
        ok = inst.eligible[n]
        key = np.lexsort((np.arange(inst.num_gpus), starts + inst.proc[n], starts,
                          np.where(ok, state.free, np.iinfo(np.int64).max)))
        state.place(n, int(key[0]))
    return state


def lemma_ratios(inst: Instance, relax: Relaxation, state: ClusterState) -> tuple[float, float]:
    """Largest (load / 2H, idle / (alpha H)) over list positions: Lemmas 2 and 3 claim <= 1.

    For the j-th placed task on GPU m: load = processing of the tasks placed
    on m so far (it included), idle = its start minus the processing before it
    on m; H is the j-th smallest priority, alpha the instance's.
    """
    h = np.sort(priorities(inst, relax))
    alpha = float(inst.alpha.max())
    load = np.zeros(inst.num_gpus, dtype=np.int64)
    lemma2 = lemma3 = 0.0
    sch = state.schedule()  # rows in placement order
    rows = zip(sch.job_indices(inst).tolist(), sch.gpu_indices(inst).tolist(), sch.start.tolist())
    for pos, (j, g, start) in enumerate(rows):
        lemma3 = max(lemma3, (start - load[g]) / (alpha * h[pos]))
        load[g] += inst.proc[j, g]
        lemma2 = max(lemma2, load[g] / (2 * h[pos]))
    return lemma2, lemma3


@dataclass(frozen=True)
class HarePaperOptions(Options):
    """The relaxation's backend and limits (docs/theory.md (a))."""

    relaxation_solver: Literal["highs", "cpsat"] = option(
        "highs", doc="highs (continuous starts, as the paper) or cpsat (integer starts)")
    node_limit: int | None = option(None, lo=0, doc="relaxation work limit: HiGHS branch-and-"
                                                    "bound nodes over all its rounds (cpsat: "
                                                    "deterministic seconds), a limit the "
                                                    "machine cannot change")
    max_rounds: int | None = option(None, lo=1, doc="outer-approximation rounds (deterministic)")
    max_assignments: int = option(MAX_ASSIGNMENTS, lo=1,
                                  doc="refuse an instance with more (task, GPU) pairs")
    gpu_available: tuple[float, ...] | None = option(
        None, doc="per GPU, the time it becomes free (a running cluster)")
    hare_start: bool = option(False, doc="also start the relaxation from hare's assignment")

    owner = "solver 'hare-paper'"


def solve_hare_paper(instance: Instance, run: Run | None = None,
                     options: HarePaperOptions | None = None) -> Result:
    """Algorithm 1; a relaxation stopped by a limit is flagged ``relaxation_optimal: False``.

    ``lower_bound`` is the relaxation's proved bound (rounded up: objectives
    are integers), which bounds OPT from below with or without setups; with
    ``gpu_available`` it bounds the running cluster's problem, not the instance's,
    and is not reported.
    """
    run = run or Run()
    opts = options or HarePaperOptions()
    avail = opts.gpu_available
    if avail is not None and len(avail) != instance.num_gpus:
        raise OptionError(f"needs one time per GPU ({instance.num_gpus}), got {len(avail)}",
                          option="gpu_available", owner=opts.owner)
    try:  # the relaxation gets most of the time; ordering and list scheduling the rest
        relax = solve_relaxation(instance, backend=opts.relaxation_solver,
                                 time_limit=run.phase(RELAX_SHARE).time_limit,
                                 threads=run.threads, node_limit=opts.node_limit,
                                 max_rounds=opts.max_rounds, gpu_available=avail,
                                 max_assignments=opts.max_assignments, log=run.log,
                                 hare_start=opts.hare_start, stop=run.stop)
        jobs, inversions = task_order(instance, relax)
        state = list_schedule(instance, jobs, avail, run)
    except OutOfTime as why:  # a constructive method: no schedule before it is complete
        return Result("hare-paper", Status.UNKNOWN, Schedule.empty(), runtime_s=run.elapsed(),
                      instance_name=instance.name, stats={"stopped": str(why)})
    res = state.result(
        "hare-paper", run.elapsed(), relaxation_optimal=relax.optimal,
        relaxation_objective=relax.objective,
        relaxation_bound=relax.bound if np.isfinite(relax.bound) else None,
        relaxation_solver=relax.backend, relaxation_runtime_s=relax.runtime_s,
        round_inversions=inversions, wall_clock_limited=relax.stats["wall_clock_limited"],
        **{f"relaxation_{k}": v for k, v in relax.stats.items() if k != "wall_clock_limited"})
    if np.isfinite(relax.bound) and avail is None:
        res.lower_bound = max(0, ceil_bound(relax.bound))
    return res
