"""``solve_milp``: the exact time-indexed MILP under the exact template."""

from __future__ import annotations

from typing import Any

import numpy as np

from hare_opt.model import Instance, Result, Schedule, SolverError, Status
from hare_opt.model.limits import OutOfTime
from hare_opt.model.options import Run
from hare_opt.solvers.exact import Context, Found, best_start, run_exact
from hare_opt.solvers.milp.backends import Outcome, run_cbc, run_highs, sweep_stale_folders
from hare_opt.solvers.milp.formulation import TimeIndexedModel, build
from hare_opt.solvers.milp.options import MilpOptions
from hare_opt.solvers.milp.solution import decode, encode
from hare_opt.solvers.milp.windows import MAX_VARS, Windows, fits

#: HiGHS threads when the run does not say (two: the machines we measure on have 2 cores).
DEFAULT_THREADS = 2
#: Handing a PuLP model to the backend takes about this many times its build time
#: (measured: 6.3 s after 8.8 s of building for 147,000 columns); with less time left
#: the MILP is not started and the start is returned.
TRANSFER_FACTOR = 0.8


def _critical_path(windows: Windows) -> int:
    return int(np.dot(windows.instance.weight, windows.earliest_completion))


class MilpBackend:
    """The time-indexed MILP under the exact template (``solvers/exact.py``): the start
    bounds the horizon (``Windows``) and is the MIP start, so a run stopped by its limit
    returns at least that schedule, with the backend's best bound."""

    name = "milp"

    def fits(self, instance: Instance, options: MilpOptions) -> None:
        fits(instance, options.max_vars)

    def build(self, ctx: Context) -> TimeIndexedModel:
        opts, run = ctx.options, ctx.run
        if opts.backend == "cbc":  # what a CBC run killed with -9 left goes now
            sweep_stale_folders()
        windows = Windows(ctx.instance, ctx.upper)
        t0 = run.elapsed()
        model = build(
            ctx.instance,
            windows,
            max_vars=opts.max_vars,
            cuts=opts.cuts,
            dense=opts.dense,
            poll=run.check,
        )
        build_s = run.elapsed() - t0
        left = run.remaining()
        if left is not None and left < TRANSFER_FACTOR * build_s:
            raise OutOfTime(
                f"handing the model to {opts.backend} would take about "
                f"{TRANSFER_FACTOR * build_s:.1f} s, {left:.1f} s left"
            )
        run.check()
        self._values = encode(model, ctx.start.schedule)
        return model

    def search(self, ctx: Context, model: TimeIndexedModel) -> Found:
        opts, run = ctx.options, ctx.run
        run.report("milp", note="MIP search")
        options = dict(opts.backend_options)
        if opts.work_limit is not None:
            options["mip_max_nodes" if opts.backend == "highs" else "maxNodes"] = int(
                opts.work_limit
            )
        backend = run_highs if opts.backend == "highs" else run_cbc
        out: Outcome = backend(
            model,
            time_limit=run.remaining(),
            threads=run.threads or DEFAULT_THREADS,
            msg=run.log,
            start=self._values,
            lp_bound=opts.lp_bound,
            options=options,
            stop=run.stop,
            report=run.report,
        )
        bound = float(_critical_path(model.windows))
        for b in (out.bound, out.lp_bound):
            if b is not None:
                bound = max(bound, b)
        stats: dict[str, Any] = dict(
            out.stats,
            lp_bound=out.lp_bound,
            horizon=int(model.windows.deadline.max()),
            dense_barriers=model.dense,
        )
        stopped = None
        if out.status != "optimal":
            stopped = (
                "interrupted"
                if run.stop.is_set()
                else "time limit"
                if run.expired()
                else "work limit"
                if opts.work_limit is not None
                else None
            )
        solution = out.status in ("optimal", "feasible")
        return Found(
            Status.OPTIMAL
            if out.status == "optimal"
            else Status.FEASIBLE
            if solution
            else Status.UNKNOWN,
            solution=solution,
            value=out.objective,
            bound=bound,
            stopped=stopped,
            stats=stats,
        )

    def extract(self, ctx: Context, model: TimeIndexedModel) -> Schedule:
        try:
            return decode(model)
        except SolverError as exc:
            raise SolverError(f"milp decoded a wrong schedule: {exc}") from None


def solve_milp(
    instance: Instance, run: Run | None = None, options: MilpOptions | None = None
) -> Result:
    """Solve exactly; ``optimal`` only when the backend proved it.

    ``lp_bound`` also solves the LP relaxation (``stats["lp_bound"]``). ``cuts`` and
    ``dense`` choose model variants (see ``formulation.build``; both on is fastest in our
    measurements). Refused (``ModelTooLargeError``) above ``max_vars`` columns.
    """
    return run_exact(instance, run or Run(), options or MilpOptions(), MilpBackend())


def lp_relaxation_bound(
    instance: Instance,
    *,
    upper: int | None = None,
    max_vars: int = MAX_VARS,
    threads: int = DEFAULT_THREADS,
) -> float:
    """LP relaxation of the MILP: a lower bound on the optimum.

    Windows come from ``upper`` (default: ``best_start``'s objective), so a
    tighter upper bound gives a stronger LP. Raises ``ModelTooLargeError`` when
    the time-indexed model would exceed ``max_vars`` columns.
    """
    if upper is None:
        upper = int(best_start(instance, Run()).objective)
    model = build(instance, Windows(instance, upper), max_vars=max_vars)
    out = run_highs(
        model, time_limit=None, threads=threads, msg=False, start=None, lp_bound=True, mip=False
    )
    if out.lp_bound is None:
        raise SolverError(f"milp: LP relaxation of {instance.name!r} not solved")
    return out.lp_bound


__all__ = ["MilpBackend", "lp_relaxation_bound", "solve_milp"]
