"""``solve_cpsat``: run the CP-SAT model and report only what the backend proved."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hare_opt.model import Instance, Result, Schedule, SolverError, Status, ceil_bound
from hare_opt.model.limits import OutOfTime
from hare_opt.model.options import Run
from hare_opt.model.phases import declare
from hare_opt.solvers import incumbent
from hare_opt.solvers.cpsat import size
from hare_opt.solvers.cpsat.model import Built, Features, build
from hare_opt.solvers.cpsat.options import CpsatOptions, set_param
from hare_opt.solvers.exact import Context, Found, run_exact
from hare_opt.solvers.lns import Plan, left_shift, plan_objective
from hare_opt.util.ortools import cp_model, solve_stoppable

RELAX_SETUPS = declare(
    "cpsat.relax-setups",
    0.25,
    cap_s=10.0,
    doc="CP-SAT's setup relaxation: the option relax_setups's share (this one is its "
    "default); without a time limit or a work limit, cap_s (it can be as hard as the solve)",
)
#: Largest instance (tasks) for which the LP bound of hare_opt.bounds is computed.
LP_MAX_TASKS = 200
#: CP-SAT workers when the run does not say (two: the machines we measure on have 2 cores).
DEFAULT_WORKERS = 2

_STATUS = {
    cp_model.OPTIMAL: Status.OPTIMAL,
    cp_model.FEASIBLE: Status.FEASIBLE,
    cp_model.INFEASIBLE: Status.INFEASIBLE,
    cp_model.UNKNOWN: Status.UNKNOWN,
}


def add_hint(b: Built, instance: Instance, schedule: Schedule, run: Run | None = None) -> None:
    """A complete hint: every variable of the model gets the value of ``schedule``."""
    start, gpu = b.tasks.canonical(schedule)
    m = b.model
    ready = start + instance.proc[b.tasks.job, gpu] + instance.sync[b.tasks.job, gpu]
    chosen = b.res.of_gpu[gpu]
    for i, s in enumerate(b.start):
        if run is not None and not i % 1024:
            run.check()
        m.add_hint(s, int(start[i]))
        for g, lit in b.assign[i].items():
            m.add_hint(lit, int(chosen[i] == g))
    for j, rounds in enumerate(b.barrier):
        for r, var in enumerate(rounds):
            m.add_hint(
                var,
                int(ready[b.tasks.index(j, r, 0) + np.arange(instance.tasks_per_round[j])].max()),
            )
    for (i, g), var in b.used.items():
        m.add_hint(var, int((gpu[: i + 1] == g).any()))
    for g, arcs in b.arcs.items():
        if run is not None:
            run.check()
        on_g = np.flatnonzero(gpu == g)
        seq = [-1, *on_g[np.argsort(start[on_g], kind="stable")].tolist(), -1]
        follows = set(zip(seq, seq[1:])) if len(seq) > 2 else {(-1, -1)}
        for pair, lit in arcs.items():
            m.add_hint(lit, int(pair in follows))
        for a, c in zip(seq[:-2], seq[1:-1]):
            if (c, g) in b.switch:
                m.add_hint(b.switch[(c, g)], int(a < 0 or b.tasks.job[a] != b.tasks.job[c]))


class _Solutions(cp_model.CpSolverSolutionCallback):
    """Each improving CP-SAT solution as a schedule, left-shifted (its own score is then
    exact, and never above the model's): reported as the incumbent and offered to the
    shared incumbent file. Only for the exact model: a relaxation's solutions need not be
    schedules, so its values are never reported as incumbents."""

    def __init__(
        self, b: Built, instance: Instance, run: Run, shared: incumbent.SharedIncumbent | None
    ) -> None:
        super().__init__()
        self.b, self.instance, self.run, self.shared = b, instance, run, shared
        self.best: int | None = None

    def on_solution_callback(self) -> None:
        b, inst = self.b, self.instance
        starts = np.array([self.value(v) for v in b.start], dtype=np.int64)
        gpu = b.gpus(inst, starts, self.boolean_value)
        plan = left_shift(inst, Plan(b.tasks.job, b.tasks.round, b.tasks.task, gpu, starts))
        value = plan_objective(inst, plan)
        if self.best is None or value < self.best:
            self.best = value
            self.run.report("cpsat", incumbent=value, bound=self.best_objective_bound)
            if self.shared is not None:
                self.shared.offer(
                    value, np.column_stack([plan.job, plan.rnd, plan.task, plan.gpu, plan.start])
                )


@dataclass
class Outcome:
    """What one CP-SAT run of a model (exact or a setup relaxation) gave, unverified."""

    status: Status
    model_objective: int | None
    bound: float
    stats: dict[str, Any]
    solver: cp_model.CpSolver | None = None
    built: Built | None = None

    def plan(self, instance: Instance) -> Plan:
        """The solution, left-shifted: every GPU keeps its order, every task starts as early
        as the rules allow (setups included), so even a setup relaxation's solution becomes
        a feasible schedule, scoring at most the model's value for the exact model."""
        b, solver = self.built, self.solver
        assert b is not None and solver is not None
        starts = np.array([solver.value(v) for v in b.start], dtype=np.int64)
        gpu = b.gpus(instance, starts, solver.boolean_value)
        return left_shift(instance, Plan(b.tasks.job, b.tasks.round, b.tasks.task, gpu, starts))


def configure(solver: cp_model.CpSolver, run: Run, params: dict[str, Any] | None) -> None:
    """The run's shared options and the caller's CP-SAT parameters on ``solver``."""
    solver.parameters.num_workers = run.threads or DEFAULT_WORKERS
    solver.parameters.random_seed = run.seed
    solver.parameters.log_search_progress = run.log
    solver.parameters.catch_sigint_signal = False  # hare_opt.util.interrupt handles signals
    limit = run.remaining(floor=0.05)
    if limit is not None:
        solver.parameters.max_time_in_seconds = limit
    for key, value in (params or {}).items():
        set_param(solver.parameters, key, value)


def params_of(opts: CpsatOptions) -> dict[str, Any]:
    """The CP-SAT parameters of ``opts``, ``work_limit`` as deterministic time."""
    if opts.work_limit is None:
        return dict(opts.params)
    return {**opts.params, "max_deterministic_time": float(opts.work_limit)}


def solve_model(
    b: Built,
    instance: Instance,
    run: Run,
    params: dict[str, Any] | None,
    *,
    callback: cp_model.CpSolverSolutionCallback | None = None,
    report_bound: bool = True,
) -> Outcome:
    """Solve a built model within the run's time left (stopped by ``run.stop``)."""
    solver = cp_model.CpSolver()
    configure(solver, run, params)
    if report_bound and run.reporting:
        solver.best_bound_callback = lambda bound: run.report("cpsat", bound=bound)
    code = solve_stoppable(solver, b.model, run.stop, callback)
    status = _STATUS.get(code)
    if status is None:
        raise SolverError(f"cpsat: CP-SAT refused the model: {_one_line(solver.solution_info())}")
    proto = b.model.proto
    stats = {
        "branches": solver.num_branches,
        "conflicts": solver.num_conflicts,
        "cpsat_wall_s": round(solver.wall_time, 4),
        "num_variables": len(proto.variables),
        "num_constraints": len(proto.constraints),
        "num_workers": int(solver.parameters.num_workers),
        **b.stats,
    }
    # exact: the objective expression evaluated in integers (``objective_value`` is a
    # double, which rounds values above 2^53 and then misses the schedule's score)
    model_objective = int(solver.value(b.objective)) if status.has_schedule else None
    return Outcome(status, model_objective, solver.best_objective_bound, stats, solver, b)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _model(ctx: Context, features: Features, upper: int, floor: int | None) -> Built:
    """The model for ``features``, bounded by ``upper`` and ``floor``, hinted with the
    context's start; building polls the run (``OutOfTime``)."""
    b = build(ctx.instance, features, upper_bound=upper, poll=ctx.run.check)
    if floor is not None:
        b.model.add(b.objective >= min(floor, upper))
    add_hint(b, ctx.instance, ctx.start.schedule, ctx.run)
    return b


class CpsatBackend:
    """CP-SAT under the exact template (``solvers/exact.py``).

    ``build`` first spends ``relax_setups`` of the time on a relaxation that charges one
    setup per (job, GPU) used (when the instance has setups): its proved bound holds here
    too, its optimum when feasible here is optimal here, and any feasible schedule it
    finds may improve the start. It then builds the exact model below the start.
    """

    name = "cpsat"

    def fits(self, instance: Instance, options: CpsatOptions) -> None:
        size.fits(instance, options.features.setups == "circuit", options.pools(instance))

    def build(self, ctx: Context) -> Built | Outcome:
        instance, opts = ctx.instance, ctx.options
        floor = ctx.floor if opts.floor is None else max(ctx.floor, opts.floor)
        if opts.lp_floor and instance.num_tasks <= LP_MAX_TASKS:
            from hare_opt.bounds import lower_bound
            from hare_opt.model.result import int_bound

            floor = max(floor, int_bound(lower_bound(instance, lp=True)))
        ctx.floor = min(floor, ctx.upper)
        features = dataclasses.replace(opts.features, pooled=opts.pools(instance))
        ctx.stats["model"] = "types" if features.pooled else "gpus"  # before _relax may end
        if opts.relax_setups > 0 and (instance.overhead > 0).any():
            done = self._relax(ctx)
            if done is not None:
                return done
        shared = incumbent.board()  # the portfolio's, in its children
        if shared is not None and (outside := shared.schedule(instance)) is not None:
            ctx.offer(Result("shared", Status.FEASIBLE, outside[1], outside[0]), "shared")
        return _model(ctx, features, ctx.upper, ctx.floor)

    def _relax(self, ctx: Context) -> Outcome | None:
        """The setup relaxation; its outcome when it proved an optimum feasible here."""
        instance, run, opts = ctx.instance, ctx.run, ctx.options
        params = params_of(opts)
        det = params.get("max_deterministic_time")
        capped = run.time_limit is None and det is None  # a work limit needs no wall cap
        if det is not None:
            params["max_deterministic_time"] = det * opts.relax_setups
        features = dataclasses.replace(opts.features, setups="first")
        cap = RELAX_SETUPS.cap_s if capped else None
        with run.phase(RELAX_SETUPS, share=opts.relax_setups, cap=cap) as sub:
            try:
                b = build(instance, features, upper_bound=ctx.upper, poll=sub.check)
                b.model.add(b.objective >= ctx.floor)
                add_hint(b, instance, ctx.start.schedule, sub)
            except OutOfTime:
                return None
            out = solve_model(b, instance, sub, params)
        ctx.stats["relaxed_status"] = str(out.status)
        if math.isfinite(out.bound):
            ctx.stats["relaxed_bound"] = ceil_bound(out.bound)
            ctx.floor = min(ctx.upper, max(ctx.floor, ceil_bound(out.bound)))
        if out.status.has_schedule:
            plan = out.plan(instance)
            value = plan_objective(instance, plan)
            if out.status == Status.OPTIMAL and value <= ceil_bound(out.bound):
                ctx.stats["relaxed_status"] = "optimal and feasible"
                self._plan = plan
                out.model_objective = value
                return out
            ctx.offer(
                Result("relaxation", Status.FEASIBLE, plan.schedule(instance), value), "relaxation"
            )
        return None

    def search(self, ctx: Context, model: Built | Outcome) -> Found:
        if isinstance(model, Outcome):  # the relaxation's optimum is feasible: optimal here
            return Found(
                Status.OPTIMAL,
                solution=True,
                value=model.model_objective,
                bound=model.bound,
                source="relaxation",
            )
        shared = incumbent.board()
        callback = (
            _Solutions(model, ctx.instance, ctx.run, shared)
            if (shared is not None or ctx.run.reporting)
            else None
        )
        out = solve_model(model, ctx.instance, ctx.run, params_of(ctx.options), callback=callback)
        self._out = out
        stopped = None
        if out.status not in (Status.OPTIMAL, Status.INFEASIBLE):
            stopped = (
                "interrupted"
                if ctx.run.stop.is_set()
                else "time limit"
                if ctx.run.expired() or ctx.options.work_limit is None
                else "work limit"
            )
        if out.status == Status.INFEASIBLE:
            # nothing scores at most the start's value: the start's claim is wrong, and it
            # fails its check on the way out (the template checks what leaves)
            return Found(stats={**out.stats, "model_status": "infeasible"})
        return Found(
            out.status,
            solution=out.status.has_schedule,
            value=out.model_objective,
            bound=out.bound if math.isfinite(out.bound) else None,
            stopped=stopped,
            stats={**out.stats, "model_objective": out.model_objective},
        )

    def extract(self, ctx: Context, model: Built | Outcome) -> Schedule:
        if isinstance(model, Outcome):
            return self._plan.schedule(ctx.instance)
        # A barrier may sit above its round's real end in a non-optimal solution (only the
        # objective pushes it down): the left shift scores at most the model's value.
        return self._out.plan(ctx.instance).schedule(ctx.instance)


def solve_cpsat(
    instance: Instance, run: Run | None = None, options: CpsatOptions | None = None
) -> Result:
    """Solve exactly with CP-SAT; ``optimal`` only when CP-SAT proved it.

    The start (the run's hint, else the rules and ``start_heuristic``) is the warm start
    and upper bound. ``relax_setups``: share of the time first spent on a relaxation that
    charges one setup per (job, GPU) used (see ``CpsatBackend``). ``floor``: a proved
    lower bound added as a constraint; the template's cheap bounds always are, and with
    ``lp_floor`` the LP bound too (up to ``LP_MAX_TASKS`` tasks).
    """
    return run_exact(instance, run or Run(), options or CpsatOptions(), CpsatBackend())
