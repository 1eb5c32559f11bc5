"""The solver contract: a registry of solver specs and one ``solve()`` for all of them.

A solver is a function ``fn(instance, run, options) -> Result`` (``options.Run`` holds
what every solver shares, ``options`` the backend's own ``Options``) registered with a
``SolverSpec``: its name, kind (exact, heuristic or rule), options class, whether the
portfolio runs it, and the approximation factor it claims, if any. Everything that
needs "the exact solvers", "the portfolio's members", "the heuristics" or "what a
solver claims" (tests, the portfolio, quality tables, ``falsify``) asks the registry.

``solve`` validates the shared options, the backend's options and the hint before
any work, runs the solver, and passes the result through ``checker.verify``, so no
schedule leaves hare_opt unchecked.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from hare_opt.checker import report_for, verify
from hare_opt.model import (
    CheckReport,
    HareOptError,
    Instance,
    OptionError,
    Result,
    Schedule,
    SolverError,
    Stats,
)
from hare_opt.model.limits import MAX_TASKS, CapacityError, check_size
from hare_opt.model.options import NoOptions, Options, ProgressFn, Run, UnknownOptionError
from hare_opt.solvers.kernels import LOADER
from hare_opt.util import jit
from hare_opt.util.registry import Registry, resolve
from hare_opt.util.stopping import searching

#: exact: proves optima; heuristic: a schedule, deterministic (budgets count work, not time);
#: rule: a dispatching rule; improver: an anytime search from another solver's schedule,
#: whose result depends on the time it is given.
Kind = Literal["exact", "heuristic", "rule", "improver"]

__all__ = [
    "SOLVERS",
    "Kind",
    "Solver",
    "SolverError",
    "SolverSpec",
    "UnknownOptionError",
    "UnknownSolverError",
    "available_solvers",
    "check_hint",
    "claimed_factor",
    "register",
    "solve",
    "solver_names",
]


class Solver(Protocol):
    def __call__(self, instance: Instance, run: Run, options: Any) -> Result: ...


class UnknownSolverError(HareOptError, ValueError):
    pass


@dataclass(frozen=True)
class SolverSpec:
    """What a solver is. ``target`` and ``options`` may be ``"module:attribute"`` paths,
    imported on first use, so that heavy backends load only when asked for.

    ``guarantee``: a function ``instance -> factor`` such that the solver claims
    objective <= factor x OPT (``falsify`` tests the claim); None if it claims none.
    ``portfolio``: the ``portfolio`` solver runs it as one of its backends, in
    registration order, with ``portfolio_options`` as its defaults there;
    ``portfolio_quick``: the portfolio first tries it in-process for a few seconds, in
    registration order, except that those whose ``portfolio_first(instance)`` holds go
    first (bnb on small clusters with setups, its domain).
    ``fits``: a function ``(instance) -> None`` that raises ``CapacityError`` when the
    solver cannot take the instance (before any work; refusals name the solvers that
    can). ``kernels``: names of compiled-kernel groups (``KERNELS``) it runs: ``solve``
    loads them before the run's clock starts. ``planner``: the class that plans with it
    from a running cluster in the simulator (``solvers.planners``; default: plan
    through ``solve``).
    """

    name: str
    target: str | Solver
    kind: Kind
    options: str | type[Options] = NoOptions
    portfolio: bool = False
    portfolio_quick: bool = False
    portfolio_options: Mapping[str, Any] = field(default_factory=dict)
    portfolio_first: str | Callable[[Instance], bool] | None = None
    guarantee: str | Callable[[Instance], float] | None = None
    fits: str | Callable[[Instance], None] | None = None
    kernels: tuple[str, ...] = ()
    planner: str | type | None = None
    description: str = ""

    def options_class(self) -> type[Options]:
        cls = resolve(self.options)
        if not (isinstance(cls, type) and issubclass(cls, Options)):
            raise SolverError(
                f"solver {self.name!r}: options {self.options!r} is not an Options class"
            )
        return cls

    def parse_options(self, raw: dict[str, Any] | None) -> Options:
        return self.options_class().parse(raw, owner=f"solver {self.name!r}")


SOLVERS: Registry[SolverSpec] = Registry("solver", UnknownSolverError)
#: Instances with at most this many tasks are solved with the kernels run as Python
#: (``util.jit.interpreted``) in a process that has not loaded numba: loading it costs
#: about 0.5 CPU s, several times a whole search there (experiments/bench_startup.py).
INTERPRET_TASKS = 12
#: Seconds per task kept back from a time limit for the checker (1.3 s per 10^6 tasks
#: measured on a 2-core machine, with a margin).
CHECK_S_PER_TASK = 2e-6


def register(spec: SolverSpec) -> SolverSpec:
    """Add (or replace) a solver; tests parametrised over the registry then cover it."""
    return SOLVERS.add(spec)


for _spec in (
    SolverSpec(
        "cpsat",
        "hare_opt.solvers.cpsat:solve_cpsat",
        "exact",
        "hare_opt.solvers.cpsat.options:CpsatOptions",
        portfolio=True,
        portfolio_quick=True,
        portfolio_options={"interleave_search": True},
        fits="hare_opt.solvers.cpsat.size:fits",
        description="OR-Tools CP-SAT model (intervals per GPU, or per GPU type without setups)",
    ),
    SolverSpec(
        "milp",
        "hare_opt.solvers.milp:solve_milp",
        "exact",
        "hare_opt.solvers.milp.options:MilpOptions",
        portfolio=True,
        portfolio_options={"lp_bound": False},
        fits="hare_opt.solvers.milp.windows:fits",
        description="time-indexed MILP (PuLP; HiGHS or CBC)",
    ),
    SolverSpec(
        "bnb",
        "hare_opt.solvers.bnb:solve_bnb",
        "exact",
        "hare_opt.solvers.bnb.options:BnbOptions",
        portfolio=True,
        portfolio_quick=True,
        portfolio_first="hare_opt.solvers.bnb.options:suits",
        fits="hare_opt.solvers.bnb.options:fits",
        kernels=("bnb",),
        description="branch and bound over GPU sequences with dominance",
    ),
    SolverSpec(
        "portfolio",
        "hare_opt.solvers.portfolio:solve_portfolio",
        "exact",
        "hare_opt.solvers.portfolio.options:PortfolioOptions",
        fits="hare_opt.solvers.portfolio.options:fits",
        description="the portfolio backends: the quick ones in-process first, then all "
        "in parallel, sharing what they prove",
    ),
    SolverSpec(
        "hare",
        "hare_opt.heuristics.hare:solve_hare",
        "heuristic",
        "hare_opt.heuristics.hare:HareOptions",
        guarantee="hare_opt.bounds:hare_claim",
        kernels=("hare", "geobatch"),
        planner="hare_opt.heuristics.planning:HarePlanner",
        description="our heuristic: round blocks, priority orders, bounded search",
    ),
    SolverSpec(
        "geobatch",
        "hare_opt.heuristics.geobatch:solve_geobatch",
        "heuristic",
        "hare_opt.heuristics.geobatch:GeobatchOptions",
        guarantee="hare_opt.bounds:approx_factor",
        kernels=("geobatch",),
        description="geometric batches of non-idling list schedules; a factor free "
        "of the cluster size (docs/theory.md (c))",
    ),
    SolverSpec(
        "hare-paper",
        "hare_opt.heuristics.hare_paper:solve_hare_paper",
        "heuristic",
        "hare_opt.heuristics.hare_paper:HarePaperOptions",
        guarantee="hare_opt.bounds:paper_claim",
        kernels=("hare-paper",),
        planner="hare_opt.heuristics.paper_planning:HarePaperPlanner",
        description="the paper's Algorithm 1 (relaxation, H order, list scheduling)",
    ),
    SolverSpec(
        "lns",
        "hare_opt.solvers.lns:solve_lns",
        "improver",
        "hare_opt.solvers.lns:LnsOptions",
        kernels=("hare", "geobatch"),
        description="anytime improver: CP-SAT re-places the tasks of one time window "
        "of hare's schedule at a time",
    ),
    SolverSpec(
        "wspt",
        "hare_opt.heuristics.rules:solve_wspt",
        "rule",
        description="jobs by Smith's ratio, each task on its earliest-finish GPU",
    ),
    SolverSpec(
        "fifo",
        "hare_opt.heuristics.rules:solve_fifo",
        "rule",
        description="jobs in arrival order, each task on its earliest-finish GPU",
    ),
    SolverSpec(
        "eft",
        "hare_opt.heuristics.rules:solve_eft",
        "rule",
        description="always the task that would finish earliest anywhere",
    ),
):
    register(_spec)


def solver_names(kind: Kind | None = None, *, portfolio: bool | None = None) -> list[str]:
    """Registered names, optionally of one kind or (not) in the portfolio."""
    return SOLVERS.names(
        lambda s: (
            (kind is None or s.kind == kind) and (portfolio is None or s.portfolio == portfolio)
        )
    )


def available_solvers(kind: Kind | None = None) -> list[str]:
    """Names whose module imports here (a backend may be missing)."""
    out = []
    for name in solver_names(kind):
        try:
            SOLVERS.load(name)
        except (ImportError, AttributeError):
            continue
        out.append(name)
    return out


def claimed_factor(instance: Instance, solver: str) -> float | None:
    """The factor the solver claims on ``instance`` (objective <= factor x OPT), or None."""
    target = SOLVERS.spec(solver).guarantee
    return None if target is None else float(resolve(target)(instance))


def checked_report(
    instance: Instance, schedule: Schedule, known: CheckReport | None, stats: Stats
) -> CheckReport:
    """``known`` if it judged exactly these objects, else the checker's report, counted in
    ``stats.checks`` (a test holds every solve to one check per schedule that leaves)."""
    if known is not None and known.judged(instance, schedule):
        return known
    stats.count_check()
    return report_for(instance, schedule)


def suggest(instance: Instance, solver: str, refusal: CapacityError) -> CapacityError:
    """``refusal`` with the solvers that do take ``instance`` (their ``fits`` pass) as its
    advice, so that a refusal never recommends another refusal."""
    takers = []
    for other in SOLVERS:
        if other.name == solver or other.kind == "improver":
            continue
        try:
            if other.fits is not None:
                resolve(other.fits)(instance)
        except CapacityError:
            continue
        takers.append(other.name)
    text = str(refusal).split("; use ")[0]
    return type(refusal)(text + (f"; solvers that take it: {', '.join(takers)}" if takers else ""))


def kernel_groups(spec: SolverSpec, options: Options, hint: Result | None) -> tuple[str, ...]:
    """The kernel groups a solve with ``spec`` runs: its own and those its options name
    (an exact solver's start heuristic's: ``ExactOptions.start_kernels``); ``solve``
    loads them before the run's clock, so a first compile is not search time."""
    extra = getattr(options, "start_kernels", None)
    return (*spec.kernels, *(extra(hint) if callable(extra) else ()))


