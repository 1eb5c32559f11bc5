"""``solve_portfolio``: the portfolio's backends at once, sharing what they prove.

Why: the formulations fail on different instances. CP-SAT finds good
schedules fast but its bound for a weighted sum of completion times stays
near the critical path; the MILP's time-indexed LP bound is strong but its
search is slow; the branch and bound (``bnb``) proves small clusters with
switching overheads that both leave open, and little else. Run in parallel,
they prove whatever any proves within the limit; the best schedule is the best
of all and the bound the highest. A short in-process CP-SAT phase first settles
the easy instances without starting processes (then a short bnb phase, which
proves most small clusters), and the best schedule so far is the warm start
(for the MILP also the horizon, for bnb the incumbent) of every run. Three runs
share the two cores (docs/formulations.md, "Portfolio", says what that costs).

The members are the registered solvers marked ``portfolio=True``. They run in
child interpreters (neither OR-Tools nor HiGHS is safe to fork with threads
running); the instance travels as its JSON document and the results come back
pickled. When one backend proves optimality the others are stopped. A backend
that fails is reported in ``stats``; the portfolio fails only if every backend does.
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

from hare_opt.checker import report_for
from hare_opt.io.json_io import instance_from_dict, instance_to_dict
from hare_opt.model import Instance, Result, SolverError, Status
from hare_opt.model.options import Run
from hare_opt.solvers.base import SOLVERS, solve
from hare_opt.solvers.incumbent import SharedIncumbent
from hare_opt.solvers.portfolio.options import PortfolioOptions
from hare_opt.solvers.special import at_once
from hare_opt.solvers.start import best_start
from hare_opt.util import interrupt, progress

#: Share of the time limit for each in-process quick phase (and its cap in seconds).
QUICK_SHARE, QUICK_CAP_S = 0.05, 2.0
#: Seconds kept back from the backends' deadline for their last steps (the check of
#: their schedule, sending it, exiting); after the limit itself they are asked to stop
#: (SIGTERM), and ``STOP_GRACE_S`` later killed.
RETURN_S, STOP_GRACE_S = 1.0, 3.0
#: With less time than this left after the quick phases, starting child interpreters
#: (about 2-3 s of imports each on the development machine) would overrun the limit:
#: CP-SAT goes on in-process instead.
MIN_CHILD_S = 4.0
#: What each backend gets in the portfolio unless its options say otherwise: one core each.
#: CP-SAT interleaves its subsolvers (LNS too) in its one thread: without that, a single
#: worker finds far worse schedules. The MILP's root LP is its first bound.
DEFAULTS: dict[str, dict[str, Any]] = {"cpsat": {"interleave_search": True},
                                       "milp": {"lp_bound": False}}


def _worker() -> None:
    """Child process (``interrupt.child_command``, else ``python -m
    hare_opt.solvers.portfolio.solver``): read (backend,
    instance document, shared options, backend options, deadline) pickled on stdin, write
    ("ok", Result) or ("error", text) pickled on stdout.

    The deadline is absolute (``time.time()``), so the seconds the child spends starting
    up count against the limit. The child dies with its parent (``lifeline``), and a
    SIGTERM from the parent stops its search, which then returns its best schedule."""
    name, doc, shared, options, deadline = pickle.load(sys.stdin.buffer)
    interrupt.lifeline()  # the boot command (``interrupt.child_command``) holds one already
    if deadline is not None:
        shared["time_limit"] = max(0.05, deadline - time.time())
    out: tuple[str, Result | str]
    try:
        with interrupt.handling("soft"):
            result = solve(instance_from_dict(doc), name, **shared, **options)
        result.report = None  # reports hold the instance; the parent checks what it keeps
        out = ("ok", result)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
        out = ("error", f"{type(exc).__name__}: {exc}")
    sys.stdout.buffer.write(pickle.dumps(out))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # the answer is out; tearing down OR-Tools, HiGHS and numba takes seconds


def _start(name: str, doc: dict, shared: dict, options: dict, done: queue.Queue,
           deadline: float | None = None) -> tuple[subprocess.Popen, threading.Thread, list]:
    """A backend in its own interpreter (not fork: OR-Tools and HiGHS keep threads; not
    multiprocessing's spawn: it re-imports the caller's script), in its own process group
    (a terminal's Ctrl-C reaches the parent, which stops the children and collects their
    schedules). A thread collects its output."""
    proc = subprocess.Popen(interrupt.child_command(f"{__name__}:_worker"),
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            **interrupt.spawn_options())
    interrupt.track(proc.pid)
    box: list = []

    def talk() -> None:
        out, err = proc.communicate(pickle.dumps((name, doc, shared, options, deadline)))
        try:
            box.append(pickle.loads(out))
        except Exception:  # noqa: BLE001 - a crashed or stopped child
            box.append(("error", f"exit code {proc.returncode}: {err.decode()[-300:]}"))
        done.put(name)

    thread = threading.Thread(target=talk, daemon=True)
    thread.start()
    return proc, thread, box


def _brief(result: Result) -> dict[str, Any]:
    return {"status": str(result.status), "objective": result.objective,
            "lower_bound": result.lower_bound, "runtime_s": round(result.runtime_s, 3)}


def _combine(instance: Instance, run: Run, results: dict[str, Result], stats: dict) -> Result:
    best = min(results.values(), key=lambda r: r.objective)
    bound = max((r.lower_bound for r in results.values() if r.lower_bound is not None),
                default=None)
    proved = [n for n, r in results.items() if r.status == Status.OPTIMAL]
    optimal = bool(proved) or (bound is not None and bound >= best.objective)
    if not proved and optimal:  # one run's bound meets another run's schedule
        bounded = {n: float(r.lower_bound) for n, r in results.items()
                   if r.lower_bound is not None}
        proved = [max(bounded, key=bounded.__getitem__) + " (bound)"]
    stats.update(proved_by=proved[0] if proved else None, schedule_from=best.solver)
    return Result("portfolio", Status.OPTIMAL if optimal else Status.FEASIBLE, best.schedule,
                  best.objective,
                  best.objective if optimal or bound is None else min(bound, best.objective),
                  run.elapsed(), instance.name, stats, best.report)


def _met(results: dict[str, Result], board: SharedIncumbent) -> bool:
    """Whether some run's proved bound already meets the best schedule anyone has."""
    bound = max((r.lower_bound for r in results.values() if r.lower_bound is not None),
                default=None)
    best = min([r.objective for r in results.values() if r.status.has_schedule]
               + [v for v in (board.peek(),) if v is not None], default=None)
    return bound is not None and best is not None and bound >= best


