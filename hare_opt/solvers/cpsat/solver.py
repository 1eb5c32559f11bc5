"""``solve_cpsat``: run the CP-SAT model and report only what the backend proved."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from hare_opt.bounds import lower_bound
from hare_opt.checker import report_for
from hare_opt.model import Instance, Result, Schedule, SolverError, Status, ceil_bound
from hare_opt.model.limits import OutOfTime, check_size
from hare_opt.model.options import Run
from hare_opt.solvers.cpsat.model import Built, Features, build, model_size
from hare_opt.solvers.cpsat.options import CpsatOptions, set_param
from hare_opt.solvers.incumbent import SharedIncumbent
from hare_opt.solvers.lns import Plan, left_shift, plan_objective
from hare_opt.solvers.special import at_once
from hare_opt.solvers.start import best_start, finish
from hare_opt.util import interrupt, progress

#: Time for the setup relaxation when the solve itself has no limit (it can be as hard).
RELAX_CAP_S = 10.0
#: Largest instance (tasks) for which the LP bound of hare_opt.bounds is computed.
LP_MAX_TASKS = 200
#: CP-SAT workers when the run does not say (the development machine has 2 cores).
DEFAULT_WORKERS = 2
#: Largest model built: task-GPU literals (about 0.1 ms each to build: ~100 s) and, with
#: setups, arcs of the per-GPU circuits.
MAX_PAIRS = 10**6
MAX_ARCS = 2 * 10**6

_STATUS = {cp_model.OPTIMAL: Status.OPTIMAL, cp_model.FEASIBLE: Status.FEASIBLE,
           cp_model.INFEASIBLE: Status.INFEASIBLE, cp_model.UNKNOWN: Status.UNKNOWN}


def add_hint(b: Built, instance: Instance, schedule: Schedule, run: Run | None = None) -> None:
    """A complete hint: every variable of the model gets the value of ``schedule``."""
    start, gpu = b.tasks.canonical(schedule)
    m = b.model
    ready = start + instance.proc[b.tasks.job, gpu] + instance.sync[b.tasks.job, gpu]
    for i, s in enumerate(b.start):
        if run is not None and not i % 1024:
            run.check()
        m.add_hint(s, int(start[i]))
        for g, lit in b.assign[i].items():
            m.add_hint(lit, int(gpu[i] == g))
    for j, rounds in enumerate(b.barrier):
        for r, var in enumerate(rounds):
            m.add_hint(var, int(ready[b.tasks.index(j, r, 0) + np.arange(
                instance.tasks_per_round[j])].max()))
    for (i, g), var in b.used.items():
        m.add_hint(var, int((gpu[: i + 1] == g).any()))
    for g, arcs in b.arcs.items():
        on_g = np.flatnonzero(gpu == g)
        seq = [-1, *on_g[np.argsort(start[on_g], kind="stable")].tolist(), -1]
        follows = set(zip(seq, seq[1:])) if len(seq) > 2 else {(-1, -1)}
        for pair, lit in arcs.items():
            m.add_hint(lit, int(pair in follows))
        for a, c in zip(seq[:-2], seq[1:-1]):
            if (c, g) in b.switch:
                m.add_hint(b.switch[(c, g)], int(a < 0 or b.tasks.job[a] != b.tasks.job[c]))


class _Progress(cp_model.CpSolverSolutionCallback):
    """Reports each new solution (objective and bound) to ``util.progress``."""

    def on_solution_callback(self) -> None:
        progress.report("cpsat", incumbent=self.objective_value, bound=self.best_objective_bound)


@dataclass
class Outcome:
    """What one CP-SAT run of a model (exact or a setup relaxation) gave, unverified."""

    status: Status
    schedule: Schedule | None
    model_objective: int | None
    bound: float
    stats: dict[str, Any]


class _Offer(cp_model.CpSolverSolutionCallback):
    """Offers every improving CP-SAT solution, left-shifted, to the shared incumbent."""

    def __init__(self, b: Built, instance: Instance, shared: SharedIncumbent) -> None:
        super().__init__()
        self.b, self.instance, self.shared = b, instance, shared
        self.best: int | None = None

    def on_solution_callback(self) -> None:
        b, inst = self.b, self.instance
        gpu = np.array([next(g for g, lit in b.assign[i].items() if self.boolean_value(lit))
                        for i in range(b.tasks.count)], dtype=np.int64)
        plan = left_shift(inst, Plan(b.tasks.job, b.tasks.round, b.tasks.task, gpu,
                                     np.array([self.value(v) for v in b.start], dtype=np.int64)))
        value = plan_objective(inst, plan)
        progress.report("cpsat", incumbent=self.objective_value, bound=self.best_objective_bound)
        if self.best is None or value < self.best:
            self.best = value
            self.shared.offer(value, np.column_stack(
                [plan.job, plan.rnd, plan.task, plan.gpu, plan.start]))


def run_model(instance: Instance, run: Run, features: Features, *, start: Result | None = None,
              upper: int | None = None, floor: int | None = None,
              params: dict[str, Any] | None = None,
              shared: SharedIncumbent | None = None) -> Outcome:
    """Build the model with ``features`` (``setups`` may be a relaxation), hint it with
    ``start``, solve it within the run's time left. The schedule is the model's, which
    for a setup relaxation need not be feasible for the instance."""
    try:
        b = build(instance, features, upper_bound=upper, poll=run.check)
        if floor is not None:
            b.model.add(b.objective >= floor)
        if start is not None:
            add_hint(b, instance, start.schedule, run)
    except OutOfTime as exc:  # the caller falls back on its start
        return Outcome(Status.UNKNOWN, None, None, -math.inf,
                       {"stopped_in": f"model building ({exc})"})
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = run.threads or DEFAULT_WORKERS
    solver.parameters.random_seed = run.seed
    solver.parameters.log_search_progress = run.log
    solver.parameters.catch_sigint_signal = False  # hare_opt.util.interrupt handles signals
    limit = run.remaining(floor=0.1)
    if limit is not None:
        solver.parameters.max_time_in_seconds = limit
    for key, value in (params or {}).items():
        set_param(solver.parameters, key, value)
    callback: cp_model.CpSolverSolutionCallback | None = None
    progress.report("cpsat", incumbent=None if start is None else start.objective,
                    note="searching")
    if shared is not None:  # it reports progress too
        callback = _Offer(b, instance, shared)
    elif progress.enabled():
        callback = _Progress()
    if progress.enabled():
        solver.best_bound_callback = lambda bound: progress.report("cpsat", bound=bound)
    with interrupt.stop_search_on(run.stop, solver):
        code = solver.solve(b.model, callback)
    status = _STATUS.get(code)
    if status is None:
        raise SolverError(f"cpsat: the model is invalid ({solver.status_name(code)}): "
                          f"{b.model.validate()}")
    proto = b.model.proto
    stats = {"branches": solver.num_branches, "conflicts": solver.num_conflicts,
             "wall_time_s": solver.wall_time, "num_variables": len(proto.variables),
             "num_constraints": len(proto.constraints),
             "num_workers": int(solver.parameters.num_workers), **b.stats}
    if not status.has_schedule:
        return Outcome(status, None, None, solver.best_objective_bound, stats)
    starts = [solver.value(s) for s in b.start]
    gpu = [next(g for g, lit in b.assign[i].items() if solver.boolean_value(lit))
           for i in range(b.tasks.count)]
    schedule = Schedule.from_indices(instance, b.tasks.job, b.tasks.round, b.tasks.task, gpu,
                                     starts)
    return Outcome(status, schedule, int(round(solver.objective_value)),
                   solver.best_objective_bound, stats)


def solve_cpsat(instance: Instance, run: Run | None = None,
                options: CpsatOptions | None = None) -> Result:
    """Solve exactly with CP-SAT; ``optimal`` only when CP-SAT proved it.

    The run's hint (else, with ``warm_start``, ``best_start``: rules and hare) is the
    warm start and upper bound. ``relax_setups``: share of the time limit spent first
    on a relaxation that charges one setup per (job, GPU) used; its proved bound holds
    here too, and its optimum, when feasible here, is optimal here. ``floor``: a
    proved lower bound added as a constraint; with ``bounds`` and no floor,
    ``hare_opt.bounds.lower_bound`` supplies one (its LP part up to ``LP_MAX_TASKS``).
    """
    run = run or Run()
    opts = options or CpsatOptions()
    if opts.special and (done := at_once(instance, run, "cpsat")) is not None:
        return done
    pairs, arcs = model_size(instance, opts.features)
    check_size("solver 'cpsat'", instance.name, pairs, MAX_PAIRS, "task-GPU pairs",
               "use hare, or milp/bnb on smaller instances")
    check_size("solver 'cpsat'", instance.name, arcs, MAX_ARCS, "setup arcs",
               "use hare or bnb")
    start = run.hint
    if start is None and opts.warm_start:
        start = best_start(instance, run, heuristic=opts.start_heuristic)
    source = None if start is None else ("given" if run.hint is not None else start.solver)
    upper = None if start is None else int(start.objective)
    floor = opts.floor
    if floor is None and opts.bounds:
        floor = int(lower_bound(instance, lp=instance.num_tasks <= LP_MAX_TASKS))
    if floor is not None and upper is not None:
        floor = min(floor, upper)
    features = opts.features
    relaxed = None
    if opts.relax_setups > 0 and (instance.overhead > 0).any():
        # One setup per (job, GPU) used only relaxes the problem: its bound holds here too.
        det = opts.params.get("max_deterministic_time")
        capped = run.time_limit is None and det is None  # a work limit needs no wall cap
        sub = run.phase(opts.relax_setups, RELAX_CAP_S if capped else None)
        params = opts.params if det is None else {
            **opts.params, "max_deterministic_time": det * opts.relax_setups}
        relaxed = run_model(instance, sub, dataclasses.replace(features, setups="first"),
                            start=start, upper=upper, floor=floor, params=params)
        if relaxed.schedule is not None:
            report = report_for(instance, relaxed.schedule)
            if report.feasible:
                if relaxed.status == Status.OPTIMAL:
                    return finish(instance, run, "cpsat", Status.OPTIMAL, relaxed.schedule,
                                  bound=relaxed.bound, stats={
                                      **relaxed.stats, "hint": source,
                                      "relaxed_status": "optimal and feasible"},
                                  start=Result.checked("relaxation", Status.FEASIBLE, report))
                if report.objective is not None and (upper is None or report.objective < upper):
                    start = Result.checked("relaxation", Status.FEASIBLE, report)
                    source, upper = "relaxation", int(start.objective)
        if math.isfinite(relaxed.bound):
            floor = max(floor or 0, ceil_bound(relaxed.bound))
    shared = None if opts.incumbent is None else SharedIncumbent(opts.incumbent)
    if shared is not None and (outside := shared.schedule(instance)) is not None and (
            upper is None or outside[0] < upper):
        report = report_for(instance, outside[1])  # nothing read from the file is trusted
        if report.objective is not None and (upper is None or report.objective < upper):
            start = Result.checked("shared", Status.FEASIBLE, report)
            source, upper = "shared", int(start.objective)
    out = run_model(instance, run, features, start=start, upper=upper, floor=floor,
                    params=opts.params, shared=shared)
    stats = {**out.stats, "hint": source, "hint_used": start is not None,
             "hint_objective": upper, "floor": floor,
             "relaxed_bound": None if relaxed is None or not math.isfinite(relaxed.bound)
             else ceil_bound(relaxed.bound),
             "relaxed_status": None if relaxed is None else str(relaxed.status)}
    if out.status == Status.UNKNOWN and start is not None:
        # Out of time before CP-SAT even read the hint (e.g. in presolve): the start is a
        # checked feasible schedule, and the floor is a proved bound.
        stats["returned_hint"] = True
        bound = floor if floor is not None else lower_bound(instance, lp=False)
        return finish(instance, run, "cpsat", Status.FEASIBLE, start.schedule, bound=bound,
                      start=start, stats=stats)
    if out.schedule is None:
        return Result("cpsat", out.status, Schedule.empty(), runtime_s=run.elapsed(),
                      instance_name=instance.name, stats=stats)
    # A barrier variable may sit above its round's real end in a non-optimal solution
    # (only the objective pushes it down), so the schedule's own score is the objective.
    stats["model_objective"] = out.model_objective
    result = finish(instance, run, "cpsat", out.status, out.schedule, bound=out.bound,
                    stats=stats)
    if out.status == Status.OPTIMAL and result.objective != out.model_objective:
        raise SolverError(f"cpsat: proved optimum {out.model_objective} but its "
                          f"schedule scores {result.objective}")
    return result
