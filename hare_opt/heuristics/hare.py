"""Our ``hare`` heuristic: heterogeneity-aware priorities, whole rounds placed as blocks.

Why it is built this way:
* A job's tasks are identical, so the unit of decision is a *round*: it is
  placed in one go with the earliest barrier the GPUs' current state allows
  (``engine.RoundEngine.place_round``), which weighs speed, setup and sync of
  every GPU type at once and touches only the GPUs it uses.
* Which round goes next follows a job priority from Smith's ratio on a size
  that sees the cluster's speed for that job (fluid time on all eligible
  GPUs, critical path, or the load LP's order). The "interleaved" dispatcher
  lets the best released job go first whenever GPUs free up, so later or
  smaller jobs fill the gaps; the "serial" one places jobs one after another.
  Each also comes in an "-eft" form that ranks a round's slots by when the
  GPU frees up rather than by when the task has synced.
* A bounded, seeded local search on the job order re-runs the dispatcher.
* The guarantee (docs/theory.md (b)): the serial schedule in the order of
  ``bounds.guarantee_plan`` provably scores at most U(instance); whenever the
  schedule found is worse than U, that serial schedule is built and returned
  instead, so the result never exceeds U whatever the search did.
* ``geobatch``'s schedule is compared with the search's (before that step), so
  the result is also within its factor of OPT (docs/theory.md (c)).
* ``search_hare`` (steps without the guarantee) also plans from a cluster
  already running (``engine.Warm``): the online simulator's re-plans. U bounds
  schedules of an empty cluster only, so warm plans carry no guarantee.
"""

from __future__ import annotations

import time

import numpy as np

from hare_opt.bounds import lower_bound
from hare_opt.bounds.combinatorial import cluster_work
from hare_opt.bounds.guarantee import guarantee_plan, lp_order, solo_span
from hare_opt.heuristics.engine import DISPATCH, RoundEngine, Warm
from hare_opt.heuristics.geobatch import run_geobatch
from hare_opt.model import Instance, Result

#: Round placements the portfolio and the local search may spend (tens of us each).
DEFAULT_BUDGET = 40_000
#: Kicks in a row without a better schedule before the search stops.
PATIENCE = 20
#: Largest instance (tasks) on which geobatch also runs at theta = 1 and inf for hare.
EXTRA_RUNS_UP_TO = 100_000


def fluid_size(inst: Instance) -> np.ndarray:
    """(N,) time a job needs on all its eligible GPUs at once, as a fluid, plus one setup."""
    speed = np.where(inst.eligible_by_type, inst.type_count / np.maximum(inst.proc_by_type, 1),
                     0.0).sum(axis=1)
    return inst.rounds * inst.tasks_per_round / speed + inst.overhead


def fluid_order(inst: Instance) -> np.ndarray:
    """Smith's order on the fluid size: the first schedule's (ties: release, index)."""
    return np.lexsort((np.arange(inst.num_jobs), inst.release, fluid_size(inst) / inst.weight))


def candidate_orders(inst: Instance) -> dict[str, np.ndarray]:
    """Job orders worth a try, best-first by a priori quality; ties go to release, then index."""
    idx, rel, w = np.arange(inst.num_jobs), inst.release, inst.weight
    smith = {"span": np.maximum(solo_span(inst), fluid_size(inst)),  # critical path counts too
             "work": cluster_work(inst).astype(float)}             # fastest-type work
    out = {"fluid": fluid_order(inst)}                             # heterogeneity-aware
    out.update({name: np.lexsort((idx, rel, size / w)) for name, size in smith.items()})
    out["lp"] = lp_order(inst)
    out["fifo"] = np.lexsort((idx, -w, rel))
    return out


