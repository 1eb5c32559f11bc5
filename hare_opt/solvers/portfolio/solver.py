"""``solve_portfolio``: the portfolio's backends at once, sharing what they prove.

Why: the formulations fail on different instances. CP-SAT finds good schedules fast
but its bound for a weighted sum of completion times stays near the critical path; the
MILP's time-indexed LP bound is strong but its search is slow; the branch and bound
(``bnb``) proves small clusters with switching overheads that both leave open, and
little else. Run in parallel, they prove whatever any proves within the limit; the best
schedule is the best of all and the bound the highest.

Under the exact template (``solvers/exact.py``) the portfolio computes the start once;
its *search* first runs the members marked ``portfolio_quick`` in-process for a few
seconds each, in registration order (CP-SAT, then bnb), which settles the easy
instances without starting processes, each starting from the best schedule so far. Then
every member runs in a child interpreter (neither OR-Tools nor HiGHS is safe to fork
with threads running) with the best schedule as its start; the instance travels as its
JSON document, the results (with their check reports and typed statistics) come back
pickled. When one member proves optimality the others are stopped. A member that fails
is reported in ``stats``; the start remains the answer if every member fails.
Three runs share the two cores (docs/formulations.md, "Portfolio", says what that costs).
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from hare_opt.io.json_io import instance_from_dict, instance_to_dict
from hare_opt.model import HareOptError, Instance, Result, Schedule, SolverError, Stats, Status
from hare_opt.model.options import Run
from hare_opt.model.phases import declare
from hare_opt.solvers import incumbent
from hare_opt.solvers.base import SOLVERS, checked_report, solve
from hare_opt.solvers.exact import Context, Found, run_exact
from hare_opt.solvers.incumbent import SharedIncumbent
from hare_opt.solvers.kernels import LOADER
from hare_opt.solvers.portfolio.options import PortfolioOptions, fits, takes
from hare_opt.util import children, interrupt, version
from hare_opt.util.registry import resolve

QUICK = declare(
    "portfolio.quick",
    0.05,
    cap_s=2.0,
    of_limit=True,
    doc="each in-process quick member of the portfolio (with too little time for child "
    "processes, the members share what is left instead)",
)
#: Seconds kept back from the backends' deadline for their last steps (the check of
#: their schedule, sending it, exiting); after the limit itself they are asked to stop
#: (SIGTERM), and ``STOP_GRACE_S`` later killed.
RETURN_S, STOP_GRACE_S = 1.0, 3.0
#: With less time than this left after the quick phases, starting child interpreters
#: (about 2-3 s of imports each on a loaded 2-core machine) would overrun the limit:
#: the quick members share what is left in-process instead.
MIN_CHILD_S = 4.0


#: Whether ``time.perf_counter`` is the system's monotonic clock (so every process
#: reads the same one): asked once, it does not change within a process.
_PERF_IS_SYSTEM = time.get_clock_info("perf_counter").implementation.startswith("clock_gettime")


def shared_clock() -> float:
    """A clock the portfolio and its children read alike: the run's own
    (``time.perf_counter``) where it is the system's monotonic clock, else wall time."""
    return time.perf_counter() if _PERF_IS_SYSTEM else time.time()


def _worker() -> None:
    """Child process (``children.child_command``, else ``python -m
    hare_opt.solvers.portfolio.solver``): read (backend,
    instance document, shared options, backend options, deadline, the board's path in the
    portfolio's private folder) pickled on stdin (a pipe only the parent writes), write
    ("ok", Result) or ("error", text) pickled on stdout.

    The deadline is absolute, on the run's clock (``time.perf_counter``: on Linux the
    system's ``CLOCK_MONOTONIC``, which every process reads alike; elsewhere
    ``shared_clock`` falls back to the wall clock), so the seconds the child spends starting
    up count against the limit. The child dies with its parent (``lifeline``), and a
    SIGTERM from the parent stops its search, which then returns its best schedule."""
    name, doc, shared, options, deadline, board = pickle.load(sys.stdin.buffer)
    incumbent.attach(board)  # internal: no option names it
    children.lifeline()  # the boot command (``children.child_command``) holds one already
    if deadline is not None:
        shared["time_limit"] = max(0.05, deadline - shared_clock())
    out: tuple[str, Result | str]
    try:
        instance = instance_from_dict(doc)
        hint = shared.get("hint")
        if hint is not None and hint.report is not None:  # checked by the parent
            hint.report.rebind(instance, hint.schedule)
        with interrupt.on_signals():  # this child is an edge: its signals stop its solve
            result = solve(instance, name, **shared, **options)
        out = ("ok", result)  # its report travels without the objects it judged
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
        out = ("error", f"{type(exc).__name__}: {exc}")
    # the package modules it ran, for the parent's cache key (``util.version``)
    sys.stdout.buffer.write(pickle.dumps((*out, version.loaded_modules())))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # the answer is out; tearing down OR-Tools, HiGHS and numba takes seconds


