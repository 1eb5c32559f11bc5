"""Running the PuLP model on HiGHS or CBC, and reading what the backend really proved.

PuLP maps HiGHS's time limit with an incumbent (and CBC's "Stopped on time"
with one) to ``LpStatusOptimal``, so the status is taken from the backend
itself: highspy's model status and MIP dual bound, CBC's solution status.
The objective is an integer (integer weights and times), so a dual bound
within 0.5 of the incumbent proves it optimal.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import math
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import highspy
import numpy as np
import pulp

from hare_opt.model import SolverError
from hare_opt.solvers.milp.formulation import TimeIndexedModel
from hare_opt.util import children, stopping
from hare_opt.util.highs import cancel_on, quiet_banner, use_threads

Report = Callable[..., None]

ABS_GAP = 0.5  # < 1: enough to prove an integer objective optimal, robust to tolerances
#: HiGHS defaults that differ from HiGHS's own: its presolve spent up to 90% of the
#: run on these models (5-job single-GPU instances: 9 s with it, 1 s without).
HIGHS_DEFAULTS = {"presolve": "off"}


def _run(h: highspy.Highs, time_limit: float) -> None:
    h.setOptionValue("time_limit", time_limit)
    if h.run() == highspy.HighsStatus.kError:
        raise SolverError(f"HiGHS failed: model status {h.modelStatusToString(h.getModelStatus())}")


@dataclass
class Outcome:
    """What a backend run established; values are left in the PuLP variables."""

    status: str  # "optimal" | "feasible" | "none"
    objective: float | None = None
    bound: float | None = None
    lp_bound: float | None = None
    stats: dict[str, Any] = field(default_factory=dict)


def watch_highs(
    h: highspy.Highs, stop: threading.Event | None, report: Report | None = None
) -> None:
    """Interrupt HiGHS when ``stop`` is set (its interrupt callbacks poll it), and report
    new incumbents and bounds (``report(source, incumbent=, bound=)``)."""

    def poll(e: Any) -> None:
        if stop is not None and stop.is_set():
            e.interrupt()

    def improved(e: Any) -> None:
        out = e.data_out
        assert report is not None
        report("milp", incumbent=out.mip_primal_bound, bound=out.mip_dual_bound)

    h.cbSimplexInterrupt += poll
    h.cbIpmInterrupt += poll
    h.cbMipInterrupt += poll
    if report is not None:
        h.cbMipImprovingSolution += improved


def run_highs(
    m: TimeIndexedModel,
    *,
    time_limit: float | None,
    threads: int,
    msg: bool,
    start: dict[str, float] | None,
    lp_bound: bool,
    mip: bool = True,
    options: dict[str, Any] | None = None,
    stop: threading.Event | None = None,
    report: Report | None = None,
) -> Outcome:
    """Solve with highspy on the model PuLP builds; optionally the LP relaxation first.
    ``stop`` interrupts the run (the incumbent is kept, the status is then not optimal);
    it is also read between the phases, so that a stop during one skips the next. PuLP
    hands the model over in Python (seconds on large models): the exchange runs in a
    worker thread, so that a stop returns here within ``STOP_GRACE_S`` regardless."""
    out = stopping.in_worker(
        lambda: _highs(
            m,
            time_limit=time_limit,
            threads=threads,
            msg=msg,
            start=start,
            lp_bound=lp_bound,
            mip=mip,
            options=options,
            stop=stop,
            report=report,
        ),
        stop,
        "highs",
        grace=STOP_GRACE_S,
    )
    return out if out is not None else Outcome("none", stats={"backend": "highs"})


def _highs(
    m: TimeIndexedModel,
    *,
    time_limit: float | None,
    threads: int,
    msg: bool,
    start: dict[str, float] | None,
    lp_bound: bool,
    mip: bool,
    options: dict[str, Any] | None,
    stop: threading.Event | None,
    report: Report | None,
) -> Outcome:
    t0 = time.perf_counter()
    if not msg:
        quiet_banner()
    use_threads(threads)
    solver = pulp.HiGHS(
        msg=msg,
        threads=threads,
        gapRel=0.0,
        gapAbs=ABS_GAP,
        **{**HIGHS_DEFAULTS, **(options or {})},
    )
    solver.createAndConfigureSolver(m.prob)
    solver.buildSolverModel(m.prob)
    h: highspy.Highs = m.prob.solverModel
    watch_highs(h, stop, report)
    if stop is not None and stop.is_set():
        return Outcome("none", stats={"backend": "highs"})
    with cancel_on(stop, h):
        return _run_phases(
            h, m, time_limit=time_limit, t0=t0, start=start, lp_bound=lp_bound, mip=mip, stop=stop
        )


def _run_phases(
    h: highspy.Highs,
    m: TimeIndexedModel,
    *,
    time_limit: float | None,
    t0: float,
    start: dict[str, float] | None,
    lp_bound: bool,
    mip: bool,
    stop: threading.Event | None,
) -> Outcome:
    """The LP relaxation (optional), then the MIP from ``start``."""
    h.changeObjectiveOffset(float(m.constant))
    variables = m.prob.variables()
    out = Outcome(
        "none",
        stats={
            "backend": "highs",
            "n_vars": h.getNumCol(),
            "n_rows": h.getNumRow(),
            "n_nonzeros": h.getNumNz(),
        },
    )

    def remaining() -> float:
        return math.inf if time_limit is None else max(0.0, time_limit - (time.perf_counter() - t0))

    if lp_bound or not mip:
        n = h.getNumCol()
        idx = np.arange(n, dtype=np.int32)
        kinds = np.array(
            [
                int(h.getColIntegrality(i)[1])  # type: ignore[attr-defined]  # not in the stubs
                for i in range(n)
            ],
            dtype=np.uint8,
        )
        h.changeColsIntegrality(n, idx, np.zeros(n, dtype=np.uint8))
        t_lp = time.perf_counter()
        _run(h, remaining())
        out.stats["lp_s"] = round(time.perf_counter() - t_lp, 4)
        if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
            out.lp_bound = h.getInfo().objective_function_value
        h.changeColsIntegrality(n, idx, kinds)
        h.clearSolver()
    if not mip or (stop is not None and stop.is_set()):
        return out
    if start is not None:
        sol = highspy.HighsSolution()
        sol.col_value = [start.get(v.name, 0.0) for v in variables]
        sol.value_valid = True
        h.setSolution(sol)
    _run(h, remaining())
    status = h.getModelStatus()
    info = h.getInfo()
    out.stats.update(mip_status=h.modelStatusToString(status), nodes=int(info.mip_node_count))
    if math.isfinite(info.mip_dual_bound):
        out.bound = info.mip_dual_bound
    if info.primal_solution_status == 2:  # kSolutionStatusFeasible
        out.objective = info.objective_function_value
        for v, val in zip(variables, h.getSolution().col_value):
            v.varValue = val
        proved = (
            status == highspy.HighsModelStatus.kOptimal
            and out.bound is not None
            and out.objective - out.bound <= ABS_GAP + 1e-9
        )
        out.status = "optimal" if proved else "feasible"
    return out


def run_cbc(
    m: TimeIndexedModel,
    *,
    time_limit: float | None,
    threads: int,
    msg: bool,
    start: dict[str, float] | None,
    lp_bound: bool,
    options: dict[str, Any] | None = None,
    stop: threading.Event | None = None,
    report: Report | None = None,
) -> Outcome:
    """Solve with PuLP's bundled CBC; its proved status is ``sol_status == LpSolutionOptimal``.

    CBC runs as a child process (``guarded_cbc``): ``stop`` makes it return its best
    solution (SIGINT, then SIGKILL if it does not), it dies with this process, and its
    files live in a folder of this process that is removed afterwards. PuLP writes the
    model file in Python for seconds on large models, so the whole exchange runs in a
    worker thread (``stopping.in_worker``): a stop returns here within about ``STOP_GRACE_S``
    (then without CBC's answer) while the worker winds down alone, starting no CBC."""
    t0 = time.perf_counter()
    out = Outcome(
        "none",
        stats={
            "backend": "cbc",
            "n_vars": len(m.prob.variables()),
            "n_rows": m.prob.numConstraints(),
        },
    )

    def remaining() -> float | None:
        return None if time_limit is None else max(1.0, time_limit - (time.perf_counter() - t0))

    # CBC's own limit does not cover all of its work (a root LP ran on for minutes):
    # past the limit (and a grace) it is interrupted like a stop, keeping its best
    deadline = None if time_limit is None else t0 + time_limit + LIMIT_GRACE_S
    halted = threading.Event()

    def work() -> bool:
        with warnings.catch_warnings(), guarded_cbc(stop, deadline, halted) as folder:
            warnings.simplefilter("ignore")  # PULP_CBC_CMD's deprecation notice
            if lp_bound:
                cmd = pulp.PULP_CBC_CMD(mip=False, msg=msg, timeLimit=remaining())
                cmd.tmpDir = folder
                _solve(m.prob, cmd)
                if m.prob.status == pulp.LpStatusOptimal:
                    out.lp_bound = pulp.value(m.prob.objective)
            if _due(stop, deadline):
                return False
            if start is not None:
                for v in m.prob.variables():
                    v.setInitialValue(start.get(v.name, 0.0))
            cmd = pulp.PULP_CBC_CMD(
                msg=msg,
                timeLimit=remaining(),
                threads=threads,
                warmStart=start is not None,
                **(options or {}),
            )
            cmd.tmpDir = folder
            _solve(m.prob, cmd)
            return True

    # stopped: the worker starts no CBC now
    if not stopping.in_worker(work, stop, "cbc", grace=STOP_GRACE_S, deadline=deadline):
        return out
    out.stats["mip_status"] = pulp.LpSolution.get(m.prob.sol_status, str(m.prob.sol_status))
    if m.prob.sol_status == pulp.LpSolutionOptimal and not halted.is_set():
        out.status = "optimal"
    elif m.prob.sol_status in (pulp.LpSolutionIntegerFeasible, pulp.LpSolutionOptimal):
        out.status = "feasible"
    if out.status != "none":
        out.objective = pulp.value(m.prob.objective)
        if out.status == "optimal":
            out.bound = out.objective
    return out


def _solve(prob: pulp.LpProblem, cmd: Any) -> None:
    """``prob.solve(cmd)``; a CBC stopped before it wrote a solution leaves no values."""
    try:
        prob.solve(cmd)
    except pulp.PulpSolverError:
        prob.sol_status = pulp.LpSolutionNoSolutionFound


#: Folders of CBC runs are named with this prefix and the owning process id.
CBC_FOLDER = "hare-opt-cbc-"
_cbc_lock = threading.Lock()
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the CBC child between fork and exec
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def sweep_stale_folders(root: str | None = None) -> int:
    """Remove CBC folders left by processes that no longer run (killed with -9); returns
    how many. Run before every CBC solve, so what a killed run left lasts until the next.
    Only folders of this user whose driver (the pid in the name) is gone are removed: a
    live driver's, another user's and anything not named as ours are left alone."""
    base = Path(root or tempfile.gettempdir())
    removed = 0
    for folder in base.glob(f"{CBC_FOLDER}*"):
        try:
            pid = int(folder.name[len(CBC_FOLDER) :].split("-")[0])
            st = folder.lstat()
        except (ValueError, OSError):
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            continue
        try:
            os.kill(pid, 0)
            continue  # still running
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


def _due(stop: threading.Event | None, deadline: float | None) -> bool:
    """Asked to stop, or past ``deadline`` (``perf_counter``)."""
    return (stop is not None and stop.is_set()) or (
        deadline is not None and time.perf_counter() >= deadline
    )


@contextlib.contextmanager
def guarded_cbc(
    stop: threading.Event | None,
    deadline: float | None = None,
    halted: threading.Event | None = None,
) -> Iterator[str]:
    """A folder for CBC's files and a CBC that obeys ``stop`` and dies with this process.

    PuLP starts CBC with ``subprocess.Popen`` and waits for it; for the body, PuLP's
    Popen starts it in its own process group with a death signal (Linux), and a watcher
    sends it SIGINT when ``stop`` is set or ``deadline`` (``perf_counter``) has passed
    (CBC then writes its best solution and exits), SIGKILL ``STOP_GRACE_S`` later if it
    has not; no CBC starts after that. ``halted`` is set when that happened."""

    def due() -> bool:
        return _due(stop, deadline)

    from pulp.apis import coin_api

    sweep_stale_folders()
    folder = tempfile.mkdtemp(prefix=f"{CBC_FOLDER}{os.getpid()}-")
    # a worker abandoned after a stop may still be writing when the process exits; once
    # the folder is gone its writes fail, so nothing is left behind
    atexit.register(shutil.rmtree, folder, True)
    procs: list[subprocess.Popen] = []
    real: Any = subprocess  # PuLP's own, read under the lock below

    class _Shim:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        @staticmethod
        def Popen(args: Any, **kw: Any) -> subprocess.Popen:  # noqa: N802 - Popen's name
            with lock:
                if due():  # asked to stop (or out of time) while PuLP wrote
                    if halted is not None:
                        halted.set()
                    raise pulp.PulpSolverError("stopped before CBC started")
                proc = real.Popen(args, process_group=0, preexec_fn=_die_with_parent, **kw)
                children.track(proc.pid)
                procs.append(proc)
                return proc

    done = threading.Event()
    lock = threading.Lock()

    def watch() -> None:
        """Once due: SIGINT to each CBC, SIGKILL ``STOP_GRACE_S`` later."""
        asked: dict[int, float] = {}
        while not done.wait(0.05):
            if not due():
                continue
            now = time.monotonic()
            with lock:
                for proc in procs:
                    if proc.returncode is not None or (
                        proc.pid not in asked and proc.poll() is not None
                    ):
                        continue  # it had finished: its answer stands
                    if halted is not None:
                        halted.set()
                    if proc.pid not in asked:
                        children.kill_group(proc.pid, signal.SIGINT)
                        asked[proc.pid] = now
                    elif now >= asked[proc.pid] + STOP_GRACE_S:
                        children.kill_group(proc.pid)

    watcher = threading.Thread(target=watch, name="cbc-stop", daemon=True)
    with _cbc_lock:
        # read here, not before the lock: a run still winding down (let go after a stop)
        # has its shim in place until it gets here, and that is not PuLP's module
        real = coin_api.subprocess
        coin_api.subprocess = _Shim()  # type: ignore[assignment]
        watcher.start()
        try:
            yield folder
        finally:
            coin_api.subprocess = real
            done.set()
            watcher.join(1.0)
            for proc in procs:
                children.kill_group(proc.pid)
                children.untrack(proc.pid)
            shutil.rmtree(folder, ignore_errors=True)


#: Seconds CBC has to write its solution after SIGINT before it is killed.
STOP_GRACE_S = 0.5
#: Seconds past its time limit after which CBC is interrupted (its own limit should end
#: it first).
LIMIT_GRACE_S = 0.2
