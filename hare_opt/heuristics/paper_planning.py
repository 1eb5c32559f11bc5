"""``HarePaperPlanner``: the paper's Algorithm 1 as the planner of an online policy.

It sees what our ``HarePlanner`` sees (``model.planning.Warm``: each GPU's free time
and last job, the running rounds): step 1 solves the relaxation with every GPU
available from its free time (the relaxation's ``gpu_available``), step 2 orders
the tasks by H_i, step 3 list-schedules them in that order on the eligible GPU
free first, from the running cluster (free times, and no setup on a GPU that ran
the job last). A partly started round is planned whole (the relaxation has no
notion of a part of a round); its surplus tasks go stale once the round completes.

The relaxation stops at deterministic limits (B&B nodes, outer-approximation rounds,
start-search evaluations), never at a wall-clock limit, so a simulation with this
planner is a pure function of its inputs.

**Blocks of rounds (our simplification, for the paper's scale).** The relaxation has
a column per (task, GPU) pair and costs seconds at a few thousand pairs, while a
residual of the paper's workloads has 10^5-10^6 tasks. With ``block_rounds="auto"``
a plan whose residual has more than ``pairs`` pairs is made on a coarser copy: b
consecutive rounds of a job become one round whose tasks last b task times and b
syncs (the same GPU time and the same span as b rounds run back to back on one GPU),
with b the smallest making the copy fit. Algorithm 1 runs unchanged on the copy;
each coarse task is then expanded into its b rounds on the same GPU, back to back,
which is what the plan queues. With b = 1 (a residual that fits) the plan is
Algorithm 1's own; ``block_rounds=1`` forces that (and the policy then cuts plans to
a horizon instead).
"""

from __future__ import annotations

import inspect
import math
import time
from dataclasses import replace
from typing import Any

import numpy as np

from hare_opt.heuristics.hare_paper import task_order
from hare_opt.heuristics.listsched import ClusterState
from hare_opt.heuristics.relaxation import Relaxation, solve_relaxation
from hare_opt.model import Instance, Schedule
from hare_opt.model.planning import Warm

#: Deterministic limits of one plan's relaxation: B&B nodes, OA rounds, start search.
NODE_LIMIT = 0
MAX_ROUNDS = 1
SEARCH_EVALS = 20
#: (task, GPU) pairs of one plan's relaxation: about a second of HiGHS at these limits.
PAIRS = 2000


def relax(residual: Instance, available: np.ndarray, limits: dict[str, int]) -> Relaxation:
    """Step 1 from a running cluster, with deterministic limits.

    The compact relaxation takes ``gpu_available``, ``node_limit``, ``max_rounds`` and
    ``search_evals``; a relaxation that takes none of them is solved without
    availability, under its own defaults, and is only practical for small plans: the
    check below passes only what the installed relaxation accepts.
    """
    accepted = inspect.signature(solve_relaxation).parameters
    options: dict[str, Any] = {k: v for k, v in limits.items() if k in accepted}
    if "gpu_available" in accepted:
        options["gpu_available"] = available
    return solve_relaxation(residual, **options)


def list_schedule_from(inst: Instance, jobs: np.ndarray, warm: Warm | None) -> ClusterState:
    """Step 3 (``hare_paper.list_schedule``'s rule: the eligible GPU free earliest; ties by
    earlier start, earlier end, lower index) from a running cluster."""
    state = ClusterState(inst)
    if warm is not None:
        state.free[:] = warm.free
        state.last[:] = warm.last
    big = np.iinfo(np.int64).max
    order = np.arange(inst.num_gpus)
    for n in jobs.tolist():
        starts = state.starts(n)
        key = np.lexsort((order, starts + inst.proc[n], starts,
                          np.where(inst.eligible[n], state.free, big)))
        state.place(n, int(key[0]))
    return state


def pairs(inst: Instance) -> int:
    """(task, GPU) pairs of the relaxation of ``inst``: its size."""
    return int((inst.rounds * inst.tasks_per_round * inst.eligible.sum(axis=1)).sum())


def coarsen(inst: Instance, b: int, origin: int = 0) -> Instance:
    """Blocks of ``b`` rounds as one round, in a time unit b times longer from ``origin``:
    a coarse task lasts b task times and b syncs, i.e. the task and sync times in
    coarse units; releases and setups are divided by b (rounded).

    The relaxation is unchanged by shifting all times and scaling them alike (its
    objective moves and scales, its constraints are homogeneous), and HiGHS is
    numerically safe only with moderate magnitudes: in milliseconds after hours of
    simulation the loads' squares reach 10^14.
    """
    jobs = [replace(job, rounds=math.ceil(job.rounds / b),
                    release=(job.release - origin) // b,
                    switch_overhead=round(job.switch_overhead / b)) for job in inst.jobs]
    return inst.with_jobs(jobs)


