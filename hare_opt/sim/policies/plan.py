"""Plan-following policies: re-plan the remaining work offline, execute the plan per type.

Source: the Hare paper's online use of Algorithm 1 (HPDC '22, section 5): at each
arrival the scheduler re-plans everything not yet started. We keep that shape and
make it cheap (docs/simulator.md has the full story):

* A plan is the offline solver's schedule of a *residual instance*: the arrived
  jobs' remaining rounds, released at max(now, their barrier). Our heuristic
  (``planner="hare"``) plans it from the running cluster (``model.planning.Warm``: each
  GPU's free time and last job, each partly started round's missing tasks and
  its end so far), so nothing running is counted twice. Other solvers see an
  instance only: a partly started round is planned whole and its surplus
  entries are dropped once the round is complete, and busy GPUs appear as
  stand-in jobs pinned to their type. Tasks already started (or reserved) are kept.
* Our heuristic tries its portfolio (``plan_evals`` schedules: 5 orders x 4
  dispatchers) and the plan with the lowest planned weighted completion time of
  the residual wins: a clairvoyant planner may compare its own plans.
* ``follow="strict"`` (``hare``'s and ``hare-paper``'s default): each GPU executes
  the plan's tasks on it, in planned order (one FIFO queue of (job, round) per GPU).
  Its head starts when the GPU is idle, not before its planned time less the setup
  the GPU needs for it, and once the job's previous round is fully started, even if
  that round's barrier is still ahead: the GPU is then held idle for it (reserved
  idle). A setup the plan starts earlier, while the previous round still has tasks
  to start elsewhere, is run then (``Simulator.setup``). With all jobs at time 0 this
  reproduces the offline schedule's objective exactly, setups included (tested). Per
  GPU, not per type: a type's queue served by whichever GPU of it is idle paid setups
  the plan never priced (Table 3's ``default`` switching: 69,395 switches where the
  plan had 136, docs/simulator.md). A planner that sees busy GPUs as stand-in jobs
  (no warm start) plans on GPUs of the right type but not the right GPU; its plan is
  mapped onto the real GPUs (``_onto_cluster``). ``follow="work-conserving"``
  (``sched-homo``'s default): an idle GPU takes the first entry of its type's queue
  that can start now (its job's previous round has synced; planned times are
  ignored), so no GPU is held for a future barrier or a planned time; the plan gives
  the order only.
  A plan is kept as runs of tasks, not task by task (``engine.plans.PlanRuns``);
  ``make_plan`` is the re-plan both engines share, and the compiled engine
  (``sim/engine/relaxed_kernel.py``, handed ``kernel_state()``) transcribes
  ``decide``, ``_dispatch``, ``_dispatch_ready`` and ``_should_replan``.
* ``replan="arrival"`` re-plans at every arrival time (the paper's rule; the
  ``auto`` default up to 500 jobs). ``replan="lazy"`` re-plans only when fewer
  than ``low_water`` tasks are queued, or new jobs arrived while a GPU type idles
  with an empty queue, at most once per ``min_gap``; its plans hold at most
  ``plan_tasks`` tasks (``auto``: 4 x GPUs), jobs chosen by Smith ratio, each cut
  to the budget (or ``horizon_rounds``) with its weight scaled by the kept
  fraction so that Smith ratios are unchanged.
* A plan horizon in ``arrival`` mode too: a plan holds at most ``plan_tasks``
  tasks (default: the planner's ``horizon(instance)``, what one plan of it can
  handle: no cut for ``hare``, and none for ``hare-paper``, which plans large
  residuals in blocks of rounds); a job whose planned rounds ran out, or a queue
  below ``low_water`` while work is unplanned, makes the next decision re-plan.
  ``hare`` and ``hare-paper`` thus re-plan at the same events with the same
  information (arrivals, the running cluster) and differ in their planner only.
"""

from __future__ import annotations

