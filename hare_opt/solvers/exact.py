"""The exact template: one path from an instance to a proved (or bounded) result.

Every exact backend (``cpsat``, ``milp``, ``bnb``, ``portfolio``) is a ``Backend``
with three steps, ``build`` (its model), ``search`` (what it proves) and ``extract``
(the schedule of its best solution), and ``run_exact`` does everything else, once and
in one order, so that no backend carries its own copy:

1. the special cases with a closed-form optimum (``solvers/special.py``), at once;
2. the backend's size limits (``fits``), before any work;
3. the cheap proved bounds (``bounds.lower_bound(lp=False)``): the *floor*;
4. the *start*: the run's hint if given, else the best of the dispatching rules and
   the ``start_heuristic``. A start has one meaning everywhere: a feasible schedule
   that is the backend's warm start and upper bound, and the answer if the backend
   finds nothing better;
5. a quick proof: the floor meets the start;
6. ``build`` and ``search`` within the run's limits (``OutOfTime`` from either leaves
   the start as the answer);
7. the one check of the schedule that leaves (``extract``'s, or the start's), the
   bound (the backend's proved bound, the floor), and the status: ``optimal`` only when
   the backend proved it or a proved bound meets the schedule.

No schedule is checked on the way (the start's rules and heuristic are trusted for
ordering only): a wrong start can only make a backend find nothing, and then the start
itself leaves and fails its check. ``Stats.checks`` counts the checks of a solve.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from hare_opt.model import (
    CheckReport,
    Instance,
    OptionError,
    Result,
    Schedule,
    SolverError,
    Stats,
    Status,
    ceil_bound,
)
from hare_opt.model.limits import CapacityError, OutOfTime
from hare_opt.model.options import Options, Run, option
from hare_opt.model.phases import declare
from hare_opt.solvers.base import SOLVERS, checked_report, suggest
from hare_opt.solvers.kernels import LOADER

START_RULES = declare(
    "exact.start-rules",
    0.25,
    doc="an exact solver's start: the rules, after the heuristic (the search gets the rest)",
)
START_HEURISTIC = declare(
    "exact.start-heuristic",
    0.1,
    doc="an exact solver's start: its heuristic. Without a time limit it runs as it "
    "would alone (its own budget ends it), so the start scores at most what the heuristic "
    "scores alone; with one, stats.start_cut says when this share cut it",
)
#: What ``start_heuristic="auto"`` runs: the best fast heuristic, so that an exact
#: solver's incumbent is never worse than it (tests/test_start.py).
AUTO_HEURISTIC = "hare"


def _check_start_heuristic(value: str | None, owner: str) -> None:
    if value is None or value == "auto":
        return
    if value not in SOLVERS or SOLVERS.spec(value).kind not in ("heuristic", "rule"):
        names = [n for n in SOLVERS.names() if SOLVERS.spec(n).kind in ("heuristic", "rule")]
        raise OptionError(
            f"must be a heuristic or rule ({', '.join(names)}), 'auto' or null, got {value!r}",
            option="start_heuristic",
            owner=owner,
        )


@dataclass(frozen=True)
class ExactOptions(Options):
    """Options every exact backend takes (the template's own)."""

    special: bool = option(
        True, doc="return the closed-form optimum of a special case at once (solvers/special.py)"
    )
    start_heuristic: str | None = option(
        "auto",
        doc="solver tried for the start besides "
        f"the rules ('auto': {AUTO_HEURISTIC}, "
        "so the result is never worse than "
        "its schedule; null: rules only)",
    )
    work_limit: float | None = option(
        None,
        lo=0.0,
        doc="a reproducible limit in the "
        "backend's unit of work: CP-SAT "
        "deterministic seconds, bnb nodes, "
        "MILP branch-and-bound nodes",
    )

    def __post_init__(self) -> None:
        _check_start_heuristic(self.start_heuristic, self.owner)

    def start_kernels(self, hint: Result | None) -> tuple[str, ...]:
        """The kernel groups the start's heuristic runs (none with a hint): ``solve``
        loads them with the backend's own, before the run's clock."""
        name = self.start_heuristic
        if hint is not None or not name:
            return ()
        return SOLVERS.spec(AUTO_HEURISTIC if name == "auto" else name).kernels


@dataclass
class Found:
    """What a backend's search established (unverified: the template checks it).

    ``solution``: the backend holds a schedule (``extract`` gives it); ``value``: the
    backend's own value for it (an upper bound on its real score); ``status``
    ``optimal`` only when the backend proved that schedule optimal; ``bound``: a proved
    lower bound on the optimum (float; the template rounds it); ``stopped``: why the
    search ended early (``"work limit"``, ``"time limit"``, a phase); ``source``: who
    found the schedule if not the backend itself (e.g. ``"shared"``).
    """

    status: Status = Status.UNKNOWN
    solution: bool = False
    value: float | None = None
    bound: float | None = None
    stopped: str | None = None
    source: str | None = None
    bound_from: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    report: CheckReport | None = None  # the checker's report on ``extract``'s schedule


@dataclass
class Context:
    """What a backend sees: the instance, the run, its options, the start and the floor."""

    name: str
    instance: Instance
    run: Run
    options: Any
    start: Result
    floor: int
    stats: Stats

    @property
    def upper(self) -> int:
        """The start's objective: no schedule worth finding scores more."""
        return int(self.start.objective)

    def offer(self, result: Result, source: str) -> bool:
        """Take ``result`` (a schedule found in a phase, e.g. a relaxation) as the start if
        it scores less; its claimed objective is checked when it leaves."""
        if result.objective < self.start.objective:
            result.solver = source
            self.start = result
            self.stats.start, self.stats.start_objective = source, int(result.objective)
            return True
        return False


class Backend(Protocol):
    """An exact method under the template (see the module docstring)."""

    name: str

    def fits(self, instance: Instance, options: Any) -> None:
        """Raise ``CapacityError`` when ``instance`` is beyond the backend (no work done)."""

    def build(self, ctx: Context) -> Any:
        """The model, built for the context's start (upper bound) and floor."""

    def search(self, ctx: Context, model: Any) -> Found:
        """Search ``model`` within the run's limits; never raises ``OutOfTime``."""

    def extract(self, ctx: Context, model: Any) -> Schedule:
        """The schedule of the best solution ``search`` found (``Found.solution``)."""


def rules_and_heuristics(kind: str) -> list[str]:
    return SOLVERS.names(lambda s: s.kind == kind)


def best_start(
    instance: Instance, run: Run, *, heuristic: str | None = "auto", stats: Stats | None = None
) -> Result:
    """``run.hint`` if given, else the best of the registered rules and the ``heuristic``.

    Not checked here (see the module docstring). Time: the heuristic at most
    ``START_HEURISTIC``'s share of the time left (without a limit, as much as it takes
    alone: the start then scores at most what the heuristic scores alone), the rules at
    most ``START_RULES``'s. The heuristic runs first (it is the fastest at scale and always
    returns a schedule); a rule that cannot finish within its phase is skipped once some
    start exists. A failing heuristic is recorded in ``stats.extra["start_error"]``; the
    rules still give a start.
    """
    stats = stats if stats is not None else Stats()
    if run.hint is not None:  # the caller's start is taken as it is
        return run.hint
    if heuristic == "auto":
        heuristic = AUTO_HEURISTIC
    found: list[Result] = []
    if heuristic:
        spec = SOLVERS.spec(heuristic)
        LOADER.load_during(run, spec.kernels)
        try:
            if run.stop.is_set():  # its load let go: it would wait for the compile
                raise OutOfTime("stopped while its kernels loaded")
            with run.phase(START_HEURISTIC) as sub:
                got = SOLVERS.load(heuristic)(instance, sub, spec.parse_options({}))
                found.append(got)
                stats["start_heuristic_s"] = round(sub.elapsed(), 4)
                if sub.time_limit is not None and sub.expired():
                    stats["start_cut"] = f"{heuristic} stopped by its share of the time limit"
        except Exception as exc:  # noqa: BLE001 - optional improver, see docstring
            stats["start_error"] = f"{heuristic}: {exc!r}"
    skipped: list[str] = []
    with run.phase(START_RULES) as phase:
        for rule in rules_and_heuristics("rule"):
            got = SOLVERS.load(rule)(instance, phase if found else None, None)  # one must finish
            if got.status.has_schedule:
                found.append(got)
            else:
                skipped.append(rule)
    if skipped:
        stats["start_skipped"] = skipped
    found = [r for r in found if isinstance(r, Result) and r.status.has_schedule]
    if not found:
        raise SolverError(f"no start for {instance.name!r}: every rule was stopped")
    return min(found, key=lambda r: r.objective)


def floor_of(instance: Instance) -> int:
    """The cheap proved bounds (no LP), as an integer."""
    from hare_opt.bounds import lower_bound
    from hare_opt.model.result import int_bound

    return int_bound(lower_bound(instance, lp=False))


def _special(ctx: Context) -> Result | None:
    from hare_opt.solvers.special import recognise

    found = recognise(ctx.instance)
    if found is None:
        return None
    ctx.stats.special = found.kind
    ctx.stats.proved_by = ctx.stats.bound_from = f"special case {found.kind}"
    ctx.stats.schedule_from = "special"
    if not ctx.run.verify:
        return Result(
            ctx.name,
            Status.OPTIMAL,
            found.schedule,
            found.value,
            found.value,
            ctx.run.elapsed(),
            ctx.instance.name,
            ctx.stats,
        )
    report = checked_report(ctx.instance, found.schedule, None, ctx.stats)
    if not report.feasible or report.objective != found.value:
        raise SolverError(
            f"{ctx.name}: special case {found.kind!r} values {found.value} but "
            f"its schedule scores {report.objective}: {report.violations[:3]}"
        )
    return Result.checked(
        ctx.name,
        Status.OPTIMAL,
        report,
        lower_bound=found.value,
        runtime_s=ctx.run.elapsed(),
        stats=ctx.stats,
    )


def run_exact(instance: Instance, run: Run, options: ExactOptions, backend: Backend) -> Result:
    """Solve with ``backend`` under the template (see the module docstring)."""
    stats = Stats()
    ctx = Context(
        backend.name,
        instance,
        run,
        options,
        start=None,  # type: ignore[arg-type]
        floor=0,
        stats=stats,
    )
    if options.special and (done := _special(ctx)) is not None:
        return done
    try:
        backend.fits(instance, options)
    except CapacityError as exc:
        raise suggest(instance, backend.name, exc) from None
    ctx.floor = floor_of(instance)
    ctx.start = start = best_start(instance, run, heuristic=options.start_heuristic, stats=stats)
    stats.start = "given" if start is run.hint else start.solver
    stats.start_objective = int(start.objective)
    run.report(backend.name, incumbent=start.objective, bound=ctx.floor, note="start")
    if ctx.floor >= start.objective:
        stats.quick = "bounds"
        return leave(ctx, backend, None, Found(bound=ctx.floor))
    model = None
    try:  # on the run's clock, as runtime_s: kernels loaded meanwhile are left out of both
        t0 = run.elapsed()
        model = backend.build(ctx)
        stats.build_s = round(run.elapsed() - t0, 4)
        t0 = run.elapsed()
        found = backend.search(ctx, model)
        stats.search_s = round(run.elapsed() - t0, 4)
    except OutOfTime as exc:  # no time for the model: the start is the answer
        stats.stopped_in = "model building"
        found = Found(stopped="interrupted" if run.stop.is_set() else str(exc))
    return leave(ctx, backend, model, found)


def leave(ctx: Context, backend: Backend, model: Any, found: Found) -> Result:
    """The one check of the schedule that leaves, its bound and its status."""
    stats, start, inst = ctx.stats, ctx.start, ctx.instance
    for k, v in found.stats.items():
        stats[k] = v
    if found.stopped:
        stats.stopped = stats.stopped or found.stopped
    own = found.solution and (
        found.status == Status.OPTIMAL or found.value is None or found.value <= start.objective
    )
    schedule = backend.extract(ctx, model) if own else start.schedule
    if (
        own
        and found.status != Status.OPTIMAL
        and found.value is None
        and score(inst, schedule) > start.objective
    ):  # no value: never worse than the start
        own, schedule = False, start.schedule
    who = found.source or backend.name if own else "start"
    report = None
    if ctx.run.verify:
        known = start.report if schedule is start.schedule else found.report
        report = checked_report(inst, schedule, known, stats)
        if not report.feasible or report.objective is None:
            raise SolverError(
                f"{ctx.name}: the schedule from {who} is infeasible for "
                f"{inst.name!r}: " + "; ".join(report.violations[:5])
            )
        objective = report.objective
    else:  # a phase of a larger solve: whatever leaves that solve is checked there
        objective = score(inst, schedule)
    stats.schedule_from = who
    # integers while compared with the objective: a float above 2^53 rounds, and could
    # then sit above an integer objective it does not exceed
    bound = int(ctx.floor)
    stats.bound_from = "bounds"
    if bound > objective:
        raise SolverError(
            f"{ctx.name}: the proved bounds give {bound}, above the checked "
            f"objective {objective}: a bound is wrong (bounds.BOUNDS)"
        )
    if found.bound is not None and ceil_bound(found.bound) > bound:
        bound = ceil_bound(found.bound)
        stats.bound_from = found.bound_from or found.source or backend.name
    if own and found.status == Status.OPTIMAL:
        if found.value is not None and abs(found.value - objective) > 1e-6:
            raise SolverError(
                f"{ctx.name}: proved optimum {found.value} but its schedule scores {objective}"
            )
        if bound > objective:
            raise SolverError(f"{ctx.name}: proved bound {bound} above its objective {objective}")
        stats.proved_by = found.source or backend.name
        status, lower = Status.OPTIMAL, objective
    elif bound >= objective:
        stats.proved_by = stats.proved_by or (
            "bounds" if stats.bound_from == "bounds" else f"{stats.bound_from} (bound)"
        )
        status, lower = Status.OPTIMAL, objective
    else:  # the proved bound, an integer as every bound that leaves a solve
        status, lower = Status.FEASIBLE, bound
    if report is None:
        return Result(
            ctx.name, status, schedule, objective, lower, ctx.run.elapsed(), inst.name, stats
        )
    ctx.run.report(backend.name, incumbent=objective, bound=lower)
    return Result.checked(
        ctx.name, status, report, lower_bound=lower, runtime_s=ctx.run.elapsed(), stats=stats
    )


def score(instance: Instance, schedule: Schedule) -> int:
    """The objective of a schedule assumed feasible (its last rounds' barriers, weighted):
    what a phase of a solve reports; the checker judges whatever leaves the solve."""
    job = schedule.job_indices(instance)
    gpu = schedule.gpu_indices(instance)
    last = schedule.round == instance.rounds[job] - 1
    ready = schedule.end + instance.sync[job, gpu]
    done = np.zeros(instance.num_jobs, dtype=np.int64)
    np.maximum.at(done, job[last], ready[last])
    return int(sum(int(w) * int(c) for w, c in zip(instance.weight, done)))