def expand(inst: Instance, coarse: Schedule, b: int, origin: int = 0) -> Schedule:
    """Each coarse task (times in units of b from ``origin``) as its b rounds on the same
    GPU; rounds past the job's last are dropped. Every fine task of a coarse round gets
    that round's earliest start (back in the instance's times): the
    policy queues tasks by (start, round), and these keys order every job's rounds the
    same way on every GPU type (a coarse round starts after the previous one's barrier),
    so no type's queue can wait on another's in a cycle."""
    j = _indices(coarse.job, inst.job_ids)
    g = _indices(coarse.gpu, inst.gpu_ids)
    key = j * (int(coarse.round.max(initial=0)) + 1) + coarse.round
    first = np.full(int(key.max(initial=0)) + 1, np.iinfo(np.int64).max)
    np.minimum.at(first, key, coarse.start)
    rnd = coarse.round[:, None] * b + np.arange(b)[None, :]
    ok = rnd < inst.rounds[j][:, None]
    rep = ok.sum(axis=1)
    return Schedule.from_indices(inst, np.repeat(j, rep), rnd[ok], np.repeat(coarse.task, rep),
                                 np.repeat(g, rep), origin + b * np.repeat(first[key], rep))


def _indices(ids: np.ndarray, universe: np.ndarray) -> np.ndarray:
    pos = {x: k for k, x in enumerate(universe.tolist())}
    return np.fromiter((pos[x] for x in ids.tolist()), np.int64, len(ids))


class HarePaperPlanner:
    """Algorithm 1 per plan; ``node_limit``/``max_rounds``/``search_evals`` bound step 1;
    ``block_rounds``: 1, or ``"auto"`` (blocks of rounds when the residual has more
    than ``pairs`` (task, GPU) pairs)."""

    name = "hare-paper"
    warm = True

    def __init__(self, *, evals: int | None = None, node_limit: int = NODE_LIMIT,
                 max_rounds: int = MAX_ROUNDS, search_evals: int = SEARCH_EVALS,
                 block_rounds: int | str = "auto", pairs: int = PAIRS):
        del evals  # one plan per re-plan: Algorithm 1 has no candidates to compare
        if block_rounds != "auto" and not (isinstance(block_rounds, int) and block_rounds >= 1):
            raise ValueError(f"block_rounds: must be 'auto' or a positive integer, got "
                             f"{block_rounds!r}")
        self.block_rounds, self.pairs = block_rounds, pairs
        self.blocks: list[int] = []
        self.limits = {"node_limit": node_limit, "max_rounds": max_rounds,
                       "search_evals": search_evals}
        self.plans = 0
        self.optimal = 0
        self.solver_errors = 0  # relaxations HiGHS failed on (their incumbent is used)
        self.gaps: list[float] = []
        self.relax_s = 0.0

    def plan(self, residual: Instance, warm: Warm | None, deadline: float) -> Schedule:
        del deadline  # deterministic limits only
        self.plans += 1
        t0 = time.perf_counter()
        b = (self.block_rounds if isinstance(self.block_rounds, int)
             else max(1, math.ceil(pairs(residual) / self.pairs)))
        self.blocks.append(b)
        # Plan from time origin 0 (the earliest the cluster or a job can start), in a unit
        # of b ms: the same relaxation, moderate numbers.
        free = np.zeros(residual.num_gpus, np.int64) if warm is None else np.asarray(warm.free)
        origin = int(min(free.min(), residual.release.min()))
        work = coarsen(residual, b, origin)
        shifted = None if warm is None else Warm(((free - origin) // b).tolist(), warm.last,
                                                 warm.left, warm.carry)
        rel = relax(work, (free - origin) / b, self.limits)
        self.relax_s += time.perf_counter() - t0
        self.optimal += bool(rel.optimal)
        self.solver_errors += rel.stats.get("stopped_by") == "solver_error"
        if np.isfinite(rel.bound):
            self.gaps.append((rel.objective - rel.bound) / max(1.0, abs(rel.objective)))
        jobs, _ = task_order(work, rel)
        plan = list_schedule_from(work, jobs, shifted).schedule()
        if b == 1:  # back to the residual's times; each task keeps its own start
            return Schedule(plan.job, plan.round, plan.task, plan.gpu, plan.start + origin,
                            plan.end + origin)
        return expand(residual, plan, b, origin)

    def stats(self) -> dict[str, Any]:
        return {"planner": self.name, "relaxations": self.plans,
                "relaxations_optimal": self.optimal,
                "relaxations_solver_error": self.solver_errors,
                "relaxation_gap_max": max(self.gaps) if self.gaps else None,
                "relaxation_s": round(self.relax_s, 3),
                "block_rounds_max": max(self.blocks, default=1), **self.limits}
