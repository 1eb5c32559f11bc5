"""``solve_portfolio``: CP-SAT, the MILP and the branch and bound at once, sharing what they prove.

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

The backends run in child interpreters (neither OR-Tools nor HiGHS is safe to
fork with threads running); the instance travels as its JSON document and the
results come back pickled. When one backend proves optimality the other is
stopped. A backend that fails is reported in ``stats``; the portfolio fails
only if every backend does.
"""

from __future__ import annotations

import pickle
import queue
import subprocess
import sys
import threading
import time
from typing import Any

from hare_opt.checker import check
from hare_opt.io.json_io import instance_from_dict, instance_to_dict
from hare_opt.model import Instance, Result
from hare_opt.solvers.base import SolverError, solve

#: Share of the time limit for the in-process CP-SAT phase (and its cap in seconds).
QUICK_SHARE, QUICK_CAP_S = 0.05, 2.0
#: Seconds a backend may overrun the limit (process start, model build) before it is stopped.
GRACE_S = 15.0
BACKENDS = ("cpsat", "milp", "bnb")


def _worker() -> None:
    """Child process (``python -m hare_opt.solvers.portfolio.solver``): read (backend,
    instance document, time limit, options) pickled on stdin, write ("ok", Result) or
    ("error", text) pickled on stdout."""
    name, doc, time_limit, options = pickle.load(sys.stdin.buffer)
    try:
        out = ("ok", solve(instance_from_dict(doc), name, time_limit=time_limit, **options))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
        out = ("error", f"{type(exc).__name__}: {exc}")
    sys.stdout.buffer.write(pickle.dumps(out))


def _start(name: str, doc: dict, time_limit: float | None, options: dict, done: queue.Queue
           ) -> tuple[subprocess.Popen, threading.Thread, list]:
    """A backend in its own interpreter (not fork: OR-Tools and HiGHS keep threads; not
    multiprocessing's spawn: it re-imports the caller's script). A thread collects its output."""
    proc = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    box: list = []

    def talk() -> None:
        out, err = proc.communicate(pickle.dumps((name, doc, time_limit, options)))
        try:
            box.append(pickle.loads(out))
        except Exception:  # noqa: BLE001 - a crashed or stopped child
            box.append(("error", f"exit code {proc.returncode}: {err.decode()[-300:]}"))
        done.put(name)

    thread = threading.Thread(target=talk, daemon=True)
    thread.start()
    return proc, thread, box


def _brief(result: Result) -> dict[str, Any]:
    return {"status": result.status, "objective": result.objective,
            "lower_bound": result.lower_bound, "runtime_s": round(result.runtime_s, 3)}


def _combine(instance: Instance, results: dict[str, Result], t0: float, stats: dict) -> Result:
    best = min(results.values(), key=lambda r: r.objective)
    bound = max((r.lower_bound for r in results.values() if r.lower_bound is not None),
                default=None)
    proved = [n for n, r in results.items() if r.status == "optimal"]
    status = "optimal" if proved or (bound is not None and bound >= best.objective) else "feasible"
    if status == "optimal":
        bound = best.objective
    stats.update(proved_by=proved[0] if proved else None, schedule_from=best.solver)
    return Result("portfolio", status, best.schedule, best.objective,
                  None if bound is None else min(bound, best.objective),
                  time.perf_counter() - t0, instance.name, stats)


