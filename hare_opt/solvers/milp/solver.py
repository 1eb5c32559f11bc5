"""``solve_milp``: the exact time-indexed MILP behind the common solver interface."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from hare_opt.checker import check
from hare_opt.model import Instance, Result
from hare_opt.solvers.base import SolverError
from hare_opt.solvers.milp.backends import Outcome, run_cbc, run_highs
from hare_opt.solvers.milp.formulation import MAX_VARS, build
from hare_opt.solvers.milp.solution import decode, encode
from hare_opt.solvers.milp.windows import Windows
from hare_opt.solvers.start import best_start

BACKENDS = ("highs", "cbc")


def _critical_path(windows: Windows) -> int:
    return int(np.dot(windows.instance.weight, windows.earliest_completion))


def solve_milp(instance: Instance, *, time_limit: float | None = None, backend: str = "highs",
               threads: int = 2, hint: Result | None = None, msg: bool = False,
               lp_bound: bool = True, max_vars: int = MAX_VARS, heuristic: str | None = "hare",
               cuts: bool = True, dense: bool = True, **options: Any) -> Result:
    """Solve exactly; ``optimal`` only when the backend proved it.

    The best heuristic schedule (or ``hint``) bounds the horizon and is the MIP
    start, so a run stopped by ``time_limit`` returns at least that schedule
    (``feasible``, with the backend's best bound); ``heuristic`` names the solver
    tried for that start besides the dispatching rules. ``lp_bound`` also solves the
    LP relaxation and reports it in ``stats["lp_bound"]``. ``cuts`` and ``dense``
    choose model variants (see ``formulation.build``; both on is fastest in our
    measurements). Extra ``options`` go to the backend (HiGHS option names, or
    PuLP's CBC arguments). Raises ``ModelTooLargeError`` above ``max_vars`` columns.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    t0 = time.perf_counter()
    budget = 5.0 if time_limit is None else max(0.1, min(5.0, 0.2 * time_limit))
    start = best_start(instance, hint, heuristic=heuristic, heuristic_time=budget)
    windows = Windows(instance, int(start.objective))
    model = build(instance, windows, max_vars=max_vars, cuts=cuts, dense=dense)
    build_s = time.perf_counter() - t0
    left = None if time_limit is None else max(0.0, time_limit - build_s)
    values = encode(model, start.schedule)
    run = run_highs if backend == "highs" else run_cbc
    out: Outcome = run(model, time_limit=left, threads=threads, msg=msg, start=values,
                       lp_bound=lp_bound, options=options)
    bound = _critical_path(windows)
    for b in (out.bound, out.lp_bound):
        if b is not None:
            bound = max(bound, math.ceil(b - 1e-6))  # the objective is an integer
    stats = dict(out.stats, build_s=round(build_s, 4), lp_bound=out.lp_bound,
                 start_objective=start.objective, start_solver=start.solver,
                 start_error=start.stats.get("start_error"),
                 horizon=int(windows.deadline.max()), dense_barriers=model.dense)
    if out.status == "none" or (out.status == "feasible" and out.objective > start.objective):
        # The backend had no incumbent (or lost the MIP start): the start is still valid.
        schedule, objective, status = start.schedule, start.objective, "feasible"
        stats["schedule_from"] = "start"
    else:
        schedule = decode(model)
        report = check(instance, schedule, max_messages=3)
        if not report.feasible:
            raise SolverError("milp decoded an infeasible schedule: "
                              + "; ".join(report.violations))
        objective, status = report.objective, out.status
        stats["schedule_from"] = "milp"
        if status == "optimal" and objective > bound:
            raise SolverError(f"milp: decoded objective {objective} above proved bound {bound}")
    if status == "optimal":
        bound = objective
    return Result("milp", status, schedule, objective, min(bound, objective),
                  time.perf_counter() - t0, instance.name, stats)


def lp_relaxation_bound(instance: Instance, *, upper: int | None = None,
                        max_vars: int = MAX_VARS, threads: int = 2) -> float:
    """LP relaxation of the MILP: a lower bound on the optimum.

    Windows come from ``upper`` (default: the best dispatching rule), so a
    tighter upper bound gives a stronger LP. Raises ``ModelTooLargeError`` when
    the time-indexed model would exceed ``max_vars`` columns.
    """
    if upper is None:
        upper = int(best_start(instance).objective)
    model = build(instance, Windows(instance, upper), max_vars=max_vars)
    out = run_highs(model, time_limit=None, threads=threads, msg=False, start=None, lp_bound=True,
                    mip=False)
    if out.lp_bound is None:
        raise SolverError(f"milp: LP relaxation of {instance.name!r} not solved")
    return out.lp_bound
