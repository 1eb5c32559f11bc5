"""The paper's relaxation Hare_Sched_RL (Algorithm 1, step 1), solved exactly as a MILP.

Hare_Sched_RL is a mixed-integer quadratic program: binary assignments
y[i,m], continuous starts x[i], constraints (4)-(7) of the paper and, instead
of (8), one Queyranne inequality per GPU m,

    sum_i y[i,m] p[i,m] (x[i] + p[i,m]) >= 1/2 [(sum_i y[i,m] p[i,m])^2 + sum_i y[i,m] p[i,m]^2].

With y binary (y^2 = y) it simplifies to sum_i p[i,m] (y[i,m] x[i]) >=
sum_{i<k} p[i,m] p[k,m] (y[i,m] y[k,m]), and the two kinds of products are
linearised *exactly* (docs/theory.md (a) gives the proof):

* w[i,m] stands for y[i,m] x[i], with w <= x and w <= U_n y (U_n a valid
  horizon for job n). Any w allowed is <= y x, and w = y x is allowed, so
  the inequality (which wants w large) admits exactly the (x, y) of the MIQP.
* z[i,k,m] stands for y[i,m] y[k,m], with z >= y_i + y_k - 1, z >= 0. Any z
  allowed is >= y_i y_k, and z = y_i y_k is allowed (it wants z small).

U_n comes from a feasible point (the setup-free EFT schedule, objective UB):
in any optimal solution w_n C_n <= UB - sum_{k != n} w_k LB_k, so capping x
by it cuts off no optimal solution. Constraint (7) is written with one barrier
variable per round (B >= x_i + d_i, x_j >= B), an exact projection that needs
2K rows instead of K^2; C_n is the last barrier. Tasks of one round are
identical, so their starts are ordered (symmetry breaking; no optimum is lost).
Setups are not in the relaxation, as in the paper: the list-scheduling step
applies them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import sys
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from hare_opt.heuristics.rules import solve_eft
from hare_opt.model import Instance
from hare_opt.model.limits import OutOfTime
from hare_opt.model.options import Run

INF = math.inf


@dataclass
class LinearModel:
    """A tiny solver-neutral MILP: columns, sparse rows, minimisation."""

    lb: list[float] = field(default_factory=list)
    ub: list[float] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    integer: list[bool] = field(default_factory=list)
    rows: list[tuple[list[int], list[float], float, float]] = field(default_factory=list)

    def var(self, lb: float, ub: float, *, integer: bool = False, cost: float = 0.0) -> int:
        self.lb.append(lb)
        self.ub.append(ub)
        self.cost.append(cost)
        self.integer.append(integer)
        return len(self.lb) - 1

    def row(self, terms: dict[int, float], lo: float = -INF, hi: float = INF) -> None:
        self.rows.append((list(terms), list(terms.values()), lo, hi))


@dataclass
class RelaxedTasks:
    """The tasks of the relaxation: job-major, then round, then task within the round."""

    job: np.ndarray
    round: np.ndarray
    task: np.ndarray

    @classmethod
    def of(cls, inst: Instance) -> RelaxedTasks:
        j, r, k = [], [], []
        for n, job in enumerate(inst.jobs):
            for rr in range(job.rounds):
                for kk in range(job.tasks_per_round):
                    j.append(n)
                    r.append(rr)
                    k.append(kk)
        return cls(np.array(j, dtype=np.int64), np.array(r, dtype=np.int64),
                   np.array(k, dtype=np.int64))


@dataclass
class Relaxation:
    """A solution of Hare_Sched_RL.

    ``optimal``: the backend proved ``objective`` optimal. ``bound`` is the
    backend's proved lower bound on the relaxation's optimum, hence on OPT
    (see docs/theory.md (a)). ``x`` and ``gpu`` are per task of ``tasks``.
    """

    tasks: RelaxedTasks
    x: np.ndarray
    gpu: np.ndarray
    objective: float
    bound: float
    optimal: bool
    backend: str
    runtime_s: float
    stats: dict = field(default_factory=dict)


def setup_free(inst: Instance) -> Instance:
    """The same instance without switching overheads (what the relaxation models)."""
    jobs = tuple(dataclasses.replace(j, switch_overhead=0) for j in inst.jobs)
    return inst.with_jobs(jobs)


def _round_cost(inst: Instance) -> np.ndarray:
    """(N, M) p + s per task on each GPU; inf where ineligible."""
    return np.where(inst.eligible, inst.proc + inst.sync, np.inf).astype(float)


def build(inst: Instance, tasks: RelaxedTasks, start_x: np.ndarray, start_gpu: np.ndarray,
          upper: float) -> tuple[LinearModel, dict, list[float]]:
    """The linearised model, its column map and the column values of the given start."""
    lm = LinearModel()
    d = _round_cost(inst)
    dmin = d.min(axis=1)
    lb_c = inst.release + inst.rounds * dmin  # C_n >= a_n + R_n min_m (p + s)
    w = inst.weight.astype(float)
    horizon = (upper - (w * lb_c).sum() + w * lb_c) / w  # U_n
    start = []

    def var(lb, ub, value, **kw):
        start.append(float(value))
        return lm.var(lb, ub, **kw)

    n_tasks = len(tasks.job)
    y_start = np.zeros((n_tasks, inst.num_gpus))
    y_start[np.arange(n_tasks), start_gpu] = 1.0
    xcol = np.empty(n_tasks, dtype=np.int64)
    ycol: dict[tuple[int, int], int] = {}
    wcol: dict[tuple[int, int], int] = {}
    for i, (n, r) in enumerate(zip(tasks.job.tolist(), tasks.round.tolist())):
        hi = horizon[n] - (inst.rounds[n] - r) * dmin[n]
        xcol[i] = var(float(inst.release[n]), max(hi, float(inst.release[n])), start_x[i])
        for m in np.flatnonzero(inst.eligible[n]).tolist():
            ycol[i, m] = var(0, 1, y_start[i, m], integer=True)
            wcol[i, m] = var(0, hi, y_start[i, m] * start_x[i])
            lm.row({wcol[i, m]: 1.0, xcol[i]: -1.0}, hi=0.0)
            lm.row({wcol[i, m]: 1.0, ycol[i, m]: -hi}, hi=0.0)
        elig = np.flatnonzero(inst.eligible[n]).tolist()
        lm.row({ycol[i, m]: 1.0 for m in elig}, 1.0, 1.0)
        if len(elig) > 1:  # sum_m y x = x: valid for the MIQP, tightens the LP
            lm.row({**{wcol[i, m]: 1.0 for m in elig}, xcol[i]: -1.0}, hi=0.0)

    # Barriers (6)-(7), the objective, symmetry breaking inside a round.
    first = 0
    for n, job in enumerate(inst.jobs):
        k = job.tasks_per_round
        ends = []
        for r in range(job.rounds):
            ids = range(first + r * k, first + (r + 1) * k)
            end = max(start_x[i] + float(d[n, start_gpu[i]]) for i in ids)
            ends.append(end)
            last = r == job.rounds - 1
            b = var(float(lb_c[n]) if last else 0.0, horizon[n], end,
                    cost=float(w[n]) if last else 0.0)
            for i in ids:
                row = {b: 1.0, xcol[i]: -1.0}
                row.update({ycol[i, m]: -float(d[n, m]) for m in np.flatnonzero(inst.eligible[n])})
                lm.row(row, lo=0.0)
                if not last:
                    lm.row({xcol[i + k]: 1.0, b: -1.0}, lo=0.0)
                if i + 1 < first + (r + 1) * k:
                    lm.row({xcol[i]: 1.0, xcol[i + 1]: -1.0}, hi=0.0)
        first += job.num_tasks

    # Queyranne per GPU: sum_i p_i w_i - sum_{i<k} p_i p_k z_ik >= 0.
    for m in range(inst.num_gpus):
        on = [i for i in range(n_tasks) if (i, m) in ycol]
        row = {wcol[i, m]: float(inst.proc[tasks.job[i], m]) for i in on}
        for a, i in enumerate(on):
            for kk in on[a + 1:]:
                both = y_start[i, m] * y_start[kk, m]
                z = var(0, 1, both)
                lm.row({z: 1.0, ycol[i, m]: -1.0, ycol[kk, m]: -1.0}, lo=-1.0)
                row[z] = -float(inst.proc[tasks.job[i], m] * inst.proc[tasks.job[kk], m])
        lm.row(row, lo=0.0)
    return lm, {"x": xcol, "y": ycol}, start


@contextlib.contextmanager
def _quiet_stdout():
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _solve_highs(lm: LinearModel, start: list[float], time_limit: float | None,
                 threads: int | None, work_limit: int | None = None,
                 stop: threading.Event | None = None
                 ) -> tuple[np.ndarray | None, float, float, bool, dict]:
    import highspy

    with _quiet_stdout():  # HiGHS prints a banner on its first construction
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 1e-7)
    if threads:  # HiGHS keeps one global scheduler: a thread count differing from it fails
        h.resetGlobalScheduler(True)
        h.setOptionValue("threads", threads)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if work_limit is not None:  # branch-and-bound nodes: a limit the machine cannot change
        h.setOptionValue("mip_max_nodes", int(work_limit))
    if stop is not None:
        def poll(e) -> None:
            if stop.is_set():
                e.interrupt()
        h.cbMipInterrupt += poll
        h.cbSimplexInterrupt += poll
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(lm.lb), len(lm.rows)
    lp.col_cost_ = np.array(lm.cost)
    lp.col_lower_ = np.array(lm.lb, dtype=float)
    lp.col_upper_ = np.array(lm.ub, dtype=float)
    lp.row_lower_ = np.array([r[2] for r in lm.rows], dtype=float)
    lp.row_upper_ = np.array([r[3] for r in lm.rows], dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.cumsum([0] + [len(r[0]) for r in lm.rows])
    lp.a_matrix_.index_ = np.array([c for r in lm.rows for c in r[0]], dtype=np.int32)
    lp.a_matrix_.value_ = np.array([v for r in lm.rows for v in r[1]], dtype=float)
    lp.integrality_ = [highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous
                       for b in lm.integer]
    h.passModel(lp)
    sol = highspy.HighsSolution()
    sol.col_value = start
    sol.value_valid = True
    h.setSolution(sol)
    h.run()
    status = h.getModelStatus()
    info = h.getInfo()
    optimal = status == highspy.HighsModelStatus.kOptimal
    values = np.array(h.getSolution().col_value) if info.primal_solution_status else None
    bound = info.objective_function_value if optimal else info.mip_dual_bound
    return (values, info.objective_function_value, bound, optimal,
            {"status": h.modelStatusToString(status), "nodes": int(info.mip_node_count)})


def _solve_cpsat(lm: LinearModel, start: list[float], time_limit: float | None,
                 threads: int | None, work_limit: int | None = None,
                 stop: threading.Event | None = None
                 ) -> tuple[np.ndarray | None, float, float, bool, dict]:
    """Starts restricted to integers: still a relaxation of the (integer-time) problem."""
    from ortools.sat.python import cp_model

    md = cp_model.CpModel()
    cols = [md.new_int_var(math.ceil(lo - 1e-9), math.floor(hi + 1e-9), f"c{i}")
            for i, (lo, hi) in enumerate(zip(lm.lb, lm.ub))]
    for idx, vals, lo, hi in lm.rows:
        expr = sum(int(round(v)) * cols[c] for c, v in zip(idx, vals))
        if lo > -INF:
            md.add(expr >= math.ceil(lo - 1e-9))
        if hi < INF:
            md.add(expr <= math.floor(hi + 1e-9))
    md.minimize(sum(int(round(c)) * v for c, v in zip(lm.cost, cols) if c))
    for v, s in zip(cols, start):
        md.add_hint(v, int(round(s)))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = threads or 1
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    if work_limit is not None:  # deterministic seconds
        solver.parameters.max_deterministic_time = float(work_limit)
    solver.parameters.catch_sigint_signal = False
    status = solver.solve(md)
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    values = np.array([solver.value(v) for v in cols], dtype=float) if found else None
    obj = solver.objective_value if found else INF
    return (values, obj, solver.best_objective_bound, status == cp_model.OPTIMAL,
            {"status": solver.status_name(status), "branches": solver.num_branches})


def _feasible_start(inst: Instance, tasks: RelaxedTasks, run: Run | None = None
                    ) -> tuple[np.ndarray, np.ndarray, float]:
    """x, GPU per task and objective of the setup-free EFT schedule, in ``tasks`` order
    (``OutOfTime`` when ``run`` expires first: a partial start is no start)."""
    free = setup_free(inst)
    res = solve_eft(free, run)
    if not res.status.has_schedule:
        raise OutOfTime("time limit reached in the relaxation's start (EFT)")
    sch = res.schedule
    key = np.lexsort((sch.start, sch.round, sch.job_indices(free)))  # round's tasks by start
    return sch.start[key].astype(float), sch.gpu_indices(free)[key], float(res.objective)


def solve_relaxation(inst: Instance, *, backend: str = "highs", time_limit: float | None = None,
                     threads: int | None = None, max_pairs: int = 200_000,
                     work_limit: int | None = None,
                     stop: threading.Event | None = None) -> Relaxation:
    """Solve Hare_Sched_RL; under a time limit the best solution found is returned.

    The model has one column per pair of tasks that may share a GPU; beyond
    ``max_pairs`` it is not built and the feasible start (the setup-free EFT
    schedule) stands in for the relaxation, flagged as not optimal, no bound.
    """
    if backend not in ("highs", "cpsat"):
        raise ValueError(f"relaxation_solver must be 'highs' or 'cpsat', got {backend!r}")
    t0 = time.perf_counter()
    tasks = RelaxedTasks.of(inst)
    x0, g0, upper = _feasible_start(inst, tasks, Run(time_limit, stop=stop or threading.Event()))
    on_gpu = inst.eligible[tasks.job].sum(axis=0)
    pairs = int((on_gpu * (on_gpu - 1) // 2).sum())
    if pairs > max_pairs:  # the z columns would not fit: keep the start, say so
        stats = {"status": f"not built: {pairs} task pairs > max_pairs={max_pairs}",
                 "pairs": pairs, "start_objective": upper}
        return Relaxation(tasks, x0, g0, upper, -INF, False, backend,
                          time.perf_counter() - t0, stats)
    lm, cols, start = build(inst, tasks, x0, g0, upper)
    run = _solve_highs if backend == "highs" else _solve_cpsat
    values, obj, bound, optimal, stats = run(lm, start, time_limit, threads, work_limit, stop)
    if values is None:  # nothing better than the start within the limit
        values, obj = np.array(start), float(np.dot(lm.cost, start))
    x = values[cols["x"]]
    gpu = np.full(len(x), -1, dtype=np.int64)
    for (i, m), c in cols["y"].items():
        if values[c] > 0.5:
            gpu[i] = m
    stats.update(columns=len(lm.lb), rows=len(lm.rows), pairs=pairs, start_objective=upper)
    return Relaxation(tasks, x, gpu, float(obj), float(bound), bool(optimal), backend,
                      time.perf_counter() - t0, stats)
