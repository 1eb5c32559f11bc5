"""``solve_cpsat``: run the CP-SAT model and report only what the backend proved."""

from __future__ import annotations

import math
import time
from dataclasses import asdict, fields, replace
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from hare_opt.bounds import lower_bound
from hare_opt.checker import check
from hare_opt.model import Instance, Result, Schedule
from hare_opt.solvers.base import SolverError
from hare_opt.solvers.cpsat.model import Built, Features, build
from hare_opt.solvers.start import best_start

#: Time for the setup relaxation when the solve itself has no limit (it can be as hard).
RELAX_CAP_S = 10.0
#: Largest instance (tasks) for which the LP bound of hare_opt.bounds is computed.
LP_MAX_TASKS = 200

_STATUS = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
           cp_model.INFEASIBLE: "infeasible", cp_model.UNKNOWN: "unknown"}


def _set_params(solver: cp_model.CpSolver, params: dict[str, Any]) -> None:
    for key, value in params.items():
        try:
            if isinstance(value, (list, tuple)):  # repeated fields, e.g. subsolvers
                field = getattr(solver.parameters, key)
                field.clear()
                field.extend(value)
            else:
                setattr(solver.parameters, key, value)
        except (AttributeError, TypeError, ValueError) as exc:
            raise ValueError(f"cpsat option {key!r}={value!r} is not a valid CP-SAT "
                             f"parameter: {exc}") from None


def add_hint(b: Built, instance: Instance, schedule: Schedule) -> None:
    """A complete hint: every variable of the model gets the value of ``schedule``."""
    start, gpu = b.tasks.canonical(schedule)
    m = b.model
    ready = start + instance.proc[b.tasks.job, gpu] + instance.sync[b.tasks.job, gpu]
    for i, s in enumerate(b.start):
        m.AddHint(s, int(start[i]))
        for g, lit in b.assign[i].items():
            m.AddHint(lit, int(gpu[i] == g))
    for j, rounds in enumerate(b.barrier):
        for r, var in enumerate(rounds):
            m.AddHint(var, int(ready[b.tasks.index(j, r, 0) + np.arange(
                instance.tasks_per_round[j])].max()))
    for (i, g), var in b.used.items():
        m.AddHint(var, int((gpu[: i + 1] == g).any()))
    for g, arcs in b.arcs.items():
        seq = np.flatnonzero(gpu == g)
        seq = [-1, *seq[np.argsort(start[seq], kind="stable")].tolist(), -1]
        follows = set(zip(seq, seq[1:])) if len(seq) > 2 else {(-1, -1)}
        for pair, lit in arcs.items():
            m.AddHint(lit, int(pair in follows))
        for a, c in zip(seq[:-2], seq[1:-1]):
            if (c, g) in b.switch:
                m.AddHint(b.switch[(c, g)], int(a < 0 or b.tasks.job[a] != b.tasks.job[c]))