class _Search:
    """Evaluates (dispatcher, order) pairs within a budget of round placements."""

    def __init__(self, inst: Instance, budget: int, deadline: float, warm: Warm | None = None):
        self.inst, self.budget, self.deadline, self.warm = inst, budget, deadline, warm
        self.cost = int(inst.rounds.sum())
        self.evals = 0
        self.best: tuple[int, str, np.ndarray, RoundEngine] | None = None

    def can(self) -> bool:
        return self.budget >= self.cost and time.perf_counter() < self.deadline

    def eval(self, mode: str, order: np.ndarray) -> int:
        self.budget -= self.cost
        self.evals += 1
        eng = DISPATCH[mode](self.inst, order, warm=self.warm)
        value = eng.objective()
        if self.best is None or value < self.best[0]:
            self.best = (value, mode, np.array(order), eng)
        return value

    def iterated_search(self, mode: str, order: np.ndarray, value: int, seed: int) -> None:
        """Local search, then kicks (two random swaps) of the best order, each followed
        by local search, while the budget lasts and kicks still pay off; the RNG is seeded:
        same input, same result."""
        rng = np.random.default_rng(seed)
        self.local_search(mode, order, value)
        idle = 0
        while self.can() and len(order) > 2 and idle < PATIENCE:
            best_value, _, best_order, _ = self.best
            kicked = np.array(best_order)
            for _ in range(2):
                a, b = rng.choice(len(kicked), 2, replace=False)
                kicked[[a, b]] = kicked[[b, a]]
            self.local_search(mode, kicked, self.eval(mode, kicked))
            idle = idle + 1 if self.best[0] == best_value else 0

    def local_search(self, mode: str, order: np.ndarray, value: int) -> None:
        """First-improvement swaps of jobs up to 3 apart, until none helps or budget ends."""
        order = np.array(order)
        improved = True
        while improved:
            improved = False
            for d in (1, 2, 3):
                for i in range(len(order) - d):
                    if not self.can():
                        return
                    order[[i, i + d]] = order[[i + d, i]]
                    new = self.eval(mode, order)
                    if new < value:
                        value, improved = new, True
                    else:
                        order[[i, i + d]] = order[[i + d, i]]


def search_hare(instance: Instance, *, warm: Warm | None = None, improve: bool = True,
                budget: int = DEFAULT_BUDGET, seed: int = 0,
                deadline: float | None = None) -> tuple[_Search, int]:
    """The best (dispatcher, order) found, and the first schedule's objective.

    ``warm`` starts every schedule from a running cluster (online re-plans); the
    engines then hold only the work still to place, so no checked ``Result`` is made.
    """
    deadline = time.perf_counter() + 60.0 if deadline is None else deadline
    search = _Search(instance, budget if improve else 0, deadline, warm)
    if not improve:
        return search, search.eval("interleaved", fluid_order(instance))
    orders = candidate_orders(instance)
    first = search.eval("interleaved", orders["fluid"])
    for name, order in orders.items():
        for mode in DISPATCH:
            if (mode, name) != ("interleaved", "fluid") and search.can():
                search.eval(mode, order)
    value, mode, order, _ = search.best
    search.iterated_search(mode, order, value, seed)
    return search, first


def solve_hare(instance: Instance, *, time_limit: float | None = None, improve: bool = True,
               budget: int = DEFAULT_BUDGET, seed: int = 0, **options) -> Result:
    """Portfolio of priority orders x dispatchers, then local search, then the guarantee.

    ``budget`` caps the round placements of all schedules tried (the first always
    runs), so the result does not depend on the machine's speed; ``time_limit`` (s)
    is a second cap; ``seed`` drives the search's random kicks. Instances with more
    rounds than the budget get just the first schedule.
    """
    if options:
        raise ValueError(f"hare: unknown option(s) {sorted(options)}")
    t0 = time.perf_counter()
    inst = instance
    search, first = search_hare(inst, improve=improve, budget=budget, seed=seed,
                                deadline=t0 + (time_limit if time_limit is not None else 60.0))
    value, mode, order, eng = search.best
    # geobatch's schedule competes too: it carries the factor of docs/theory.md (c)
    # the bound needs theta*'s run only; the other runs cost as much as the search on 10^6 tasks
    g_run = run_geobatch(inst, extra=inst.num_tasks <= EXTRA_RUNS_UP_TO)
    g_value, g_stats = g_run.objective, g_run.stats
    sched = g_run.schedule() if g_value < value else None
    if sched is not None:
        value, mode = g_value, "geobatch"
    g_order, bound = guarantee_plan(inst)
    if value > bound:  # the theorem must not rely on the search: fall back to its schedule
        search.best, sched = None, None
        search.eval("serial", g_order)
        value, mode, order, eng = search.best
    return Result("hare", "feasible", eng.schedule() if sched is None else sched,
                  objective=value, lower_bound=lower_bound(inst, lp=False),
                  runtime_s=time.perf_counter() - t0, instance=inst.name,
                  stats={"dispatch": mode, "evaluations": search.evals,
                         "first_objective": first, "guarantee_bound": bound,
                         "geobatch_objective": g_value, "approx_factor": g_stats["factor"]})