import math
import time
import warnings
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from hare_opt.model import Instance, Job, OptionError
from hare_opt.model.instance import MAX_COUNT
from hare_opt.model.options import UnknownOptionError, option
from hare_opt.model.planning import Planner, Warm
from hare_opt.sim.engine.plans import PlanRuns
from hare_opt.sim.engine.state import RelaxedKernel, keeps_rules
from hare_opt.sim.events import Events, SimulationError
from hare_opt.sim.policy import PolicyOptions
from hare_opt.sim.semantics import Mode
from hare_opt.solvers.planners import get_planner

if TYPE_CHECKING:
    from hare_opt.sim.engine.reference import Simulator

AUTO_JOBS = 500  # "auto" re-plans at every arrival up to this many jobs
BUSY = "~busy-gpu-"
WEIGHT_SCALE = 1000
#: Wall-clock cap of one plan when the policy has no ``time_limit``.
PLAN_TIME_S = 60.0


@dataclass(frozen=True)
class PlanOptions(PolicyOptions):
    """A plan follower's options; any other name is its planner's (checked by it)."""

    planner: str | None = option(None, doc="planner: hare, hare-paper or any solver")
    replan: Literal["auto", "arrival", "lazy"] = option("auto", doc="when to re-plan")
    plan_tasks: int | None = option(None, lo=1, doc="most tasks one plan holds")
    horizon_rounds: int | None = option(None, lo=1, doc="most rounds of a job per plan")
    low_water: int | None = option(None, lo=0, doc="lazy: re-plan below this many queued")
    min_gap: int | None = option(None, lo=0, doc="lazy: least time between re-plans")
    time_limit: float | None = option(None, lo=1e-3, doc="wall-clock cap of one plan (s)")
    plan_evals: int | None = option(None, lo=1, doc="candidate plans per re-plan")
    planner_options: dict = option(factory=dict, doc="the planner's own options")
    follow: Literal["strict", "work-conserving"] = option(
        "strict",
        doc="strict: queue heads in planned order and time, a GPU held for a "
        "future barrier; work-conserving: the first entry ready now",
    )

    @classmethod
    def parse(
        cls, raw: Mapping[str, Any] | None = None, *, owner: str | None = None
    ) -> PlanOptions:
        """``solver``, the planner option's old name, is read as ``planner``
        (``PlanPolicy`` warns that it is deprecated)."""
        raw = dict(raw or {})
        if "solver" in raw:
            if "planner" in raw:
                raise OptionError(
                    "is the old name of 'planner'; give planner only",
                    option="solver",
                    owner=owner or cls.owner,
                )
            raw["planner"] = raw.pop("solver")
        return super().parse(raw, owner=owner)

    @classmethod
    def take_extra(cls, extra: Mapping[str, Any], owner: str) -> dict[str, Any]:
        return {"planner_options": dict(extra)}