def solve_cpsat(instance: Instance, *, time_limit: float | None = None, num_workers: int = 2,
                hint: Result | None = None, log: bool = False, seed: int = 0,
                auto_hint: bool = True, relax_setups: float = 0.25, floor: int | None = None,
                bounds: bool = True, **params: Any) -> Result:
    """Solve exactly with CP-SAT; ``status`` is ``optimal`` only when CP-SAT proved it.

    ``hint``: a feasible result used as warm start and upper bound; without one
    (and with ``auto_hint``) ``best_start`` (rules and hare) plays that part.
    ``relax_setups``: share of the time limit spent first on a relaxation that
    charges one setup per (job, GPU) used; its proved bound holds here too, and
    its optimum, when feasible here, is optimal here.
    ``floor``: a proved lower bound on the optimum, added as a constraint; with
    ``bounds`` and no floor, ``hare_opt.bounds.lower_bound`` supplies one (its LP
    part only up to ``LP_MAX_TASKS`` tasks).
    Keyword arguments named like ``Features`` fields switch model parts (for
    experiments); all others are CP-SAT parameters, e.g. ``linearization_level=2``.
    """
    t0 = time.perf_counter()
    names = {f.name for f in fields(Features)}
    features = Features(**{k: params.pop(k) for k in list(params) if k in names})
    source = "given" if hint is not None else None
    if hint is not None:
        report = check(instance, hint.schedule, max_messages=3)
        if not report.feasible:
            raise ValueError("hint: not a feasible schedule for this instance: "
                             + "; ".join(report.violations))
    elif auto_hint:
        hint = best_start(instance)
        source = hint.solver
    upper = None if hint is None else int(check(instance, hint.schedule).objective)
    if floor is None and bounds:
        floor = int(lower_bound(instance, lp=instance.num_tasks <= LP_MAX_TASKS))
    if floor is not None and upper is not None:
        floor = min(floor, upper)
    relaxed = None
    if relax_setups > 0 and (instance.overhead > 0).any() and features.setups == "circuit":
        # One setup per (job, GPU) used only relaxes the problem: its bound holds here too.
        share = RELAX_CAP_S if time_limit is None else relax_setups * time_limit
        relaxed = solve_cpsat(instance, time_limit=share, num_workers=num_workers, hint=hint,
                              log=log, seed=seed, auto_hint=False, relax_setups=0,
                              floor=floor, **params,
                              **asdict(replace(features, setups="first")))
        if relaxed.status in ("optimal", "feasible") and check(instance,
                                                               relaxed.schedule).feasible:
            if relaxed.status == "optimal":
                relaxed.runtime_s = time.perf_counter() - t0
                relaxed.stats.update(hint=source, relaxed_status="optimal and feasible")
                return relaxed
            if upper is None or relaxed.objective < upper:
                hint, source, upper = relaxed, "relaxation", int(relaxed.objective)
        if time_limit is not None:
            time_limit = max(0.1, time_limit - (time.perf_counter() - t0))
    b = build(instance, features, upper_bound=upper)
    if relaxed is not None and relaxed.lower_bound is not None:
        floor = max(floor or 0, int(relaxed.lower_bound))
    if floor is not None:
        b.model.Add(b.objective >= floor)
    if hint is not None:
        add_hint(b, instance, hint.schedule)

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = num_workers
    solver.parameters.random_seed = seed
    solver.parameters.log_search_progress = log
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = time_limit
    _set_params(solver, params)
    code = solver.Solve(b.model)
    status = _STATUS.get(code)
    if status is None:
        raise SolverError(f"cpsat: the model is invalid ({solver.StatusName(code)}): "
                          f"{b.model.Validate()}")
    proto = b.model.Proto()
    stats = {"branches": solver.NumBranches(), "conflicts": solver.NumConflicts(),
             "wall_time_s": solver.WallTime(), "num_variables": len(proto.variables),
             "num_constraints": len(proto.constraints), "hint": source,
             "hint_used": hint is not None, "hint_objective": upper,
             "num_workers": num_workers, **b.stats,
             "relaxed_bound": None if relaxed is None else relaxed.lower_bound,
             "relaxed_status": None if relaxed is None else relaxed.status, "floor": floor}
    result = Result("cpsat", status, Schedule.empty(), runtime_s=time.perf_counter() - t0,
                    instance=instance.name, stats=stats)
    if status == "unknown" and hint is not None:
        # Out of time before CP-SAT even read the hint (e.g. in presolve): the hint is a
        # checked feasible schedule, and the floor is a proved bound.
        result.status, result.schedule, result.objective = "feasible", hint.schedule, upper
        result.lower_bound = (floor if floor is not None
                              else min(upper, int(lower_bound(instance, lp=False))))
        stats["returned_hint"] = True
    elif status in ("optimal", "feasible"):
        n = b.tasks.count
        start = [solver.Value(s) for s in b.start]
        gpu = [next(g for g, lit in b.assign[i].items() if solver.BooleanValue(lit))
               for i in range(n)]
        result.schedule = Schedule.from_indices(instance, b.tasks.job, b.tasks.round,
                                                b.tasks.task, gpu, start)
        # A barrier variable may sit above its round's real end in a non-optimal solution
        # (only the objective pushes it down), so the schedule's own score is the objective.
        result.objective = int(check(instance, result.schedule).objective)
        stats["model_objective"] = int(round(solver.ObjectiveValue()))
        if status == "optimal" and result.objective != stats["model_objective"]:
            raise SolverError(f"cpsat: proved optimum {stats['model_objective']} but its "
                              f"schedule scores {result.objective}")
        bound = solver.BestObjectiveBound()
        result.lower_bound = (result.objective if status == "optimal"
                              else min(result.objective, int(math.ceil(bound - 1e-6))))
    return result