def _from_board(instance: Instance, board: SharedIncumbent, stats: dict) -> Result | None:
    """The shared schedule as a checked result (a run offers it while it runs, so a run
    stopped early still contributes it), or None."""
    found = board.schedule(instance)
    if found is None:
        return None
    report = report_for(instance, found[1])
    if not report.feasible or report.objective != found[0]:
        stats["shared_error"] = f"claimed {found[0]}: {report.violations[:3]}"
        return None
    stats["shared"] = found[0]
    return Result.checked("shared", Status.FEASIBLE, report)


def _options(name: str, opts: PortfolioOptions) -> dict[str, Any]:
    return {**DEFAULTS.get(name, {}), **_own(name, opts)}


def _own(name: str, opts: PortfolioOptions) -> dict[str, Any]:
    """The caller's options for one backend; ``special=False`` reaches every backend."""
    off = not opts.special and "special" in SOLVERS.spec(name).options_class().names()
    return {**({"special": False} if off else {}), **opts.backend_options.get(name, {})}


def solve_portfolio(instance: Instance, run: Run | None = None,
                    options: PortfolioOptions | None = None) -> Result:
    """Run ``backends`` in parallel (one thread each); ``optimal`` when any proves it.

    ``backend_options``: options for each backend (see their solvers). ``quick``: first
    try CP-SAT, then bnb (when among ``backends``), in-process for a few seconds each.
    The run's hint is the warm start of every run.
    """
    run = run or Run()
    opts = options or PortfolioOptions()
    if opts.special and (easy := at_once(instance, run, "portfolio")) is not None:
        return easy
    stats: dict[str, Any] = {}
    results: dict[str, Result] = {}
    hint = run.hint
    if hint is not None:
        results["hint"] = hint
    # bnb first: it proves small clusters in milliseconds, and CP-SAT then starts from
    # its schedule when it does not
    quick = [b for b in ("bnb", "cpsat") if b == "cpsat" or b in opts.backends]
    # Too short a limit for child interpreters: the in-process phases share all of it.
    short = (not opts.deterministic and run.time_limit is not None
             and run.time_limit < MIN_CHILD_S + 2 * QUICK_CAP_S)
    if (opts.quick and not opts.deterministic) or short:
        for pos, backend in enumerate(quick):
            last = pos + 1 == len(quick)
            share = (float(run.remaining(0.05) or 0.0) * (1.0 if last else 0.5) if short
                     else QUICK_CAP_S if run.time_limit is None
                     else min(QUICK_CAP_S, QUICK_SHARE * run.time_limit))
            if run.stop.is_set():
                break
            try:  # the backends' own defaults here (two threads), not the children's
                found = solve(instance, backend, time_limit=share, hint=hint, seed=run.seed,
                              threads=run.threads, log=run.log, stop=run.stop,
                              **_own(backend, opts))
            except SolverError as exc:  # e.g. too large for bnb: its child run says so too
                stats[f"quick_{backend}"] = f"{type(exc).__name__}: {exc}"
                continue
            stats[f"quick_{backend}"] = _brief(found)
            if found.status == Status.OPTIMAL:
                found.solver, found.runtime_s = "portfolio", run.elapsed()
                found.stats.update(proved_by=f"quick {backend}",
                                   **{k: v for k, v in stats.items() if k.startswith("quick")})
                return found
            if found.status == Status.FEASIBLE:
                results[f"quick_{backend}"] = found
                if hint is None or found.objective < hint.objective or (
                        backend == "cpsat" and found.objective <= hint.objective):
                    hint = found
    left = run.remaining(floor=0.5)
    if run.stop.is_set() or short or (left is not None and left < MIN_CHILD_S
                                      and not opts.deterministic):
        # stopped, or the quick phases used the limit (too short for children)
        usable = {n: r for n, r in results.items() if r.status.has_schedule}
        if not usable:
            raise SolverError(f"portfolio: no schedule for {instance.name!r}: {stats}")
        return _combine(instance, run, usable, stats)
    doc = instance_to_dict(instance)
    shared = {"seed": run.seed, "threads": 1, "log": run.log}
    runs: dict[str, tuple[subprocess.Popen, threading.Thread, list]] = {}
    done: queue.Queue[str] = queue.Queue()
    # The report holds the instance (not picklable, and the child checks the hint anyway).
    sent = None if hint is None else dataclasses.replace(hint, report=None)
    # Deterministic runs end on their work limits; the wall clock is only a safety net
    # (the parent's, below), and the result says when it had to act.
    wall_deadline = (None if left is None or opts.deterministic
                     else time.time() + max(0.5 * left, left - RETURN_S))
    progress.report("portfolio", incumbent=None if hint is None else hint.objective,
                    note=f"running {', '.join(opts.backends)}")
    folder = tempfile.mkdtemp(prefix="hare-portfolio-")
    board = SharedIncumbent(Path(folder) / "incumbent.pkl")
    for name in opts.backends:
        extra = ({"incumbent": str(board.path)} if "incumbent" in
                 SOLVERS.spec(name).options_class().names() else {})
        runs[name] = _start(name, doc, {**shared, "hint": sent},
                            {**_options(name, opts), **extra}, done, wall_deadline)
    deadline = None if left is None else time.perf_counter() + left
    stopping: float | None = None  # when the children were asked to stop
    try:
        waiting = set(opts.backends)
        while waiting:
            now = time.perf_counter()
            if stopping is None and (run.stop.is_set() or (deadline is not None
                                                           and now >= deadline)):
                for n in waiting:  # each returns its best schedule so far
                    interrupt.kill_group(runs[n][0].pid, signal.SIGTERM)
                stopping = now
            if stopping is not None and now >= stopping + STOP_GRACE_S:
                stats.update({f"{n}_error": "killed: no answer after being asked to stop"
                              for n in waiting})
                break
            try:
                name = done.get(timeout=0.1)
            except queue.Empty:
                continue
            waiting.discard(name)
            kind, payload = runs[name][2][0]
            if kind == "ok":
                results[name] = payload
                stats[name] = _brief(payload)
                progress.report(name, incumbent=payload.objective, bound=payload.lower_bound,
                                note=f"{name} done")
                if not opts.deterministic and (payload.status == Status.OPTIMAL
                                               or _met(results, board)):
                    break  # proved: the other runs are no longer needed
            else:
                stats[f"{name}_error"] = payload
        if opts.deterministic and stopping is not None and deadline is not None \
                and stopping >= deadline:
            stats["wall_clock_limited"] = True  # the safety net acted: not reproducible
    finally:
        for proc, thread, _ in runs.values():
            interrupt.kill_group(proc.pid)  # the child's own children (CBC) too
            interrupt.untrack(proc.pid)
            thread.join(5)
        posted = _from_board(instance, board, stats)
        shutil.rmtree(folder, ignore_errors=True)
    if posted is not None:
        results["shared"] = posted
    # Every instance has a schedule (run the tasks one by one), so "infeasible" is a bug.
    usable = {n: r for n, r in results.items() if r.status.has_schedule}
    if not usable and not any(r.status == Status.INFEASIBLE for r in results.values()):
        # every backend failed or was killed: the start all of them began from
        usable["start"] = best_start(instance, run.with_hint(hint))
        stats["schedule_from_fallback"] = True
    if not usable or any(r.status == Status.INFEASIBLE for r in results.values()):
        raise SolverError(f"portfolio: no backend returned a schedule for {instance.name!r}: "
                          f"{stats}")
    return _combine(instance, run, usable, stats)


if __name__ == "__main__":
    _worker()
