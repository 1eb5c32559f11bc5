"""Our ``hare`` heuristic: heterogeneity-aware priorities, whole rounds placed as blocks.

Why it is built this way:

* A job's tasks are identical, so the unit of decision is a *round*: it is
  placed in one go with the earliest barrier the GPUs' current state allows
  (``rounds.RoundEngine.place_round``), which weighs speed, setup and sync of
  every GPU type at once and touches only the GPUs it uses.
* Which round goes next follows a job priority from Smith's ratio on a size
  that sees the cluster's speed for that job (fluid time on all eligible
  GPUs, critical path, or the load LP's order). The "interleaved" dispatcher is
  work-conserving: its clock moves to the earliest time any job could start, and a GPU
  that frees while its job syncs goes to the first ready job in the order, unless that
  job's batch ends sooner on a GPU still busy (it waits for that one,
  ``rounds.run_interleaved``); the "serial" one places jobs one after another; both
  also come in an "-eft" form that ranks a round's slots by when the GPU frees up
  rather than by when the task has synced. ``work_conserving=False`` swaps the
  interleaved ones for the "-hold" forms (``rounds.HOLD``), which keep the first job's
  GPUs for it through its syncs.
* A bounded, seeded local search on the job order re-runs the dispatcher; offline,
  again with slot penalties (``rounds.RoundEngine``), then a descent on one penalty
  per job from the best schedule (docs/theory.md (b), "Penalties per job"); small
  instances' final schedules are then polished by single-task moves (``polish``).
* The guarantee (docs/theory.md (b)): the serial schedule in the order of
  ``bounds.guarantee_plan`` provably scores at most U(instance); whenever the
  schedule found is worse than U, that serial schedule is built and returned
  instead, so the result never exceeds U whatever the search did.
* ``geobatch``'s schedule is compared with the search's (before that step), so
  the result is also within its factor of OPT (docs/theory.md (c)).
* ``search_hare`` (steps without the guarantee) also plans from a cluster
  already running (``model.planning.Warm``): the online simulator's re-plans. U bounds
  schedules of an empty cluster only, so warm plans carry no guarantee.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from hare_opt.bounds import lower_bound
from hare_opt.bounds.combinatorial import cluster_work
from hare_opt.bounds.guarantee import guarantee_plan, lp_order, solo_span
from hare_opt.heuristics.geobatch import run_geobatch
from hare_opt.heuristics.polish import polish
from hare_opt.heuristics.rounds import DISPATCH, HOLD, RoundEngine
from hare_opt.model import Instance, Result, Schedule, Status
from hare_opt.model.options import Options, Run, option
from hare_opt.model.planning import Warm

#: Round placements the portfolio and the local search may spend (tens of us each).
DEFAULT_BUDGET = 40_000
#: Kicks in a row without a better schedule before the search stops.
PATIENCE = 20
#: Dispatchers whose best portfolio order starts an iterated search, best first, while
#: the budget lasts: on the tuning instances of ours-quality (seeds 2000-2009, proved
#: optima) the mean hare/OPT went from 1.0235 with one start to 1.0185 with three.
STARTS = 3
#: Wall-clock cap of the search when the run has no time limit (the budget usually ends it).
DEFAULT_TIME_S = 60.0
#: Largest instance (tasks) on which geobatch also runs at theta = 1 and inf for hare.
EXTRA_RUNS_UP_TO = 100_000


#: Every dispatcher a candidate may name, by name.
_DISPATCHERS = {**DISPATCH, **HOLD}
#: Slot penalties (``rounds.RoundEngine``) the offline portfolio tries with every
#: dispatcher and order, as ``"dispatcher@penalty"`` modes: on the tuning instances of
#: ours-quality (seeds 2000-2009, the 14 with proved optima) the mean hare/OPT went from
#: 1.0186 with none to 1.0131 with these (2.0 never gave the best schedule).
PENALTIES = (0.0, 0.5, 1.0)
#: Budget of the penalised search, as a share of ``budget`` (which the plain one keeps
#: whole, so that adding penalties never makes a schedule worse).
PENALTY_SHARE = 0.5
#: Budget of the per-job penalty descent (``_Searcher.descend``), as a share of ``budget``.
DESCENT_SHARE = 0.25
#: A mode whose slot penalties are one per job (``Candidate.penalty``): the descent's.
PER_JOB = "jobs"
#: The descent also tries this (negative) penalty for a job: its slower types' slots
#: rank a little earlier, so that it leaves a fast GPU, at little or no cost to itself,
#: to a job released later (tuning instance 2005: 240 -> 232, the optimum). Tuning
#: set's mean hare/OPT with the descent: 1.0080 without it, 1.0052 with it.
LEAVE = -0.25


def dispatch(
    inst: Instance,
    mode: str,
    order: np.ndarray,
    penalty: np.ndarray | None = None,
    **kw: Any,
) -> RoundEngine:
    """Run the dispatcher a mode names (``"NAME"``, ``"NAME@PENALTY"``, or ``"NAME@jobs"``
    with ``penalty``, one per job) in ``order``."""
    name, _, given = mode.partition("@")
    if (given == PER_JOB) != (penalty is not None):
        raise ValueError(f"mode {mode!r}: per-job penalties go with '@{PER_JOB}' modes only")
    pen = penalty if penalty is not None else float(given or 0)
    return _DISPATCHERS[name](inst, order, penalty=pen, **kw)


#: The dispatchers tried in online plans (the first schedule's first): the -hold and
#: -eft interleaved forms never gave the best planned objective in the paper regime
#: (docs/theory.md (b), "Which dispatchers").
ONLINE = ("interleaved", "serial", "serial-eft")


def dispatchers(work_conserving: bool = True, hold_forms: bool = True) -> tuple[str, ...]:
    """The dispatchers the search tries, the first schedule's first: the work-conserving
    interleaved one, then the serial ones; with ``hold_forms`` (offline) also the -eft
    and -hold interleaved forms. ``work_conserving`` off: the interleaved ones are the
    -hold forms only (the engine before work conservation)."""
    if not work_conserving:
        return ("interleaved-hold", "serial", "interleaved-eft-hold", "serial-eft")
    return ONLINE + (("interleaved-eft", *HOLD) if hold_forms else ())


@dataclass(frozen=True)
class HareOptions(Options):
    """``improve``: search beyond the first schedule; ``budget``: round placements the
    search may spend (so the result does not depend on the machine's speed)."""

    improve: bool = option(True, doc="search beyond the first schedule")
    budget: int = option(
        DEFAULT_BUDGET,
        lo=0,
        doc="round placements the search may spend (with penalties, 3/4 as many again)",
    )
    work_conserving: bool = option(
        True, doc="interleaved dispatchers work-conserving (false: the -hold forms, rounds.HOLD)"
    )
    hold_forms: bool = option(
        True,
        doc="also try the -eft and -hold interleaved dispatchers (online plans leave them out)",
    )
    penalties: bool = option(
        True, doc="also try every dispatcher with slot penalties (PENALTIES, RoundEngine)"
    )
    polish: bool = option(
        True, doc="then move single tasks while that helps (small instances; heuristics.polish)"
    )


@dataclass
class Candidate:
    """One schedule the search evaluated: its objective, dispatcher, job order and engine
    (and, for ``NAME@jobs`` modes, the slot penalty of each job)."""

    objective: int
    mode: str
    order: np.ndarray
    engine: RoundEngine
    penalty: np.ndarray | None = None

    def schedule(self) -> Schedule:
        return self.engine.schedule()


@dataclass
class Search:
    """What ``search_hare`` found: the best candidate, the first schedule's objective and
    the number of schedules evaluated."""

    best: Candidate
    first: int
    evaluations: int


def fluid_size(inst: Instance) -> np.ndarray:
    """(N,) time a job needs on all its eligible GPUs at once, as a fluid, plus one setup."""
    speed = np.where(
        inst.eligible_by_type, inst.type_count / np.maximum(inst.proc_by_type, 1), 0.0
    ).sum(axis=1)
    return inst.rounds * inst.tasks_per_round / speed + inst.overhead


def fluid_order(inst: Instance) -> np.ndarray:
    """Smith's order on the fluid size: the first schedule's (ties: release, index)."""
    return np.lexsort((np.arange(inst.num_jobs), inst.release, fluid_size(inst) / inst.weight))


def candidate_orders(inst: Instance) -> dict[str, np.ndarray]:
    """Job orders worth a try, best-first by a priori quality; ties go to release, then index."""
    idx, rel, w = np.arange(inst.num_jobs), inst.release, inst.weight
    smith = {
        "span": np.maximum(solo_span(inst), fluid_size(inst)),  # critical path counts too
        "work": cluster_work(inst).astype(float),
    }  # fastest-type work
    out = {"fluid": fluid_order(inst)}  # heterogeneity-aware
    out.update({name: np.lexsort((idx, rel, size / w)) for name, size in smith.items()})
    out["lp"] = lp_order(inst)
    out["fifo"] = np.lexsort((idx, -w, rel))
    return out


class _Searcher:
    """Evaluates (dispatcher, order) pairs within a budget of round placements."""

    def __init__(
        self,
        inst: Instance,
        budget: int,
        deadline: float,
        warm: Warm | None = None,
        stop: threading.Event | None = None,
    ):
        self.inst, self.budget, self.deadline, self.warm = inst, budget, deadline, warm
        self.stop = stop
        self.cost = int(inst.rounds.sum())
        self.evals = 0
        self.best: Candidate | None = None

    def can(self) -> bool:
        return (
            self.budget >= self.cost
            and time.perf_counter() < self.deadline
            and not (self.stop is not None and self.stop.is_set())
        )

    def eval(
        self,
        mode: str,
        order: np.ndarray,
        until: int | None = None,
        penalty: np.ndarray | None = None,
    ) -> int:
        self.budget -= self.cost
        self.evals += 1
        cut: dict[str, Any] = {} if until is None else {"until": until}
        eng = dispatch(self.inst, mode, order, penalty, warm=self.warm, **cut)
        value = eng.objective()
        if self.best is None or value < self.best.objective:
            kept = None if penalty is None else np.array(penalty)
            self.best = Candidate(value, mode, np.array(order), eng, kept)
        return value

    def adopt(self, other: _Searcher) -> None:
        """Take ``other``'s best if it is better, and count its evaluations."""
        mine = self.best
        if other.best is not None and (mine is None or other.best.objective < mine.objective):
            self.best = other.best
        self.evals += other.evals

    def descend(self, start: Candidate, levels: tuple[float, ...]) -> None:
        """Coordinate descent on one slot penalty per job (among ``levels``) in
        ``start``'s dispatcher and order, first improvement, while the budget lasts.

        One penalty for all jobs cannot keep one job off a slow type and let another take
        it: on tuning instance 2008 the optimum (243) leaves the K80 to the heavy job 0 in
        its second round, which a penalty on every job forbids (259)."""
        name, _, given = start.mode.partition("@")
        mode = f"{name}@{PER_JOB}"
        pen = (
            np.array(start.penalty)
            if start.penalty is not None
            else np.full(self.inst.num_jobs, float(given or 0))
        )
        value = start.objective
        improved = True
        while improved:
            improved = False
            for j in range(self.inst.num_jobs):
                for level in levels:
                    if level == pen[j]:
                        continue
                    if not self.can():
                        return
                    was, pen[j] = pen[j], level
                    new = self.eval(mode, start.order, penalty=pen)
                    if new < value:
                        value, improved = new, True
                    else:
                        pen[j] = was

    def iterated_search(self, mode: str, order: np.ndarray, value: int, seed: int) -> None:
        """Local search, then kicks (two random swaps) of this search's best order, each
        followed by local search, while the budget lasts and kicks still pay off; the RNG
        is seeded: same input, same result."""
        rng = np.random.default_rng(seed)
        best = self._local_search(mode, order, value)
        idle = 0
        while self.can() and len(order) > 2 and idle < PATIENCE:
            best_value, kicked = best[0], np.array(best[1])
            for _ in range(2):
                a, b = rng.choice(len(kicked), 2, replace=False)
                kicked[[a, b]] = kicked[[b, a]]
            found = self._local_search(mode, kicked, self.eval(mode, kicked))
            if found[0] < best_value:
                best, idle = found, 0
            else:
                idle += 1

    def _local_search(self, mode: str, order: np.ndarray, value: int) -> tuple[int, np.ndarray]:
        """First-improvement swaps of jobs up to 3 apart, until none helps or budget ends;
        returns the (objective, order) reached."""
        order = np.array(order)
        improved = True
        while improved:
            improved = False
            for d in (1, 2, 3):
                for i in range(len(order) - d):
                    if not self.can():
                        return value, order
                    order[[i, i + d]] = order[[i + d, i]]
                    new = self.eval(mode, order)
                    if new < value:
                        value, improved = new, True
                    else:
                        order[[i, i + d]] = order[[i + d, i]]
        return value, order


def _portfolio(
    searcher: _Searcher,
    modes: tuple[str, ...],
    start: dict[str, tuple[int, np.ndarray]],
    seed: int,
    improve: bool,
) -> None:
    """Every (mode, candidate order) pair, then an iterated search from the best STARTS
    modes' best orders, while the searcher's budget lasts. ``start``: what was tried."""
    if not (improve and searcher.can()):  # else no other order would be tried
        return
    for name, order in candidate_orders(searcher.inst).items():
        for mode in modes:
            if (mode in start and name == "fluid") or not searcher.can():
                continue
            value = searcher.eval(mode, order)
            if mode not in start or value < start[mode][0]:
                start[mode] = (value, order)
    for mode, (value, order) in sorted(start.items(), key=lambda kv: kv[1][0])[:STARTS]:
        if searcher.can():
            searcher.iterated_search(mode, order, value, seed)


def search_hare(
    instance: Instance,
    *,
    warm: Warm | None = None,
    improve: bool = True,
    budget: int = DEFAULT_BUDGET,
    seed: int = 0,
    deadline: float | None = None,
    stop: threading.Event | None = None,
    work_conserving: bool = True,
    hold_forms: bool = True,
    until: int | None = None,
    penalties: tuple[float, ...] = (0.0,),
) -> Search:
    """The best (dispatcher, order) found, the first schedule's objective, the evaluations.

    ``warm`` starts every schedule from a running cluster (online re-plans); the
    engines then hold only the work still to place, so no checked ``Result`` is made.
    ``until``: when the first schedule is the only one the budget allows, its dispatch
    stops once nothing later could start before ``until`` (``rounds.run_interleaved``):
    the best engine then holds the full schedule's runs that start before it (and some
    after), and its objective is that prefix's, not the schedule's. ``penalties``: the
    slot penalties each dispatcher is tried with (modes ``NAME@PENALTY``; the first
    schedule always has none), in a search of its own; then, from the best schedule,
    a descent on one penalty per job among them (``_Searcher.descend``, mode
    ``NAME@jobs``).
    """
    deadline = time.perf_counter() + DEFAULT_TIME_S if deadline is None else deadline
    modes = dispatchers(work_conserving, hold_forms)
    extra = tuple(f"{m}@{p:g}" for p in penalties if p for m in modes)
    searcher = _Searcher(instance, budget if improve else 0, deadline, warm, stop)
    alone = not improve or budget < 2 * searcher.cost  # no second schedule will be tried
    first = searcher.eval(modes[0], fluid_order(instance), until if alone else None)
    fluid = fluid_order(instance)
    _portfolio(searcher, modes, {modes[0]: (first, fluid)}, seed, improve)
    if extra and improve:
        # the penalised forms search apart, with their own starts and budget: sharing
        # either let them crowd out the plain forms' search (worse on 6 of 30 tuning
        # instances with shared starts, on instances/paper-04 with a shared budget)
        more = _Searcher(instance, int(budget * PENALTY_SHARE), deadline, warm, stop)
        _portfolio(more, extra, {}, seed, improve)
        searcher.adopt(more)
        # then one penalty per job, from the best schedule of both searches
        tune = _Searcher(instance, int(budget * DESCENT_SHARE), deadline, warm, stop)
        assert searcher.best is not None
        tune.descend(searcher.best, (LEAVE, *penalties))
        searcher.adopt(tune)
    assert searcher.best is not None
    return Search(searcher.best, first, searcher.evals)


def solve_hare(
    instance: Instance, run: Run | None = None, options: HareOptions | None = None
) -> Result:
    """Portfolio of priority orders x dispatchers, then local search, then the guarantee.

    ``options.budget`` caps the round placements of all schedules tried (the first
    always runs; with ``options.penalties`` the penalised search gets half as many more
    and the per-job descent a quarter), so the result does not depend on the machine's
    speed; the run's ``time_limit`` (default 60 s) is a second cap; its ``seed`` drives
    the search's random kicks. Instances with more rounds than the budget get just the
    first schedule. ``options.polish``: the final schedule's single-task moves
    (``polish.polish``, its own budget of task placements; small instances only).
    """
    run = run or Run()
    opts = options or HareOptions()
    inst = instance
    limit = run.time_limit if run.time_limit is not None else DEFAULT_TIME_S
    search = search_hare(
        inst,
        improve=opts.improve,
        budget=opts.budget,
        seed=run.seed,
        deadline=run.started + limit,
        stop=run.stop,
        work_conserving=opts.work_conserving,
        hold_forms=opts.hold_forms,
        penalties=PENALTIES if opts.penalties else (0.0,),
    )
    best, evaluations = search.best, search.evaluations
    objective, mode, schedule = best.objective, best.mode, best.schedule
    # geobatch's schedule competes too: it carries the factor of docs/theory.md (c); the
    # bound needs theta*'s run only, the others cost as much as the search on 10^6 tasks
    geo = run_geobatch(inst, extra=inst.num_tasks <= EXTRA_RUNS_UP_TO)
    if geo.objective < objective:
        objective, mode, schedule = geo.objective, "geobatch", geo.schedule
    g_order, bound = guarantee_plan(inst)
    if objective > bound:  # the theorem must not rely on the search: its schedule
        eng = DISPATCH["serial"](inst, g_order)
        best, evaluations = Candidate(eng.objective(), "serial", g_order, eng), evaluations + 1
        objective, mode, schedule = best.objective, best.mode, best.schedule
    final, moves = schedule(), 0
    # last, so that it cannot lose the guarantee: it only keeps moves that lower the objective
    polished = (
        polish(inst, final, deadline=run.started + limit, stop=run.stop)
        if opts.polish and opts.improve
        else None
    )
    if polished is not None and polished.moves:
        final, objective, moves = polished.schedule, polished.objective, polished.moves
        mode = f"{mode}+polish"
    if polished is not None:
        evaluations += polished.evaluations
    return Result(
        "hare",
        Status.FEASIBLE,
        final,
        objective=objective,
        lower_bound=lower_bound(inst, lp=False),
        runtime_s=run.elapsed(),
        instance_name=inst.name,
        stats={
            "lower_bound_from": "combinatorial bounds (no LP)",
            "dispatch": mode,
            "evaluations": evaluations,
            "first_objective": search.first,
            "polish_moves": moves,
            "guarantee_bound": bound,
            "geobatch_objective": geo.objective,
            "approx_factor": geo.stats["factor"],
        },
    )