def check_hint(instance: Instance, hint: Result) -> Result:
    """A hint as a verified ``feasible`` result (its report attached), or a named error."""
    if not isinstance(hint, Result):
        raise OptionError(
            f"must be a Result, got {type(hint).__name__}", option="hint", owner="solve"
        )
    report = report_for(instance, hint.schedule, hint.report)
    if not report.feasible or report.objective is None:
        raise OptionError(
            "not a feasible schedule for this instance: " + "; ".join(report.violations[:3]),
            option="hint",
            owner="solve",
        )
    if report is hint.report and hint.objective == report.objective:
        return hint
    return Result.checked(hint.solver or "hint", "feasible", report)


def solve(
    instance: Instance,
    solver: str = "hare",
    *,
    time_limit: float | None = None,
    hint: Result | None = None,
    seed: int = 0,
    threads: int | None = None,
    log: bool = False,
    verify_result: bool = True,
    stop: threading.Event | None = None,
    progress: ProgressFn | None = None,
    **options: Any,
) -> Result:
    """Solve ``instance`` with the named solver; the result is checked on its way out.

    Shared options: ``time_limit`` (s), ``hint`` (a feasible result: warm start and
    upper bound), ``seed``, ``threads``, ``log``. Anything else is the solver's own
    option (see ``SOLVERS.spec(name).options_class().describe()``). With
    ``verify_result`` (the default) a schedule that breaks a rule, or an objective or
    bound the checker disagrees with, raises ``SolverError``: a bug, never a result.

    ``progress``: called with ``(source, incumbent, bound, note)`` as the solver learns
    (incumbents are objectives of feasible schedules, bounds proved); default: the
    command's progress line, if any. ``stop``: an event that asks the solver to return
    its best schedule now (the caller's own, e.g. a parent run's; default a fresh one).
    Under an edge that handles signals (the command line; ``util.interrupt.on_signals``
    for a library caller), Ctrl-C and SIGTERM set it while the solver runs; the
    result then says
    ``stats.stopped`` and is ``feasible`` unless the proof was already complete.
    Instances with more than ``MAX_TASKS`` tasks, or beyond the solver's own ``fits``,
    are refused before any work. Compiled kernels the solver runs are loaded before its
    clock starts (``stats.compile_s`` when that took time: a first run compiles them).
    """
    spec = SOLVERS.spec(solver)
    opts = spec.parse_options(options)
    check_size(
        f"solver {solver!r}",
        instance.name,
        instance.num_tasks,
        MAX_TASKS,
        advice="a schedule holds one row per task",
    )
    run = Run(
        time_limit=time_limit,
        seed=seed,
        threads=threads,
        log=log,
        progress=progress,
        verify=verify_result,
    )
    # a tiny instance in a process without numba: the kernels run as Python
    # (INTERPRET_TASKS); the loader then loads nothing
    with jit.interpreted(instance.num_tasks <= INTERPRET_TASKS) as interpreted:
        # before the clock: a one-off, not search time
        compile_s = LOADER.warm_kernels(kernel_groups(spec, opts, hint), run.report)
        fn = SOLVERS.load(solver)  # its module's imports, too, are start-up: before the clock
        run.exclude(compile_s)
        if run.time_limit is not None and verify_result:
            # the limit covers the check on the way out too (about a second per 10^6 tasks)
            run.time_limit = max(
                0.5 * run.time_limit, run.time_limit - CHECK_S_PER_TASK * instance.num_tasks
            )
        if stop is not None:
            run.stop = stop
        hint_checks = 0
        if hint is not None:
            hint_checks = int(
                hint.report is None or not hint.report.judged(instance, hint.schedule)
            )
            run.hint = check_hint(instance, hint)
        # the edge's signals, if any, set run.stop meanwhile
        with searching(run.stop):
            result = fn(instance, run, opts)
    if interpreted and not jit.loaded():
        result.stats["kernels"] = "python"
    if run.stop.is_set():
        result.stats.stopped = result.stats.stopped or "interrupted"
    if compile_s > 0.05:
        result.stats.compile_s = round(compile_s, 3)
    if run.spent:
        result.stats.phase_s = {k: round(v, 4) for k, v in run.spent.items()}
    if hint_checks:
        result.stats.count_check(hint_checks)
    if not result.runtime_s:
        result.runtime_s = run.elapsed()
    result.solver = result.solver or solver
    result.instance_name = result.instance_name or instance.name
    if verify_result:
        if result.status.has_schedule and (
            result.report is None or not result.report.judged(instance, result.schedule)
        ):
            result.stats.count_check()
        verify(instance, result)
    return result
