"""``solve_milp``: the exact time-indexed MILP behind the common solver interface."""

from __future__ import annotations

import numpy as np

from hare_opt.bounds import lower_bound
from hare_opt.model import Instance, Result, SolverError, Status
from hare_opt.model.limits import OutOfTime, fmt_count
from hare_opt.model.options import Run
from hare_opt.solvers.milp.backends import Outcome, run_cbc, run_highs
from hare_opt.solvers.milp.formulation import MAX_VARS, ModelTooLargeError, build
from hare_opt.solvers.milp.options import MilpOptions
from hare_opt.solvers.milp.solution import decode, encode
from hare_opt.solvers.milp.windows import Windows
from hare_opt.solvers.special import at_once
from hare_opt.solvers.start import best_start, finish
from hare_opt.util import progress

#: HiGHS threads when the run does not say (the development machine has 2 cores).
DEFAULT_THREADS = 2
#: Handing a PuLP model to the backend takes about this many times its build time
#: (measured: 6.3 s after 8.8 s of building for 147,000 columns); with less time left
#: the MILP is not started and the start is returned.
TRANSFER_FACTOR = 0.8


def _critical_path(windows: Windows) -> int:
    return int(np.dot(windows.instance.weight, windows.earliest_completion))


def solve_milp(instance: Instance, run: Run | None = None,
               options: MilpOptions | None = None) -> Result:
    """Solve exactly; ``optimal`` only when the backend proved it.

    The best start (``best_start``: the rules, ``start_heuristic`` and the run's hint)
    bounds the horizon and is the MIP start, so a run stopped by its time limit
    returns at least that schedule (``feasible``, with the backend's best bound).
    ``lp_bound`` also solves the LP relaxation and reports it in ``stats["lp_bound"]``.
    ``cuts`` and ``dense`` choose model variants (see ``formulation.build``; both on is
    fastest in our measurements). Raises ``ModelTooLargeError`` above ``max_vars`` columns.
    """
    run = run or Run()
    opts = options or MilpOptions()
    if opts.special and (done := at_once(instance, run, "milp")) is not None:
        return done
    budget = 5.0 if run.time_limit is None else max(0.1, min(5.0, 0.2 * run.time_limit))
    # every (job, round, GPU type) has at least one start variable: a size known before
    # the start is computed (the model's size is known only with the start's horizon)
    least = int(instance.rounds.sum()) * len(instance.gpu_types)
    if least > opts.max_vars:
        raise ModelTooLargeError(f"solver 'milp': instance {instance.name!r} needs at least "
                                 f"{fmt_count(least)} variables (one per round and GPU type), "
                                 f"more than the {fmt_count(opts.max_vars)} it handles "
                                 "(option max_vars); use cpsat or hare")
    start = best_start(instance, run, heuristic=opts.start_heuristic, heuristic_time=budget)
    windows = Windows(instance, int(start.objective))
    t_build = run.elapsed()
    try:
        model = build(instance, windows, max_vars=opts.max_vars, cuts=opts.cuts,
                      dense=opts.dense, poll=run.check)
        build_s = run.elapsed() - t_build
        left = run.remaining()
        if left is not None and left < TRANSFER_FACTOR * build_s:
            raise OutOfTime(f"handing the model to {opts.backend} would take about "
                            f"{TRANSFER_FACTOR * build_s:.1f} s, {left:.1f} s left")
        run.check()
        values = encode(model, start.schedule)
    except OutOfTime as exc:  # no time for the MILP: the start is a checked schedule
        return finish(instance, run, "milp", Status.FEASIBLE, start.schedule,
                      bound=lower_bound(instance, lp=False), start=start,
                      stats={"stopped_in": f"model building ({exc})", "schedule_from": "start",
                             "start_solver": start.solver, "start_objective": start.objective})
    build_s = run.elapsed()
    progress.report("milp", incumbent=start.objective, note="MIP search")
    backend = run_highs if opts.backend == "highs" else run_cbc
    extra = {"stop": run.stop} if opts.backend == "highs" else {}
    out: Outcome = backend(model, time_limit=run.remaining(), threads=run.threads or
                           DEFAULT_THREADS, msg=run.log, start=values, lp_bound=opts.lp_bound,
                           options=opts.backend_options, **extra)
    bound = float(_critical_path(windows))
    for b in (out.bound, out.lp_bound):
        if b is not None:
            bound = max(bound, b)
    stats = dict(out.stats, build_s=round(build_s, 4), lp_bound=out.lp_bound,
                 start_objective=start.objective, start_solver=start.solver,
                 start_error=start.stats.get("start_error"),
                 horizon=int(windows.deadline.max()), dense_barriers=model.dense)
    if out.status == "none" or (out.status == "feasible" and out.objective is not None
                                and out.objective > start.objective):
        # The backend had no incumbent (or lost the MIP start): the start is still valid.
        stats["schedule_from"] = "start"
        return finish(instance, run, "milp", Status.FEASIBLE, start.schedule, bound=bound,
                      start=start, stats=stats)
    stats["schedule_from"] = "milp"
    try:
        return finish(instance, run, "milp", Status(out.status), decode(model), bound=bound,
                      stats=stats)
    except SolverError as exc:
        raise SolverError(f"milp decoded a wrong schedule: {exc}") from None


def lp_relaxation_bound(instance: Instance, *, upper: int | None = None,
                        max_vars: int = MAX_VARS, threads: int = DEFAULT_THREADS) -> float:
    """LP relaxation of the MILP: a lower bound on the optimum.

    Windows come from ``upper`` (default: ``best_start``'s objective), so a
    tighter upper bound gives a stronger LP. Raises ``ModelTooLargeError`` when
    the time-indexed model would exceed ``max_vars`` columns.
    """
    if upper is None:
        upper = int(best_start(instance, Run()).objective)
    model = build(instance, Windows(instance, upper), max_vars=max_vars)
    out = run_highs(model, time_limit=None, threads=threads, msg=False, start=None, lp_bound=True,
                    mip=False)
    if out.lp_bound is None:
        raise SolverError(f"milp: LP relaxation of {instance.name!r} not solved")
    return out.lp_bound
