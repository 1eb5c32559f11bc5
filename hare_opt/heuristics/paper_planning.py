"""``HarePaperPlanner``: the paper's Algorithm 1 as the planner of an online policy.

It sees what our ``HarePlanner`` sees (``model.planning.Warm``: each GPU's free time
and last job, the running rounds): step 1 solves the relaxation with every GPU
available from its free time (the relaxation's ``gpu_available``), step 2 orders
the batches by H, step 3 list-schedules them in that order from the running cluster
(free times, no setup on a GPU that ran the job last, partly started rounds), on the
GPU step 3's reading picks (``step3``: ``phi`` as printed, or ``start``).

The relaxation stops at deterministic limits (B&B nodes, outer-approximation rounds,
start-search evaluations), never at a wall-clock limit, so a simulation with this
planner is a pure function of its inputs.

**Blocks of rounds (our simplification, for the paper's scale), relaxation only.** The
relaxation has a column per (task, machine) pair, while a residual of the paper's
workloads has 10^5-10^6 batches. With ``block_rounds="auto"`` a plan whose residual has
more than ``pairs`` pairs is relaxed on a coarser copy: b consecutive rounds of a job
become one round whose tasks last b task times and b syncs (the same GPU time and the
same span as b rounds run back to back on one GPU), with b the smallest making the copy
fit. Steps 2 and 3 then run on the batches themselves: each batch gets its own H,
interpolated inside its block (``hare_paper.batch_priorities``), and each is
list-scheduled on its own, so no batch inherits another's start or GPU. With b = 1 (a
residual that fits) the plan is Algorithm 1's own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from hare_opt.heuristics.hare_paper import OrderChunks, order_change
from hare_opt.heuristics.listsched import ClusterState
from hare_opt.heuristics.paper_step3 import check_step3, from_warm, list_schedule, past
from hare_opt.heuristics.relaxation import pair_count, solve_relaxation
from hare_opt.heuristics.relaxation_points import MODES, SEARCH_EVALS
from hare_opt.model import Instance, OptionError, Schedule
from hare_opt.model.planning import Warm

#: Deterministic limits of one plan's relaxation: B&B nodes, OA rounds (0: no MILP; its
#: root changed no plan's order and cost 10-20 s a plan, docs/simulator.md); the start
#: search runs to its local optimum (``SEARCH_EVALS`` caps it).
NODE_LIMIT = 0
MAX_ROUNDS = 0
#: (task, machine) pairs of one plan's relaxation by default, per model: about a CPU
#: second a plan at 160 GPUs for ``per-type`` (docs/simulator.md).
PAIRS = {"per-gpu": 2000, "per-type": 12000}
#: Step 2's first chunk of list positions when a plan stops at a horizon (it doubles each
#: chunk; a 160-GPU plan placed up to a few thousand), and the whole list otherwise.
CHUNK = 4096
MAX_CHUNK = 1 << 62
OWNER = "planner 'hare-paper'"


def block_size(inst: Instance, budget: int, relaxation: str) -> int:
    """The smallest b whose coarse copy has at most ``budget`` pairs; the largest useful
    b (every job one block) when none has."""
    elig = (inst.eligible_by_type if relaxation == "per-type" else inst.eligible).sum(axis=1)
    per_round = inst.tasks_per_round * elig

    def size(b: int) -> int:
        return int((-(-inst.rounds // b) * per_round).sum())

    lo, hi = 1, max(1, int(inst.rounds.max(initial=1)))
    if size(hi) > budget:
        return hi
    while lo < hi:
        mid = (lo + hi) // 2
        if size(mid) <= budget:
            hi = mid
        else:
            lo = mid + 1
    return lo


def coarsen(inst: Instance, b: int, origin: int = 0) -> Instance:
    """Each job's rounds in ceil(R / b) blocks of nearly equal size (``block_starts``),
    each block one round, in a time unit b times longer from ``origin``. A block of n
    rounds run back to back on one GPU holds it for n task times and n syncs; in coarse
    units that is the fine task and sync time times n / b, so the coarse times are the
    fine ones times R / (ceil(R / b) b) (the mean block length over b, rounded; at
    least 1 for a task), and a job's coarse rounds span what its rounds span. Releases
    and setups are divided by b (rounded).

    The relaxation is unchanged by shifting all times and scaling them alike (its
    objective moves and scales, its constraints are homogeneous), and HiGHS is
    numerically safe only with moderate magnitudes: in milliseconds after hours of
    simulation the loads' squares reach 10^14.
    """
    jobs = []
    for job in inst.jobs:
        n = math.ceil(job.rounds / b)
        scale = job.rounds / (n * b)
        sync = (
            {t: round(v * scale) for t, v in job.sync_time.items()}
            if isinstance(job.sync_time, Mapping)
            else round(job.sync_time * scale)
        )
        jobs.append(
            replace(
                job,
                rounds=n,
                release=(job.release - origin) // b,
                task_time={t: max(1, round(v * scale)) for t, v in job.task_time.items()},
                sync_time=sync,
                switch_overhead=round(job.switch_overhead / b),
            )
        )
    return inst.with_jobs(jobs)


class HarePaperPlanner:
    """Algorithm 1 per plan; ``node_limit``/``max_rounds``/``search_evals`` bound step 1;
    ``block_rounds``: 1, an integer b, or ``"auto"`` (blocks of rounds when the residual
    has more than ``pairs`` pairs); ``relaxation``: ``per-type`` (default here: GPUs of a
    type aggregated, so that blocks stay a few per job at 160 GPUs) or ``per-gpu`` (the
    paper's model); ``step3``: ``phi`` or ``start``. ``max_rounds=1`` adds the MILP's
    root to step 1 (off by default: it costs seconds a plan and, measured, changes no
    order)."""

    name = "hare-paper"
    warm = True
    #: ``plan_blocks`` takes ``until`` (the plan's tasks that start before it, exact).
    cuts_in_time = True

    def __init__(
        self,
        *,
        evals: int | None = None,
        node_limit: int = NODE_LIMIT,
        max_rounds: int = MAX_ROUNDS,
        search_evals: int = SEARCH_EVALS,
        block_rounds: int | str = "auto",
        pairs: int | None = None,
        step3: str = "phi",
        relaxation: str = "per-type",
    ):
        del evals  # one plan per re-plan: Algorithm 1 has no candidates to compare
        if block_rounds != "auto" and not (isinstance(block_rounds, int) and block_rounds >= 1):
            raise OptionError(
                f"must be 'auto' or a positive integer, got {block_rounds!r}",
                option="block_rounds",
                owner=OWNER,
            )
        if relaxation not in MODES:
            raise OptionError(
                f"must be one of {', '.join(MODES)}, got {relaxation!r}",
                option="relaxation",
                owner=OWNER,
            )
        if pairs is not None and not (isinstance(pairs, int) and pairs >= 1):
            raise OptionError(
                f"must be a positive integer, got {pairs!r}", option="pairs", owner=OWNER
            )
        self.step3 = check_step3(step3, OWNER)
        self.relaxation = relaxation
        self.block_rounds = block_rounds
        self.pairs = PAIRS[relaxation] if pairs is None else pairs
        self.limits = {
            "node_limit": node_limit,
            "max_rounds": max_rounds,
            "search_evals": search_evals,
        }
        self.blocks: list[int] = []
        self.plans = self.optimal = self.solver_errors = self.capped = 0
        self.evals = 0
        self.gaps: list[float] = []
        self.relax_cpu = self.plan_cpu = 0.0
        self.placed = self.to_place = 0  # step 3's positions placed / of the residuals
        self.pairs_max = self.over_budget = 0
        self.blocks_per_job: list[float] = []
        # per phase of step 1 (the start search from the EFT assignment's LP, the MILP from
        # the search's point): plans whose step-2 order it changed, and by how much at most
        self.changed = {"search": 0, "milp": 0}
        self.moved = {"search": 0.0, "milp": 0.0}
        self.kendall = {"search": 0.0, "milp": 0.0}

    def plan(self, residual: Instance, warm: Warm | None, deadline: float) -> Schedule:
        return self._place(residual, warm).schedule()

    def plan_blocks(
        self, residual: Instance, warm: Warm | None, deadline: float, until: int | None = None
    ) -> np.ndarray:
        """``plan`` as runs of one task each (``rounds.expand_blocks``'s rows, in the
        schedule's row order), without a schedule of every task in between: the simulator
        re-plans 10^6 tasks at every arrival. ``until``: only the tasks planned to start
        before it, which are exactly the full plan's (``paper_step3.list_schedule``)."""
        rows = self._place(residual, warm, until).rows()  # job, round, task, gpu, start
        if until is not None:
            rows = rows[rows[:, 4] < until]
        runs = np.zeros((len(rows), 8), dtype=np.int64)
        runs[:, [0, 1, 2, 3, 5]] = rows
        runs[:, 4] = runs[:, 7] = 1
        return runs

    def _place(
        self, residual: Instance, warm: Warm | None, until: int | None = None
    ) -> ClusterState:
        """Steps 1-3 on ``residual`` from the running cluster ``warm`` (step 3 stopped
        at ``until``)."""
        self.plans += 1
        c0 = time.process_time()
        b = (
            self.block_rounds
            if isinstance(self.block_rounds, int)
            else block_size(residual, self.pairs, self.relaxation)
        )
        self.blocks.append(b)
        # Relax from time origin 0 (the earliest the cluster or a job can start), in a unit
        # of b ms: the same relaxation, moderate numbers.
        free = np.zeros(residual.num_gpus, np.int64) if warm is None else np.asarray(warm.free)
        origin = int(min(free.min(), residual.release.min()))
        work = coarsen(residual, b, origin)
        size = pair_count(work, self.relaxation)
        self.pairs_max = max(self.pairs_max, size)
        self.over_budget += size > self.pairs
        self.blocks_per_job.append(float(np.median(-(-residual.rounds // b))))
        lim = self.limits
        rel = solve_relaxation(
            work,
            gpu_available=(free - origin) / b,
            relaxation=self.relaxation,
            node_limit=lim["node_limit"],
            max_rounds=lim["max_rounds"],
            search_evals=lim["search_evals"],
        )
        self.relax_cpu += time.process_time() - c0
        self.optimal += bool(rel.optimal)
        self.solver_errors += rel.stats.get("stopped_by") == "solver_error"
        self.capped += not rel.stats.get("search_done", True)
        self.evals = max(self.evals, int(rel.stats.get("search_evals", 0)))
        if np.isfinite(rel.bound):
            self.gaps.append((rel.objective - rel.bound) / max(1.0, abs(rel.objective)))
        for phase, (a, z) in (("search", (rel.first, rel.start)), ("milp", (rel.start, None))):
            moved, kendall = order_change(work, rel.at(a), rel.at(z))
            self.changed[phase] += moved > 0
            self.moved[phase] = max(self.moved[phase], moved)
            self.kendall[phase] = max(self.kendall[phase], kendall)
        started = None
        if warm is not None:
            started = residual.tasks_per_round - np.asarray(warm.left, dtype=np.int64)
        # Step 2's list in chunks, step 3 on each until the plan's horizon (``until``):
        # the same schedule as the whole list's, without sorting batches never reached.
        chunks = OrderChunks(
            residual, rel, b, origin, started, size=CHUNK if until is not None else MAX_CHUNK
        )
        state = from_warm(residual, warm)
        for jobs in chunks:  # positions left: this chunk's and every later chunk's
            left = np.bincount(jobs, minlength=residual.num_jobs) + chunks.left_by_job()
            list_schedule(state, jobs, self.step3, until=until, left=left)
            if until is not None and past(state, left, until):
                break
        self.placed += len(state.rows())
        self.to_place += chunks.total
        self.plan_cpu += time.process_time() - c0
        return state

    def stats(self) -> dict[str, Any]:
        n = max(1, self.plans)
        return {
            "planner": self.name,
            "step3": self.step3,
            "relaxation": self.relaxation,
            "relaxations": self.plans,
            "relaxations_optimal": self.optimal,
            "relaxations_solver_error": self.solver_errors,
            "search_capped": self.capped,
            "search_evals_max": self.evals,
            "relaxation_gap_max": max(self.gaps) if self.gaps else None,
            "relaxation_cpu_s": round(self.relax_cpu, 3),
            "plan_cpu_s": round(self.plan_cpu, 3),
            "plan_cpu_s_mean": round(self.plan_cpu / n, 4),
            "step3_share_placed": round(self.placed / max(1, self.to_place), 4),
            "block_rounds_max": max(self.blocks, default=1),
            "blocks_per_job_median_min": min(self.blocks_per_job, default=None),
            "pairs_budget": self.pairs,
            "pairs_max": self.pairs_max,
            "pairs_over_budget": self.over_budget,
            **{f"order_changed_by_{k}": v for k, v in self.changed.items()},
            **{f"order_moved_by_{k}_max": round(v, 4) for k, v in self.moved.items()},
            **{f"order_kendall_by_{k}_max": round(v, 4) for k, v in self.kendall.items()},
            **self.limits,
        }