def solve_portfolio(instance: Instance, *, time_limit: float | None = None,
                    cpsat: dict[str, Any] | None = None, milp: dict[str, Any] | None = None,
                    bnb: dict[str, Any] | None = None,
                    backends: tuple[str, ...] | str = BACKENDS,
                    quick: bool = True, hint: Result | None = None) -> Result:
    """Run ``backends`` in parallel (CP-SAT with one worker, the MILP with one thread,
    bnb); ``optimal`` when any proves it.

    ``cpsat`` / ``milp`` / ``bnb``: options for each backend (see their solvers).
    ``quick``: first try CP-SAT, then bnb (when among ``backends``), in-process for a
    few seconds each.
    ``hint``: a feasible result, the warm start of every run (CP-SAT checks it).
    """
    t0 = time.perf_counter()
    if isinstance(backends, str):  # "cpsat,bnb", as the command line gives it
        backends = tuple(b.strip() for b in backends.split(",") if b.strip())
    unknown = set(backends) - set(BACKENDS)
    if unknown or not backends:
        raise ValueError(f"portfolio: backends must be some of {', '.join(BACKENDS)}, "
                         f"got {backends!r}")
    stats: dict[str, Any] = {}
    results: dict[str, Result] = {}
    if hint is not None:
        report = check(instance, hint.schedule, max_messages=3)
        if not report.feasible:
            raise ValueError("hint: not a feasible schedule for this instance: "
                             + "; ".join(report.violations))
        hint = Result("hint", "feasible", hint.schedule, report.objective)
        results["hint"] = hint
    if quick:
        share = QUICK_CAP_S if time_limit is None else min(QUICK_CAP_S, QUICK_SHARE * time_limit)
        first = solve(instance, "cpsat", time_limit=share, hint=hint, **(cpsat or {}))
        stats["quick"] = _brief(first)
        if first.status == "optimal":
            first.solver, first.runtime_s = "portfolio", time.perf_counter() - t0
            first.stats.update(proved_by="quick cpsat")
            return first
        if first.status == "feasible":
            results["quick"] = first
            if hint is None or first.objective <= hint.objective:
                hint = first
        if "bnb" in backends:  # same share for bnb: it proves most small clusters in it
            try:
                second = solve(instance, "bnb", time_limit=share, hint=hint, **(bnb or {}))
            except SolverError as exc:  # too large for it: the child run will say so too
                stats["quick_bnb"] = f"{type(exc).__name__}: {exc}"
            else:
                stats["quick_bnb"] = _brief(second)
                if second.status == "optimal":
                    second.solver, second.runtime_s = "portfolio", time.perf_counter() - t0
                    second.stats.update(proved_by="quick bnb", quick=stats["quick"])
                    return second
                results["quick_bnb"] = second
                if hint is None or second.objective < hint.objective:
                    hint = second
    left = None if time_limit is None else max(0.5, time_limit - (time.perf_counter() - t0))
    doc = instance_to_dict(instance)
    # One core each. CP-SAT interleaves its subsolvers (LNS too) in its one thread: without
    # that, a single worker finds far worse schedules. The MILP's root LP is its first bound.
    opts = {"cpsat": {"num_workers": 1, "interleave_search": True, **(cpsat or {})},
            "milp": {"threads": 1, "lp_bound": False, **(milp or {})}, "bnb": dict(bnb or {})}
    runs, done = {}, queue.Queue()
    for name in backends:
        if hint is not None:
            opts[name].setdefault("hint", hint)
        runs[name] = _start(name, doc, left, opts[name], done)
    deadline = None if left is None else time.perf_counter() + left + GRACE_S
    try:
        waiting = set(backends)
        while waiting:
            timeout = None if deadline is None else max(0.0, deadline - time.perf_counter())
            try:
                name = done.get(timeout=timeout)
            except queue.Empty:
                stats.update({f"{n}_error": "stopped: no answer after the time limit"
                              for n in waiting})
                break
            waiting.discard(name)
            kind, payload = runs[name][2][0]
            if kind == "ok":
                results[name] = payload
                stats[name] = _brief(payload)
                if payload.status == "optimal":
                    break  # proved: the other run is no longer needed
            else:
                stats[f"{name}_error"] = payload
    finally:
        for proc, thread, _ in runs.values():
            if proc.poll() is None:
                proc.kill()
            thread.join(5)
    # Every instance has a schedule (run the tasks one by one), so "infeasible" is a bug.
    usable = {n: r for n, r in results.items() if r.status in ("optimal", "feasible")}
    if not usable or any(r.status == "infeasible" for r in results.values()):
        raise SolverError(f"portfolio: no backend returned a schedule for {instance.name!r}: "
                          f"{stats}")
    return _combine(instance, usable, t0, stats)


if __name__ == "__main__":
    _worker()