def _start(
    name: str,
    doc: dict,
    shared: dict,
    options: dict,
    done: queue.Queue,
    deadline: float | None = None,
    board: str | None = None,
) -> tuple[subprocess.Popen, threading.Thread, list]:
    """A backend in its own interpreter (not fork: OR-Tools and HiGHS keep threads; not
    multiprocessing's spawn: it re-imports the caller's script), in its own process group
    (a terminal's Ctrl-C reaches the parent, which stops the children and collects their
    schedules). A thread collects its output."""
    proc = subprocess.Popen(
        children.child_command(f"{__name__}:_worker"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **children.spawn_options(),
    )
    children.track(proc.pid)
    box: list = []

    def talk() -> None:
        out, err = proc.communicate(pickle.dumps((name, doc, shared, options, deadline, board)))
        try:
            kind, payload, modules = pickle.loads(out)
            version.note_modules(modules)  # code the child ran counts as the parent's
            box.append((kind, payload))
        except Exception:  # noqa: BLE001 - a crashed or stopped child
            box.append(("error", f"exit code {proc.returncode}: {err.decode()[-300:]}"))
        done.put(name)

    thread = threading.Thread(target=talk, daemon=True)
    thread.start()
    return proc, thread, box


def _brief(result: Result) -> dict[str, Any]:
    """A member's result as the portfolio's own is printed (``Result.summary``)."""
    return result.summary()


def members(
    opts: PortfolioOptions, *, quick: bool = False, instance: Instance | None = None
) -> list[str]:
    """The chosen members in registration order (``quick``: those run in-process first;
    with ``instance``, those whose ``portfolio_first`` holds for it go first)."""
    names = [
        s.name
        for s in SOLVERS
        if s.portfolio and s.name in opts.backends and (s.portfolio_quick or not quick)
    ]
    if instance is None:
        return names

    def first(name: str) -> bool:
        test = SOLVERS.spec(name).portfolio_first
        return test is not None and bool(resolve(test)(instance))

    return sorted(names, key=lambda n: not first(n))


def _own(name: str, opts: PortfolioOptions) -> dict[str, Any]:
    """The caller's options for one member; ``special=False`` reaches every member."""
    off = not opts.special and "special" in SOLVERS.spec(name).options_class().names()
    return {**({"special": False} if off else {}), **opts.backend_options.get(name, {})}


@dataclasses.dataclass
class _Runs:
    """What the members returned (by name) and what went wrong."""

    results: dict[str, Result] = dataclasses.field(default_factory=dict)
    best: Result | None = None


class PortfolioBackend:
    """The portfolio under the exact template (see the module docstring)."""

    name = "portfolio"

    def fits(self, instance: Instance, options: PortfolioOptions) -> None:
        fits(instance, options.backends)

    def build(self, ctx: Context) -> _Runs:
        return _Runs()

    def search(self, ctx: Context, runs: _Runs) -> Found:
        opts, run = ctx.options, ctx.run
        short = (
            not opts.deterministic
            and run.time_limit is not None
            and run.time_limit < MIN_CHILD_S + 2 * (QUICK.cap_s or 0.0)
        )
        if (opts.quick and not opts.deterministic) or short:
            done = self._quick(ctx, runs, short)
            if done is not None:
                return done
        left = run.remaining(floor=0.5)
        if not (
            run.stop.is_set()
            or short
            or (left is not None and left < MIN_CHILD_S and not opts.deterministic)
        ):
            done = self._children(ctx, runs, left)
            if done is not None:
                return done
        return self._combine(ctx, runs)

    def _quick(self, ctx: Context, runs: _Runs, short: bool) -> Found | None:
        opts, run, instance = ctx.options, ctx.run, ctx.instance
        quick = [n for n in members(opts, quick=True, instance=instance) if takes(n, instance)]
        for pos, name in enumerate(quick):
            if run.stop.is_set():
                break
            last = pos + 1 == len(quick)
            spec = SOLVERS.spec(name)
            LOADER.load_during(run, spec.kernels)
            if run.stop.is_set():  # a load let go: the member would wait for its compile
                break
            # the member's first import (OR-Tools: about a second on a loaded machine) is
            # the portfolio's work, inside its limit: done before the member's share of
            # what is left is set, so the share does not overrun by it
            fn = SOLVERS.load(name)
            # too little time for children: the quick members share what is left
            left = float(run.remaining(0.05) or 0.0) * (1.0 if last else 0.5)
            try:  # the members' own defaults here (two threads), not the children's
                options = spec.parse_options(_own(name, opts))
                with run.phase(
                    QUICK, limit=left if short else "declared", hint=ctx.start, verify=False
                ) as sub:  # what leaves is checked once
                    found = fn(instance, sub, options)
            except HareOptError as exc:  # e.g. too large for bnb: its child run says so too
                ctx.stats[f"quick_{name}"] = f"{type(exc).__name__}: {exc}"
                continue
            ctx.stats[f"quick_{name}"] = _brief(found)
            runs.results[f"quick {name}"] = found
            if found.status == Status.OPTIMAL:
                return self._proved(ctx, runs, f"quick {name}")
            if found.status.has_schedule:
                ctx.offer(found, f"quick {name}")
        return None

    def _proved(self, ctx: Context, runs: _Runs, name: str) -> Found:
        runs.best = best = runs.results[name]
        return Found(
            Status.OPTIMAL,
            solution=True,
            value=best.objective,
            bound=best.lower_bound,
            source=name,
            report=best.report,
        )

    def _children(self, ctx: Context, runs: _Runs, left: float | None) -> Found | None:
        opts, run, instance, stats = ctx.options, ctx.run, ctx.instance, ctx.stats
        doc = instance_to_dict(instance)
        # the children's answers are checked here, once, if they leave the portfolio
        shared = {
            "seed": run.seed,
            "threads": 1,
            "log": run.log,
            "hint": ctx.start,
            "verify_result": False,
        }
        procs: dict[str, tuple[subprocess.Popen, threading.Thread, list]] = {}
        done: queue.Queue[str] = queue.Queue()
        # Deterministic runs end on their work limits; the wall clock is only a safety net
        # (the parent's, below), and the result says when it had to act.
        wall_deadline = (
            None
            if left is None or opts.deterministic
            else shared_clock() + max(0.5 * left, left - RETURN_S)
        )
        names = members(opts)
        run.report("portfolio", note=f"running {', '.join(names)}")
        folder = tempfile.mkdtemp(prefix="hare-portfolio-")
        board = SharedIncumbent(Path(folder) / "incumbent.json")  # private: mode 0700
        proved = None
        for name in names:
            spec = SOLVERS.spec(name)
            options = {**spec.portfolio_options, **_own(name, opts)}
            procs[name] = _start(
                name, doc, shared, options, done, wall_deadline, str(board.path)
            )  # cpsat and bnb use it
        deadline = None if left is None else time.perf_counter() + left
        stopping: float | None = None  # when the children were asked to stop
        try:
            waiting = set(names)
            while waiting:
                now = time.perf_counter()
                if stopping is None and (
                    run.stop.is_set() or (deadline is not None and now >= deadline)
                ):
                    for n in waiting:  # each returns its best schedule so far
                        children.kill_group(procs[n][0].pid, signal.SIGTERM)
                    stopping = now
                if stopping is not None and now >= stopping + STOP_GRACE_S:
                    stats.update(
                        {
                            f"{n}_error": "killed: no answer after being asked to stop"
                            for n in waiting
                        }
                    )
                    break
                try:
                    name = done.get(timeout=0.1)
                except queue.Empty:
                    continue
                waiting.discard(name)
                kind, payload = procs[name][2][0]
                if kind != "ok":
                    stats[f"{name}_error"] = payload
                    continue
                if payload.report is not None:  # checked in the child: the verdict travels
                    payload.report.rebind(instance, payload.schedule)
                runs.results[name] = payload
                stats[name] = _brief(payload)
                run.report(
                    name,
                    incumbent=payload.objective if payload.status.has_schedule else None,
                    bound=payload.lower_bound,
                    note=f"{name} done",
                )
                if not opts.deterministic and (
                    payload.status == Status.OPTIMAL or self._met(runs, board)
                ):
                    if payload.status == Status.OPTIMAL:
                        proved = name
                    break  # proved: the other runs are no longer needed
            if (
                opts.deterministic
                and stopping is not None
                and deadline is not None
                and stopping >= deadline
            ):
                stats["wall_clock_limited"] = True  # the safety net acted: not reproducible
        finally:
            for proc, thread, _ in procs.values():
                children.kill_group(proc.pid)  # the child's own children (CBC) too
                children.untrack(proc.pid)
                thread.join(5)
            self._board(ctx, runs, board)
            shutil.rmtree(folder, ignore_errors=True)
        return None if proved is None else self._proved(ctx, runs, proved)

    @staticmethod
    def _met(runs: _Runs, board: SharedIncumbent) -> bool:
        """Whether some run's proved bound already meets the best schedule anyone has."""
        bound = max(
            (r.lower_bound for r in runs.results.values() if r.lower_bound is not None),
            default=None,
        )
        best = min(
            [r.objective for r in runs.results.values() if r.status.has_schedule]
            + [v for v in (board.peek(),) if v is not None],
            default=None,
        )
        return bound is not None and best is not None and bound >= best

    @staticmethod
    def _board(ctx: Context, runs: _Runs, board: SharedIncumbent) -> None:
        have = [r.objective for r in runs.results.values() if r.status.has_schedule]
        found = from_board(ctx.instance, board, ctx.stats, min(have + [ctx.start.objective]))
        if found is not None:
            runs.results["shared"] = found

    def _combine(self, ctx: Context, runs: _Runs) -> Found:
        """The best schedule and the highest proved bound of all runs (a bound of one run
        that meets another's schedule proves it: the template says so)."""
        usable = {n: r for n, r in runs.results.items() if r.status.has_schedule}
        if any(r.status == Status.INFEASIBLE for r in runs.results.values()):
            raise SolverError(
                f"portfolio: a member claims {ctx.instance.name!r} has no "
                f"schedule: {dict(ctx.stats)}"
            )
        bounds = {
            n: float(r.lower_bound) for n, r in runs.results.items() if r.lower_bound is not None
        }
        bound = max(bounds.values(), default=None)
        bound_from = None if bound is None else max(bounds, key=bounds.__getitem__)
        if not usable:
            return Found(bound=bound, bound_from=bound_from)
        name = min(usable, key=lambda n: usable[n].objective)
        runs.best = best = usable[name]
        return Found(
            Status.FEASIBLE,
            solution=True,
            value=best.objective,
            bound=bound,
            source=name,
            bound_from=bound_from,
            report=best.report,
        )

    def extract(self, ctx: Context, runs: _Runs) -> Schedule:
        assert runs.best is not None
        return runs.best.schedule


def from_board(
    instance: Instance, board: SharedIncumbent, stats: Stats, below: float
) -> Result | None:
    """The shared schedule as a checked result when it scores below ``below`` (a run
    offers it while it runs, so a run stopped early still contributes it): checked, as
    it may leave; a false claim is recorded in ``stats["shared_error"]``."""
    found = board.schedule(instance)
    if found is None or found[0] >= below:
        return None
    report = checked_report(instance, found[1], None, stats)
    if not report.feasible or report.objective != found[0]:
        stats["shared_error"] = f"claimed {found[0]}: {report.violations[:3]}"
        return None
    stats["shared"] = found[0]
    return Result.checked("shared", Status.FEASIBLE, report)


def solve_portfolio(
    instance: Instance, run: Run | None = None, options: PortfolioOptions | None = None
) -> Result:
    """Run the members (quick ones first, in-process; then all in parallel, one thread
    each); ``optimal`` when any proves it or a bound of one meets another's schedule.

    ``backend_options``: options for each member (see their solvers); the run's hint (else
    the template's start) is the start of every run.
    """
    return run_exact(instance, run or Run(), options or PortfolioOptions(), PortfolioBackend())


if __name__ == "__main__":
    _worker()