class PlanPolicy:
    """Re-plan with a planner (``planner``: ``hare_opt.solvers.planners.get_planner``) and
    follow the plan type by type. ``plan_evals``: candidate plans per re-plan for planners
    that compare candidates (default 20 in ``arrival`` mode, 1 in ``lazy`` mode); other
    keyword arguments are the planner's options (a solver's options for a solver)."""

    name = "plan"
    mode: Mode = "relaxed"
    planner_name = "hare"
    Options: ClassVar[type[PlanOptions]] = PlanOptions

    def __init__(self, **options: Any):
        if "solver" in options:
            warnings.warn(
                f"policy {self.name!r}: option 'solver' is deprecated, use 'planner'",
                DeprecationWarning,
                stacklevel=2,
            )
        o = self.Options.parse(options, owner=f"policy {self.name!r}")
        self.planner_name = o.planner or self.planner_name
        self.replan = o.replan
        self.plan_tasks = o.plan_tasks
        self.horizon_rounds = o.horizon_rounds
        self.low_water = o.low_water
        self.min_gap = o.min_gap
        self.time_limit = o.time_limit
        self.plan_evals = o.plan_evals
        self.planner_options = o.planner_options
        self.conserving = o.follow == "work-conserving"
        # The planner's own options fail here, by name, not mid-run; the planner built to
        # check them is the first run's (``reset``) when that run asks for the same evals.
        evals = self.plan_evals or (1 if self.replan == "lazy" else None)
        try:
            self._spare: tuple[int | None, Planner] | None = (
                evals,
                get_planner(self.planner_name, evals=evals, **self.planner_options),
            )
        except TypeError as exc:  # "... got an unexpected keyword argument 'x'"
            name = str(exc).rsplit(" ", 1)[-1]
            raise UnknownOptionError(
                f"has no option {name} (neither has its planner {self.planner_name!r})",
                owner=f"policy {self.name!r}",
            ) from None
        except ValueError as exc:  # a planner's own check of a value
            if isinstance(exc, OptionError):
                raise
            raise OptionError(str(exc), owner=f"policy {self.name!r}") from None
        self.num_plans = 0

    # --- set-up -------------------------------------------------------------------
    def reset(self, sim: Simulator) -> None:
        inst = sim.inst
        self.mode_ = self.replan
        if self.replan == "auto":
            self.mode_ = "arrival" if inst.num_jobs <= AUTO_JOBS else "lazy"
        lazy = self.mode_ == "lazy"
        self.budget = self.plan_tasks
        if lazy and self.budget is None and self.replan == "auto":
            self.budget = 4 * inst.num_gpus
        if self.budget is None:
            self.budget = self.horizon(inst)
        self.water = inst.num_gpus if self.low_water is None else self.low_water
        typical = int(np.median(inst.min_task_time))
        self.gap = (typical if lazy else 0) if self.min_gap is None else self.min_gap
        # None: the planner's own default (each planner knows how many candidates it has)
        self.evals = self.plan_evals or (1 if lazy else None)
        spare, self._spare = self._spare, None
        self.planner: Planner = (
            spare[1]
            if spare is not None and spare[0] == self.evals
            else get_planner(self.planner_name, evals=self.evals, **self.planner_options)
        )
        self.last_plan = -self.gap - 1
        self.types = inst.gpu_type_index
        self.of_type = [np.flatnonzero(self.types == k) for k in range(len(inst.gpu_types))]
        self.queues: list[deque[tuple[int, int, int]]] = [deque() for _ in inst.gpus]
        self.ready: list[dict[int, deque[tuple[int, int]]]] = [{} for _ in inst.gpu_types]
        self.blocked: dict[int, set[int]] = {}
        self.planned_until = np.zeros(inst.num_jobs, dtype=np.int64)
        self.queued = 0
        self.new_jobs = False
        self.starved: set[int] = set()
        self.waiting: set[int] = set()  # types whose head waits for its planned time
        self.num_plans = 0

    def horizon(self, inst: Instance) -> int | None:
        """Most tasks one plan holds (None: no cut): what the planner handles. Our
        heuristic plans whole residuals of 10^6 tasks in well under a second (compiled
        rounds, its search budget counted in placements), and a cut hurt it: on the
        paper-regime testbed (seed 1) cuts at 8,192 / 2,048 tasks raised its weighted
        JCT by 73% / 178% (jobs left out of a plan wait for the next one)."""
        return None

    def stats(self) -> dict[str, Any]:
        return {
            "plans": self.num_plans,
            "replan": self.mode_,
            "plan_tasks": self.budget,
            **self.planner.stats(),
        }

    #: What ``engine/relaxed_kernel.py`` transcribes: a subclass overriding one of these
    #: runs in the reference engine (one changing ``make_plan`` or
    #: ``planning_instance`` is called back from the compiled loop).
    TRANSCRIBED = (
        "decide",
        "_dispatch",
        "_dispatch_ready",
        "_served",
        "_start_task",
        "_should_replan",
        "_unplanned",
        "_replan",
        "reset",
    )

    def kernel_state(self, sim: Simulator) -> RelaxedKernel | None:
        """The compiled core's state (after ``reset``); None if a transcribed rule changed."""
        if not keeps_rules(self, PlanPolicy, PlanPolicy.TRANSCRIBED):
            return None
        return RelaxedKernel(
            "plan",
            arrival=self.mode_ == "arrival",
            conserving=self.conserving,
            gap=self.gap,
            water=self.water,
            last_plan=self.last_plan,
            planned_until=self.planned_until,
            replan=self._kernel_replan,
        )

    def _kernel_replan(self, view: Any) -> tuple[PlanRuns, int]:
        """The compiled loop's re-plan: the plan, and when it was made."""
        plan = self.make_plan(view)
        return plan, self.last_plan

    # --- events -------------------------------------------------------------------
    def decide(self, sim: Simulator, events: Events) -> None:
        if events.arrived:
            self.new_jobs = True
        every = range(len(self.of_type))
        if self.mode_ == "arrival" and (events.arrived or self.new_jobs):
            self._replan(sim)  # the paper's rule: re-plan before anything starts
            self._dispatch(sim, set(every))
            return
        work = {int(self.types[g]) for g in events.freed}
        if events.woken:
            work |= self.waiting
            self.waiting = set()
        if self.conserving and events.opened:  # a job's next round may start now
            work |= set(every)
        self._dispatch(sim, work)
        if self._should_replan(sim):
            self._replan(sim)
            self._dispatch(sim, set(every))

    def _unplanned(self, sim: Simulator) -> bool:
        return any(self.planned_until[j] < sim.inst.rounds[j] for j in sim.active)

    def _should_replan(self, sim: Simulator) -> bool:
        if self.queued >= self.water and not (self.new_jobs and self.starved):
            return False
        if sim.now < self.last_plan + self.gap:
            sim.wake_at(self.last_plan + self.gap)
            return False
        return self._unplanned(sim)

    def _dispatch(self, sim: Simulator, work: set[int]) -> None:
        """Each idle GPU of the types in ``work`` runs its queue's head, strictly in
        planned order.

        A GPU's queue is FIFO: starting a later entry early could delay an earlier one
        planned on it, and the plan would no longer be reproduced. Types are served
        lowest first, each type's GPUs ascending (a type blocked on another's round is
        served again once that round is complete), so a run is a pure function of its
        input. A type whose GPUs wait for planned times asks for one wake-up, at the
        earliest of them.
        """
        if self.conserving:
            self._dispatch_ready(sim, work)
            return
        state, now, overhead = sim.state, sim.now, sim.inst.overhead
        for k, idle in self._served(sim, work):
            wake = math.inf  # the earliest time one of the type's GPUs waits for
            for g in idle.tolist():
                q = self.queues[g]
                while q:
                    start, job, rnd = q[0]
                    cur = int(state.round[job])
                    if cur > rnd:  # stale: that round was completed elsewhere
                        q.popleft()
                        self.queued -= 1
                        continue
                    setup = int(overhead[job]) if state.last[g] != job else 0
                    due = start - setup  # when the plan has its setup (or task) begin
                    if cur < rnd:  # wait until the previous round is fully started
                        self.blocked.setdefault(job, set()).add(k)
                        if setup and now >= due:  # its setup, as planned
                            sim.setup(job, g)
                        elif setup:
                            wake = min(wake, due)
                        break
                    if now < due:  # not before the plan says
                        wake = min(wake, due)
                        break
                    q.popleft()
                    self.queued -= 1
                    _, completed = self._start_task(sim, job, idle[idle == g])
                    if completed:
                        work.update(self.blocked.pop(job, ()))
                    break
                else:
                    self.starved.add(k)  # idle until the next plan
            if wake < math.inf:
                sim.wake_at(int(wake))
                self.waiting.add(k)

    def _served(self, sim: Simulator, work: set[int]) -> Iterator[tuple[int, np.ndarray]]:
        """The types of ``work``, lowest first (``work`` may grow meanwhile), each with its
        idle GPUs, ascending."""
        while work:
            k = min(work)
            work.discard(k)
            gpus = self.of_type[k]
            yield k, gpus[sim.state.free[gpus] <= sim.now]

    def _start_task(self, sim: Simulator, job: int, idle: np.ndarray) -> tuple[np.ndarray, bool]:
        """Start ``job``'s next task on one of the ``idle`` GPUs: one that ran the job last
        (no setup), else the first. Returns the GPUs left idle and whether the task
        completed its round (a job whose planned rounds ran out then makes the next
        decision re-plan)."""
        state = sim.state
        cur = int(state.round[job])
        same = idle[state.last[idle] == job]
        g = int(same[0]) if len(same) else int(idle[0])
        sim.start(job, g)
        completed = int(state.round[job]) != cur
        if completed and state.round[job] == self.planned_until[job] and not state.done(job):
            self.new_jobs = True  # its planned horizon ran out
        return idle[idle != g], completed

    def _dispatch_ready(self, sim: Simulator, work: set[int]) -> None:
        """Work-conserving: while type k has an idle GPU, it takes the first entry of k's
        queue (least position) whose job's current round it is and whose barrier has
        passed; a type is served lowest first. Entries of rounds already complete are
        dropped as they are met (every job of the type is looked at on each pick), an
        idle GPU with nothing ready stays idle until a GPU frees up, a round opens or a
        re-plan. The GPU is one that ran the job last, else the type's first idle one."""
        state, now = sim.state, sim.now
        for k, idle in self._served(sim, work):
            jobs = self.ready[k]
            while len(idle):
                best, pick = -1, -1
                for j in list(jobs):
                    q, cur = jobs[j], int(state.round[j])
                    while q and q[0][1] < cur:  # stale: that round was completed elsewhere
                        q.popleft()
                        self.queued -= 1
                    if not q:
                        del jobs[j]
                    elif (
                        q[0][1] == cur and state.barrier[j] <= now and (pick < 0 or q[0][0] < best)
                    ):
                        best, pick = q[0][0], j
                if pick < 0:
                    break
                jobs[pick].popleft()
                self.queued -= 1
                if not jobs[pick]:
                    del jobs[pick]
                idle, _ = self._start_task(sim, pick, idle)
            if not jobs and len(idle):
                self.starved.add(k)  # idle until the next plan

    # --- planning -----------------------------------------------------------------
    def planning_instance(self, residual: Instance) -> Instance:
        """The instance handed to the offline solver (hook for heterogeneity-blind planners)."""
        return residual

    def _replan(self, sim: Simulator) -> None:
        plan = self.make_plan(sim)
        if self.conserving:
            self.ready = plan.job_queues(len(self.of_type))
        else:
            self.queues = plan.queues(len(self.queues))
        self.queued = plan.tasks

    def make_plan(self, sim: Simulator) -> PlanRuns:
        """Plan the work left (the decision's re-plan: both engines queue what it returns);
        resets the re-plan triggers."""
        inst, state, now = sim.inst, sim.state, sim.now
        self.last_plan = now
        self.new_jobs = False
        self.starved.clear()
        self.blocked.clear()
        # Without a warm start a partly started round is planned whole: its surplus
        # entries go stale at once.
        cand = [(j, int(state.round[j])) for j in sorted(sim.active) if not state.done(j)]
        self.planned_until[[j for j, _ in cand]] = [f for _, f in cand]
        if not cand:
            return PlanRuns.empty()
        # Smith ratio at full speed: best first (only matters when the budget cuts).
        ratio = {
            j: inst.weight[j] / ((inst.rounds[j] - f) * inst.round_time_next[j] + 1)
            for j, f in cand
        }
        cand.sort(key=lambda c: (-ratio[c[0]], c[0]))
        budget = self.budget
        chosen: list[tuple[int, int, int, int]] = []  # job, first round, kept, remaining
        for j, first in cand:
            rem = int(inst.rounds[j]) - first
            k = int(inst.tasks_per_round[j])
            keep = rem if self.horizon_rounds is None else min(rem, self.horizon_rounds)
            if budget is not None:
                if budget < k and chosen:
                    break
                keep = max(1, min(keep, budget // k))
                budget -= keep * k
            chosen.append((j, first, keep, rem))
        chosen.sort()  # instance order: planners break ties by it
        cut = any(keep < rem for _, _, keep, rem in chosen)
        rows = np.array([j for j, *_ in chosen], dtype=np.int64)
        weights = [
            max(1, round(WEIGHT_SCALE * inst.weight[j] * keep / rem))
            if cut
            else int(inst.weight[j])
            for j, _, keep, rem in chosen
        ]
        firsts = np.array([f for _, f, *_ in chosen], dtype=np.int64)
        for j, f, keep, _ in chosen:
            self.planned_until[j] = f + keep
        warm = self._warm(sim, rows.tolist()) if self.planner.warm else None
        # without a warm start busy GPUs are stand-in jobs, by (type, time left)
        busy = None if warm is not None else self._busy_groups(sim, self.gap)
        extra = [] if busy is None else self._busy_jobs(sim, busy)
        residual = inst.residual(
            rows.tolist(),
            [keep for _, _, keep, _ in chosen],
            weights,
            [max(now, int(state.barrier[j])) for j in rows],
            extra,
            name=f"{inst.name}@{now}",
        )
        planning = self.planning_instance(residual)
        runs = self._plan(residual, planning, warm, None if cut else self._until(sim))
        self.num_plans += 1
        gpu = runs[:, 3] if busy is None else self._onto_cluster(runs, len(rows), busy)
        row = runs[:, 0]  # residual row; stand-ins: >= len(rows)
        gpu, runs = gpu[row < len(rows)], runs[row < len(rows)]
        row, gtype = runs[:, 0], self.types[gpu]
        return PlanRuns(
            rows[row],
            firsts[row] + runs[:, 1],
            runs[:, 1].copy(),
            gtype,
            runs[:, 5].copy(),
            planning.proc_by_type[row, gtype].astype(np.int64),
            runs[:, 4].copy(),
            runs[:, 6].copy(),
            runs[:, 7].copy(),
            gpu.astype(np.int64),
        )

    def _onto_cluster(
        self, runs: np.ndarray, real: int, busy: dict[tuple[int, int], list[int]]
    ) -> np.ndarray:
        """The real GPU of each run of a plan made with stand-ins for the ``busy`` GPUs
        (``_busy_jobs``; the residual's rows from ``real`` on): a GPU the plan gave a
        stand-in of (type, time left) is one of the GPUs busy for that time; the other
        GPUs of each type map onto the type's other GPUs in ascending order (the plan
        cannot tell them apart)."""
        m = len(self.types)
        pool = {real + i: list(gpus) for i, gpus in enumerate(busy.values())}  # row -> GPUs
        onto = np.full(m, -1, dtype=np.int64)
        taken = np.zeros(m, dtype=bool)
        for row, g in zip(runs[:, 0].tolist(), runs[:, 3].tolist()):
            if row >= real and onto[g] < 0 and pool.get(row):
                onto[g] = pool[row].pop(0)
                taken[onto[g]] = True
        for gpus in self.of_type:
            left = gpus[~taken[gpus]]
            free_plan = gpus[onto[gpus] < 0]
            onto[free_plan] = left[: len(free_plan)]
        return onto[runs[:, 3]]

    def _until(self, sim: Simulator) -> int | None:
        """In ``arrival`` mode, a time from which nothing the plan holds can start before
        the next re-plan: the next arrival plus the largest setup, plus one (an entry
        waits for its planned start less its setup). None after the last arrival, and in
        ``lazy`` mode (there the queue's length decides when to re-plan)."""
        if self.mode_ != "arrival" or not getattr(self.planner, "cuts_in_time", False):
            return None
        release = sim.inst.release
        later = release[release > sim.now]
        if not len(later):
            return None
        return int(later.min()) + int(sim.inst.overhead.max(initial=0)) + 1

    def _plan(
        self, residual: Instance, planning: Instance, warm: Warm | None, until: int | None = None
    ) -> np.ndarray:
        """The planner's plan of the residual (from ``warm``: only the tasks left) as runs
        (job, round, first task, gpu, count, start) in residual indices
        (``rounds.expand_blocks``); ``planning``: the instance the planner sees.

        ``until`` (``_until``; planners with ``cuts_in_time``): the plan's tasks that start
        before it only. They are exactly the full plan's, and they come first in every
        type's queue (queues are in planned-start order), so the follower executes what
        it would with the full plan until the next arrival re-plans; planning 10^6 tasks
        at each of 300 arrivals to execute a few thousand cost most of a run
        (tests/test_paper_planning.py checks the runs are the same).
        """
        limit = PLAN_TIME_S if self.time_limit is None else self.time_limit
        deadline = time.perf_counter() + limit
        blocks = getattr(self.planner, "plan_blocks", None)
        if until is not None and blocks is not None:
            runs = blocks(planning, warm, deadline, until=until)
        elif blocks is not None:  # the round engine's runs as they are
            runs = blocks(planning, warm, deadline)
        else:
            from hare_opt.heuristics.rounds import schedule_runs  # planners without blocks

            runs = schedule_runs(residual, self.planner.plan(planning, warm, deadline))
        tasks = int(runs[:, 4] @ runs[:, 7])
        if warm is None and until is None and tasks != residual.num_tasks:
            raise SimulationError(
                f"policy {self.name!r}: planner {self.planner_name!r} planned "
                f"{tasks} of {residual.num_tasks} tasks for {residual.name!r}"
            )
        return runs

    def _warm(self, sim: Simulator, rows: list[int]) -> Warm | None:
        """The running cluster as seen by the residual's jobs ``rows``, for our heuristic;
        None when nothing running matters (then the residual alone is exact)."""
        state, now = sim.state, sim.now
        pos = np.full(sim.inst.num_jobs + 1, -1, dtype=np.int64)  # [-1] for "no job"
        pos[rows] = np.arange(len(rows))
        last = pos[state.last]
        placed = state.placed[rows]
        if not (state.free > now).any() and (last < 0).all() and not placed.any():
            return None
        k = sim.inst.tasks_per_round[rows]
        return Warm(
            free=np.maximum(state.free, now).tolist(),
            last=last.tolist(),
            left=(k - placed).tolist(),
            carry=state.round_end[rows].tolist(),
        )

    def _busy_jobs(self, sim: Simulator, busy: dict[tuple[int, int], list[int]]) -> list[Job]:
        """Stand-ins for the GPUs still busy (``_busy_groups``): one task per busy GPU
        lasting its remaining busy time on that GPU type, released now, of overwhelming
        weight so the planner puts them first.

        An instance cannot say "GPU g is busy until t", but each stand-in task occupies
        one GPU of the type from now on, so the plan sees each type's real availability;
        which GPU of the type the plan puts a stand-in on is mapped back onto the busy
        GPU (``_onto_cluster``). GPUs of a type busy for the same time share one stand-in
        (K = their number).
        """
        inst, now = sim.inst, sim.now
        return [
            Job(
                f"{BUSY}{k}-{d}",
                {inst.gpu_types[k]: d},
                tasks_per_round=len(gpus),
                weight=MAX_COUNT,
                release=now,
            )
            for (k, d), gpus in busy.items()
        ]

    def _busy_groups(self, sim: Simulator, grid: int) -> dict[tuple[int, int], list[int]]:
        """The GPUs busy now by (type, busy time left), in the order of their first GPU:
        one stand-in job each. With ``grid`` > 1 busy times are first rounded up to a
        multiple of it (fewer, slightly pessimistic stand-ins)."""
        busy = np.flatnonzero(sim.state.free > sim.now)
        left = sim.state.free[busy] - sim.now
        if grid > 1:
            left = -(-left // grid) * grid
        groups: dict[tuple[int, int], list[int]] = {}
        for g, k, d in zip(busy.tolist(), self.types[busy].tolist(), left.tolist()):
            groups.setdefault((k, d), []).append(g)
        return groups


class HarePolicy(PlanPolicy):
    """``hare``: clairvoyant; re-plans with our offline heuristic (hare_opt.heuristics.hare)."""

    name = "hare"
    planner_name = "hare"


class HarePaperPolicy(PlanPolicy):
    """``hare-paper``: re-plans with the paper's Algorithm 1 (relaxation + list scheduling),
    at the same events and from the same running cluster as ``hare``
    (hare_opt.heuristics.paper_planning), its relaxation stopped at deterministic
    limits (``node_limit``, ``max_rounds``, ``search_evals``). Its plan is a schedule of
    batches, each with its own planned start, queued as ``hare``'s plans are. The
    relaxation grows with tasks x machines: a residual too large for one relaxation is
    relaxed in blocks of rounds (``block_rounds="auto"``), never cut; ``step3`` picks step
    3's reading (``phi``, ``start``), ``relaxation`` its model (``per-type``, ``per-gpu``).
    """

    name = "hare-paper"
    planner_name = "hare-paper"


@dataclass(frozen=True)
class SchedHomoOptions(PlanOptions):
    plan_evals: int | None = option(1, lo=1, doc="candidate plans per re-plan")
    follow: Literal["strict", "work-conserving"] = option(
        "work-conserving",
        doc="work-conserving: the first entry ready now; strict: queue "
        "heads in planned order and time, a GPU held for a barrier",
    )


class SchedHomoPolicy(PlanPolicy):
    """``sched-homo``: the paper's Sched_Homo baseline, heterogeneity-blind.

    A scheduler for homogeneous clusters that still exploits inter- and intra-job
    parallelism and minimises weighted JCT (Hare paper, section 7). Simplified: it
    is our own planner run on a copy of the residual where every GPU a job can use
    runs it at the job's GPU-count-weighted mean task (and sync) time; the plan's
    per-GPU queues are then executed on the real, heterogeneous GPUs. One schedule
    per re-plan (``plan_evals=1``): candidates would be compared by their objective on
    the homogenised copy, not the real cluster, and each costs a schedule. The plan is
    followed work-conserving (``follow``): its times were computed for GPUs that do not
    exist, and a scheduler for homogeneous clusters starts a ready task on an idle GPU
    rather than hold the GPU for a barrier its plan expected.
    """

    name = "sched-homo"
    planner_name = "hare"

    Options: ClassVar[type[PlanOptions]] = SchedHomoOptions

    def planning_instance(self, residual: Instance) -> Instance:
        count = dict(zip(residual.gpu_types, residual.type_count.tolist()))
        jobs = []
        for job in residual.jobs:
            types = list(job.task_time)
            n = [count.get(t, 0) for t in types]

            def mean(values: list[int], n: list[int] = n) -> int:
                return max(0, round(sum(v * c for v, c in zip(values, n)) / max(1, sum(n))))

            p = max(1, mean([job.task_time[t] for t in types]))
            s = mean([job.sync_on(t) for t in types])
            jobs.append(
                Job(
                    job.id,
                    dict.fromkeys(types, p),
                    job.rounds,
                    job.tasks_per_round,
                    job.weight,
                    job.release,
                    s,
                    job.switch_overhead,
                )
            )
        return residual.with_jobs(jobs)
