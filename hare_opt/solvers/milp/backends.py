"""Running the PuLP model on HiGHS or CBC, and reading what the backend really proved.

PuLP maps HiGHS's time limit with an incumbent (and CBC's "Stopped on time"
with one) to ``LpStatusOptimal``, so the status is taken from the backend
itself: highspy's model status and MIP dual bound, CBC's solution status.
The objective is an integer (integer weights and times), so a dual bound
within 0.5 of the incumbent proves it optimal.
"""

from __future__ import annotations

import math
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np
import pulp

from hare_opt.model import SolverError
from hare_opt.solvers.milp.formulation import TimeIndexedModel
from hare_opt.util import progress
from hare_opt.util.highs import quiet_banner, use_threads

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


def watch_highs(h: highspy.Highs, stop: threading.Event | None) -> None:
    """Interrupt HiGHS when ``stop`` is set (its interrupt callbacks poll it), and report
    new incumbents and bounds to ``util.progress``."""
    def poll(e: Any) -> None:
        if stop is not None and stop.is_set():
            e.interrupt()

    def improved(e: Any) -> None:
        out = e.data_out
        progress.report("milp", incumbent=out.mip_primal_bound, bound=out.mip_dual_bound)

    h.cbSimplexInterrupt += poll
    h.cbIpmInterrupt += poll
    h.cbMipInterrupt += poll
    if progress.enabled():
        h.cbMipImprovingSolution += improved


def run_highs(m: TimeIndexedModel, *, time_limit: float | None, threads: int, msg: bool,
              start: dict[str, float] | None, lp_bound: bool, mip: bool = True,
              options: dict[str, Any] | None = None,
              stop: threading.Event | None = None) -> Outcome:
    """Solve with highspy on the model PuLP builds; optionally the LP relaxation first.
    ``stop`` interrupts the run (the incumbent is kept, the status is then not optimal)."""
    t0 = time.perf_counter()
    if not msg:
        quiet_banner()
    use_threads(threads)
    solver = pulp.HiGHS(msg=msg, threads=threads, gapRel=0.0, gapAbs=ABS_GAP,
                        **{**HIGHS_DEFAULTS, **(options or {})})
    solver.createAndConfigureSolver(m.prob)
    solver.buildSolverModel(m.prob)
    h: highspy.Highs = m.prob.solverModel
    watch_highs(h, stop)
    h.changeObjectiveOffset(float(m.constant))
    variables = m.prob.variables()
    out = Outcome("none", stats={"backend": "highs", "n_vars": h.getNumCol(),
                                 "n_rows": h.getNumRow(), "n_nonzeros": h.getNumNz()})

    def remaining() -> float:
        return math.inf if time_limit is None else max(0.0, time_limit - (time.perf_counter() - t0))

    if lp_bound or not mip:
        n = h.getNumCol()
        idx = np.arange(n, dtype=np.int32)
        kinds = np.array([int(h.getColIntegrality(i)[1])  # type: ignore[attr-defined]  # not in the stubs
                          for i in range(n)], dtype=np.uint8)
        h.changeColsIntegrality(n, idx, np.zeros(n, dtype=np.uint8))
        t_lp = time.perf_counter()
        _run(h, remaining())
        out.stats["lp_s"] = round(time.perf_counter() - t_lp, 4)
        if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
            out.lp_bound = h.getInfo().objective_function_value
        h.changeColsIntegrality(n, idx, kinds)
        h.clearSolver()
    if not mip:
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
        proved = (status == highspy.HighsModelStatus.kOptimal and out.bound is not None
                  and out.objective - out.bound <= ABS_GAP + 1e-9)
        out.status = "optimal" if proved else "feasible"
    return out


def run_cbc(m: TimeIndexedModel, *, time_limit: float | None, threads: int, msg: bool,
            start: dict[str, float] | None, lp_bound: bool,
            options: dict[str, Any] | None = None) -> Outcome:
    """Solve with PuLP's bundled CBC; its proved status is ``sol_status == LpSolutionOptimal``."""
    t0 = time.perf_counter()
    out = Outcome("none", stats={"backend": "cbc", "n_vars": len(m.prob.variables()),
                                 "n_rows": m.prob.numConstraints()})

    def remaining() -> float | None:
        return None if time_limit is None else max(1.0, time_limit - (time.perf_counter() - t0))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PULP_CBC_CMD's deprecation notice
        if lp_bound:
            m.prob.solve(pulp.PULP_CBC_CMD(mip=False, msg=msg, timeLimit=remaining()))
            if m.prob.status == pulp.LpStatusOptimal:
                out.lp_bound = pulp.value(m.prob.objective)
        if start is not None:
            for v in m.prob.variables():
                v.setInitialValue(start.get(v.name, 0.0))
        m.prob.solve(pulp.PULP_CBC_CMD(msg=msg, timeLimit=remaining(), threads=threads,
                                       warmStart=start is not None, **(options or {})))
    out.stats["mip_status"] = pulp.LpSolution[m.prob.sol_status]
    if m.prob.sol_status == pulp.LpSolutionOptimal:
        out.status = "optimal"
    elif m.prob.sol_status == pulp.LpSolutionIntegerFeasible:
        out.status = "feasible"
    if out.status != "none":
        out.objective = pulp.value(m.prob.objective)
        if out.status == "optimal":
            out.bound = out.objective
    return out
