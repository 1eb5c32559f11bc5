"""The paper's relaxation Hare_Sched_RL (Algorithm 1, step 1), solved exactly in compact form.

Hare_Sched_RL is a mixed-integer quadratic program: binary assignments
y[i,m], continuous starts x[i], constraints (4)-(7) of the paper and, instead
of (8), one Queyranne inequality per GPU m. With y binary it reads

    L_m^2 + 2 A_m L_m <= R_m := 2 S_m + Q_m,
    L_m = sum_i p_im y_im,  S_m = sum_i p_im y_im x_i,  Q_m = sum_i p_im^2 y_im,

A_m being the time GPU m becomes available (0 offline). The model here has
O(tasks x GPUs) columns; docs/theory.md (a) proves that it has the MIQP's optimum.
``relaxation="per-type"`` builds the same model over GPU types, each type's GPUs
aggregated into one machine with a weaker, still valid row f_m(L_m) <= R_m
(``relaxation_points.Machines``): O(tasks x types) columns, a lower bound still.

* w[i,m] stands for y[i,m] x[i] (w <= x, w <= U y, U a valid horizon): the
  inequality wants w large, so this admits exactly the MIQP's (x, y).
* L_m is an integer at every binary y (task times are integers), and on the
  integers the convex f(L) (L^2 + 2 A L per GPU) is the maximum of its secants
  through a and a + 1, a an integer. A geometric ladder of them is added up front, the
  others lazily (outer approximation): solve the MILP, add the secant at
  a = L_m* for every GPU whose inequality its solution breaks, solve again.
* any assignment becomes a feasible point of the relaxation through the LP
  over x with y fixed, solved in closed form (``AssignmentSearch``): the EFT
  schedule's (and ``hare``'s with ``hare_start``), a local search's from there to
  a local optimum, every MILP round's. The best is the incumbent and MIP start;
  every round's proved MILP bound (and the chain bound) bounds the relaxation
  from below. Optimal = a round proved optimal whose solution breaks no
  inequality.

Barriers (7) use one variable per round; the identical tasks of a round are
put on non-decreasing GPU indices and identical GPUs take non-increasing
loads (symmetry breaking). Setups are not in the relaxation, as in the paper:
the list-scheduling step applies them.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import highspy
import numpy as np

from hare_opt.heuristics.relaxation_points import (
    MODES,
    SEARCH_EVALS,
    AssignmentSearch,
    LinearModel,
    Machines,
    Point,
    RelaxedTasks,
    canonical,
    eft_start,
    hare_assignment,
    to_highs,
)
from hare_opt.model import HareOptError, Instance, OptionError
from hare_opt.util import stopping
from hare_opt.util.highs import cancel_on
from hare_opt.util.highs import run as run_highs

INF = math.inf
#: Default cap on (task, GPU) pairs: two columns and two rows each.
MAX_ASSIGNMENTS = 200_000


class RelaxationTooLargeError(HareOptError, ValueError):
    """The compact relaxation would have more (task, GPU) pairs than allowed."""


@dataclass
class Relaxation:
    """A solution of Hare_Sched_RL.

    ``x``/``gpu`` (per task of ``tasks``; ``gpu`` indexes ``machines``: GPUs or
    GPU types) is a feasible point of the relaxation of value ``objective``;
    ``bound`` is a proved lower bound on the relaxation's optimum, hence on OPT
    (docs/theory.md (a)); ``optimal``: the two meet, proved.
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
    machines: Machines | None = None
    start: Point | None = None  # the starting point the MILP began from
    first: Point | None = None  # the point the start search began from

    def at(self, point: Point | None) -> Relaxation:
        """``point`` (``start``, ``first``) as a relaxation solution: what step 2 would
        see had step 1 stopped there; this solution when no such point is kept."""
        if point is None:
            return self
        return Relaxation(
            self.tasks,
            point.x,
            point.gpu,
            point.objective,
            self.bound,
            False,
            self.backend,
            self.runtime_s,
            {},
            self.machines,
        )


def chain_bound(inst: Instance) -> float:
    """sum_n w_n (a_n + R_n min_m (p + s)): every point of the relaxation costs at least this."""
    dmin = _round_cost(inst).min(axis=1)
    return float((inst.weight * (inst.release + inst.rounds * dmin)).sum())


def _round_cost(inst: Instance) -> np.ndarray:
    """(N, M) p + s per task on each GPU; inf where ineligible."""
    return np.where(inst.eligible, inst.proc + inst.sync, np.inf).astype(float)


def availability(inst: Instance, gpu_available) -> np.ndarray:
    """(M,) float times from which each GPU is free; zeros when ``None``."""
    if gpu_available is None:
        return np.zeros(inst.num_gpus)
    avail = np.asarray(gpu_available, dtype=float).reshape(-1)
    if avail.shape != (inst.num_gpus,):
        raise HareOptError(
            f"gpu_available: expected {inst.num_gpus} times (one per GPU), got {avail.size}"
        )
    bad = np.flatnonzero(~np.isfinite(avail) | (avail < 0))
    if bad.size:
        raise HareOptError(
            f"gpu_available: gpu {inst.gpus[bad[0]].id!r} has time "
            f"{avail[bad[0]]}, expected a finite number >= 0"
        )
    return avail


def pair_count(inst: Instance, relaxation: str = "per-gpu") -> int:
    """(task, machine) pairs of the relaxation of ``inst``: its size, two columns each."""
    elig = inst.eligible_by_type if relaxation == "per-type" else inst.eligible
    return int((inst.rounds * inst.tasks_per_round * elig.sum(axis=1)).sum())


# --- the compact model ----------------------------------------------------------


@dataclass
class CompactModel:
    """Columns of the compact model and its secant cuts; ``lm`` holds base rows + cuts."""

    mach: Machines
    tasks: RelaxedTasks
    lm: LinearModel
    x: np.ndarray  # (T,) column of x_i
    pair_task: np.ndarray  # (P,) eligible (task, machine) pairs
    pair_gpu: np.ndarray
    y: np.ndarray  # (P,) columns
    w: np.ndarray
    load: np.ndarray  # (M,) column of L_m
    rhs: np.ndarray  # (M,) column of R_m
    barrier: list[int]  # column of each round's barrier, in tasks.rounds() order
    cuts: set[tuple[int, int]] = field(default_factory=set)
    base_rows: int = 0

    @property
    def inst(self) -> Instance:
        return self.mach.inst

    def add_cut(self, m: int, a: int) -> bool:
        """Secant of f_m through a and a + 1: s L - R <= s a - f(a), scaled by 1/s."""
        if (m, a) in self.cuts:
            return False
        self.cuts.add((m, a))
        fa, fb = float(self.mach.f(m, a)), float(self.mach.f(m, a + 1))
        s = fb - fa
        self.lm.row({int(self.load[m]): 1.0, int(self.rhs[m]): -1.0 / s}, hi=a - fa / s)
        return True

    def values(self, pt: Point) -> list[float]:
        """Column values of a feasible point (a MIP start)."""
        inst, t = self.inst, self.tasks
        pt = canonical(self.mach, t, pt)
        v = np.zeros(len(self.lm.lb))
        v[self.x] = pt.x
        on = pt.gpu[self.pair_task] == self.pair_gpu
        v[self.y] = on
        v[self.w] = np.where(on, pt.x[self.pair_task], 0.0)
        p = inst.proc[t.job[self.pair_task], self.pair_gpu].astype(float)
        np.add.at(v, self.load[self.pair_gpu], on * p)
        np.add.at(v, self.rhs[self.pair_gpu], on * (2 * p * pt.x[self.pair_task] + p * p))
        d = (inst.proc + inst.sync)[t.job, pt.gpu]
        for b, ids in zip(self.barrier, t.rounds()):
            v[b] = float((pt.x[ids] + d[ids]).max())
        return np.minimum(np.maximum(v, self.lm.lb), self.lm.ub).tolist()

    def assignment(self, values: np.ndarray) -> np.ndarray:
        """Machine per task of a MILP solution (its largest y)."""
        order = np.lexsort((values[self.y], self.pair_task))  # by task, then y
        top = order[np.r_[self.pair_task[order][1:] != self.pair_task[order][:-1], True]]
        gpu = np.empty(len(self.x), dtype=np.int64)
        gpu[self.pair_task[top]] = self.pair_gpu[top]
        return gpu

    def violated(self, values: np.ndarray) -> list[tuple[int, int]]:
        """(machine, L*) of every machine whose Queyranne row the solution breaks."""
        inst, t = self.inst, self.tasks
        gpu = self.assignment(values)
        x = values[self.x]
        p = inst.proc[t.job, gpu].astype(float)
        out = []
        for m in range(inst.num_gpus):
            on = gpu == m
            load = int(round(p[on].sum()))
            r = 2 * (p[on] * x[on]).sum() + (p[on] ** 2).sum()
            fl = float(self.mach.f(m, load))
            if fl - r > 1e-6 * max(1.0, float(self.mach.f(m, load + 1)) - fl):
                out.append((m, load))
        return out


def build(mach: Machines, tasks: RelaxedTasks, start: Point) -> CompactModel:
    """The compact MILP without cuts; U_n comes from the start's objective."""
    inst = mach.inst
    lm = LinearModel()
    d = _round_cost(inst)
    dmin = d.min(axis=1)
    lb_c = inst.release + inst.rounds * dmin  # C_n >= a_n + R_n min_m (p + s)
    w = inst.weight.astype(float)
    horizon = np.ceil((start.objective - (w * lb_c).sum() + w * lb_c) / w)  # U_n
    n_tasks, n_gpus = len(tasks.job), inst.num_gpus
    hi = horizon[tasks.job] - (inst.rounds[tasks.job] - tasks.round) * dmin[tasks.job]
    hi = np.maximum(hi, inst.release[tasks.job])
    xcol = np.array(
        [lm.var(float(inst.release[n]), float(h)) for n, h in zip(tasks.job.tolist(), hi.tolist())],
        dtype=np.int64,
    )
    pt: list[int] = []
    pg: list[int] = []
    yc: list[int] = []
    wc: list[int] = []
    per_task: list[list[int]] = [[] for _ in range(n_tasks)]
    amin = mach.amin
    for i, n in enumerate(tasks.job.tolist()):
        for m in np.flatnonzero(inst.eligible[n]).tolist():
            per_task[i].append(len(pt))
            pt.append(i)
            pg.append(m)
            yc.append(lm.var(0, 1, integer=True))
            wc.append(lm.var(0, float(hi[i])))
            lm.row({wc[-1]: 1.0, int(xcol[i]): -1.0}, hi=0.0)
            lm.row({wc[-1]: 1.0, yc[-1]: -float(hi[i])}, hi=0.0)
    pair_task, pair_gpu = np.array(pt, dtype=np.int64), np.array(pg, dtype=np.int64)
    ycol, wcol = np.array(yc, dtype=np.int64), np.array(wc, dtype=np.int64)
    for i, ks in enumerate(per_task):
        lm.row({int(ycol[k]): 1.0 for k in ks}, 1.0, 1.0)  # (5)
        if len(ks) > 1:  # sum_m y x = x: valid for the MIQP, tightens the LP
            lm.row({**{int(wcol[k]): 1.0 for k in ks}, int(xcol[i]): -1.0}, hi=0.0)
        if amin[pair_gpu[ks]].max() > inst.release[tasks.job[i]]:  # x_i >= A_m on machine m
            lm.row(
                {int(xcol[i]): 1.0, **{int(ycol[k]): -float(amin[pair_gpu[k]]) for k in ks}}, lo=0.0
            )

    # Barriers (6)-(7), the objective, and machine indices non-decreasing inside a round.
    barrier = []
    prev = None
    for ids in tasks.rounds():
        n = int(tasks.job[ids[0]])
        last = tasks.round[ids[0]] == inst.rounds[n] - 1
        b = lm.var(
            float(lb_c[n]) if last else 0.0, float(horizon[n]), cost=float(w[n]) if last else 0.0
        )
        barrier.append(b)
        for a, i in enumerate(ids.tolist()):
            row = {b: 1.0, int(xcol[i]): -1.0}
            row.update({int(ycol[k]): -float(d[n, pair_gpu[k]]) for k in per_task[i]})
            lm.row(row, lo=0.0)
            if prev is not None:
                lm.row({int(xcol[i]): 1.0, prev: -1.0}, lo=0.0)
            if a + 1 < len(ids) and len(per_task[i]) > 1:
                nxt = per_task[ids[a + 1]]
                row = {int(ycol[k]): float(pair_gpu[k]) for k in per_task[i]}
                for k in nxt:
                    row[int(ycol[k])] = row.get(int(ycol[k]), 0.0) - float(pair_gpu[k])
                lm.row(row, hi=0.0)
        prev = None if last else b

    # L_m and R_m = 2 S_m + Q_m, one column each per machine.
    p = inst.proc[tasks.job[pair_task], pair_gpu].astype(float)
    load = np.empty(n_gpus, dtype=np.int64)
    rhs = np.empty(n_gpus, dtype=np.int64)
    for m in range(n_gpus):
        on = np.flatnonzero(pair_gpu == m)
        load[m] = lm.var(0.0, float(p[on].sum()))
        rhs[m] = lm.var(-INF, INF)
        lm.row({int(load[m]): 1.0, **{int(ycol[k]): -p[k] for k in on}}, 0.0, 0.0)
        row = {int(rhs[m]): 1.0, **{int(wcol[k]): -2 * p[k] for k in on}}
        row.update({int(ycol[k]): -p[k] * p[k] for k in on})
        lm.row(row, 0.0, 0.0)
    for m in range(n_gpus - 1):  # interchangeable machines take non-increasing loads
        same = [k for k in range(m + 1, n_gpus) if mach.key(k) == mach.key(m)]
        if same:
            lm.row({int(load[m]): 1.0, int(load[same[0]]): -1.0}, lo=0.0)
    return CompactModel(
        mach,
        tasks,
        lm,
        xcol,
        pair_task,
        pair_gpu,
        ycol,
        wcol,
        load,
        rhs,
        barrier,
        base_rows=len(lm.rows),
    )


def ladder(model: CompactModel, start: Point, ratio: float) -> None:
    """Secants at a geometric ladder of loads on every machine, and at the start's loads."""
    inst = model.inst
    p = inst.proc[model.tasks.job[model.pair_task], model.pair_gpu]
    for m in range(inst.num_gpus):
        on = model.pair_gpu == m
        if not on.any():
            continue
        lo, hi = int(p[on].min()), int(p[on].sum())
        a = float(lo)
        while a <= hi:
            model.add_cut(m, int(a))
            a = max(a * ratio, a + 1)
        own = int(inst.proc[model.tasks.job, m][start.gpu == m].sum())
        if own:
            model.add_cut(m, own)


# --- backends ------------------------------------------------------------------


def _highs(
    lm: LinearModel,
    start: list[float] | None,
    *,
    time_limit: float | None = None,
    node_limit: int | None = None,
    threads: int | None = None,
    log: bool = False,
    stop: threading.Event | None = None,
) -> dict:
    """Run the MILP; ``optimal`` only on HiGHS's model status kOptimal, never on a limit."""
    h = to_highs(lm, mip=True, threads=threads)
    h.setOptionValue("output_flag", bool(log))
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 1e-7)
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    if node_limit is not None:
        h.setOptionValue("mip_max_nodes", max(int(node_limit), 0))
    if stop is not None:  # Ctrl-C / SIGTERM: HiGHS returns its incumbent

        def poll(e) -> None:
            if stop.is_set():
                e.interrupt()

        h.cbMipInterrupt += poll
        h.cbSimplexInterrupt += poll
    if start is not None:
        sol = highspy.HighsSolution()
        sol.col_value = start
        sol.value_valid = True
        h.setSolution(sol)

    def run() -> highspy.HighsStatus:
        with cancel_on(stop, h):  # the callbacks are not polled in every phase
            return run_highs(h)

    # HiGHS's root LP notices neither: on a stop, the caller keeps its point and HiGHS
    # winds down alone (in a thread, so only when there is a stop to obey)
    ran = run() if stop is None else stopping.in_worker(run, stop, "relaxation-milp")
    if ran is None:
        return {
            "values": None,
            "objective": INF,
            "bound": -INF,
            "optimal": False,
            "status": "Interrupted by user",
            "stopped": "interrupted",
            "nodes": 0,
        }
    status = h.getModelStatus()
    if ran == highspy.HighsStatus.kError and status == highspy.HighsModelStatus.kNotset:
        raise HareOptError(
            "HiGHS refused to solve the relaxation (an option or "
            "thread-pool error); nothing was solved"
        )
    info = h.getInfo()
    optimal = status == highspy.HighsModelStatus.kOptimal
    has = info.primal_solution_status == 2  # kSolutionStatusFeasible
    values = np.array(h.getSolution().col_value) if has else None
    # kSolveError: HiGHS failed numerically mid-search; the run keeps its incumbent and
    # is never optimal, like a limit, but says so and proves no bound
    failed = status == highspy.HighsModelStatus.kSolveError
    if optimal:
        bound = info.objective_function_value
    else:
        bound = info.mip_dual_bound if np.isfinite(info.mip_dual_bound) and not failed else -INF
    stopped = {
        highspy.HighsModelStatus.kTimeLimit: "time_limit",
        highspy.HighsModelStatus.kSolutionLimit: "node_limit",
        highspy.HighsModelStatus.kIterationLimit: "iteration_limit",
        highspy.HighsModelStatus.kSolveError: "solver_error",
        highspy.HighsModelStatus.kInterrupt: "interrupted",
    }.get(status)
    return {
        "values": values,
        "objective": info.objective_function_value if has else INF,
        "bound": bound,
        "optimal": optimal,
        "status": h.modelStatusToString(status),
        "stopped": stopped,
        "nodes": int(info.mip_node_count),
    }


#: Seconds a (task, machine) pair of building the MILP and solving its root, about
#: (measured at 200 jobs on 15 GPUs, 2-core machine under load: 1.2-3.8 s to build 86,629
#: and a root LP that overran a 10 s limit by 2 s: a generous figure).
MILP_S_PER_PAIR = 6e-5


def _solve_oa(
    model: CompactModel,
    start: Point,
    *,
    time_limit: float | None,
    node_limit: int | None,
    max_rounds: int | None,
    threads: int | None,
    t0: float,
    log: bool = False,
    stop: threading.Event | None = None,
) -> tuple[Point, float, bool, dict]:
    """Lazy secants: MILP rounds until one is optimal and breaks no Queyranne inequality."""
    tasks = model.tasks
    best, tried, bound = start, {start.gpu.tobytes()}, -INF
    rounds = nodes = 0
    stopped, optimal, last_status = None, False, "not run"
    while True:
        if max_rounds is not None and rounds >= max_rounds:
            stopped = "round_limit"
            break
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            stopped = "time_limit"
            break
        if stop is not None and stop.is_set():
            stopped = "interrupted"
            break
        run = _highs(
            model.lm,
            model.values(best),
            time_limit=left,
            threads=threads,
            log=log,
            stop=stop,
            node_limit=None if node_limit is None else node_limit - nodes,
        )
        rounds += 1
        nodes += run["nodes"]
        last_status = run["status"]
        bound = max(bound, run["bound"])
        if run["values"] is not None:
            gpu = model.assignment(run["values"])
            if gpu.tobytes() not in tried:
                tried.add(gpu.tobytes())
                fixed = AssignmentSearch(model.mach, tasks, gpu).point()
                if fixed.objective < best.objective:
                    best = fixed
        if not run["optimal"]:
            stopped = run["stopped"] or last_status
            break
        new = [c for c in model.violated(run["values"]) if model.add_cut(*c)]
        if not new or best.objective <= bound + 1e-9 * max(1.0, abs(bound)):
            optimal = True
            break
    stats = {
        "status": "optimal" if optimal else f"stopped: {stopped}",
        "stopped_by": stopped,
        "rounds": rounds,
        "nodes": nodes,
        "last_milp_status": last_status,
    }
    return best, bound, optimal, stats


def _solve_cpsat(
    model: CompactModel,
    start: Point,
    *,
    time_limit: float | None,
    threads: int | None,
    work_limit: float | None = None,
    stop: threading.Event | None = None,
) -> tuple[Point, float, bool, dict]:
    """Integer starts and L_m^2 <= R_m stated exactly: a relaxation of the integer-time problem."""
    from hare_opt.util.ortools import cp_model, solve_stoppable

    lm = model.lm
    md = cp_model.CpModel()
    big = 1 << 40
    cols = [
        md.new_int_var(
            math.ceil(lo - 1e-9) if lo > -big else -big,
            math.floor(hi + 1e-9) if hi < big else big,
            f"c{i}",
        )
        for i, (lo, hi) in enumerate(zip(lm.lb, lm.ub))
    ]
    for idx, vals, lo, hi in lm.rows[: model.base_rows]:
        expr = sum(int(round(v)) * cols[c] for c, v in zip(idx, vals))
        if lo > -INF:
            md.add(expr >= math.ceil(lo - 1e-9))
        if hi < INF:
            md.add(expr <= math.floor(hi + 1e-9))
    for m in range(model.inst.num_gpus):  # per GPU (integer A): L^2 + 2 A L <= R
        hi = int(lm.ub[model.load[m]])
        sq = md.new_int_var(0, hi * hi, f"sq{m}")
        md.add_multiplication_equality(sq, [cols[model.load[m]], cols[model.load[m]]])
        md.add(sq + 2 * int(model.mach.amin[m]) * cols[model.load[m]] <= cols[model.rhs[m]])
    md.minimize(sum(int(round(c)) * v for c, v in zip(lm.cost, cols) if c))
    for v, s in zip(cols, model.values(start)):
        md.add_hint(v, int(round(s)))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = threads or 1
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    if work_limit is not None:  # deterministic seconds
        solver.parameters.max_deterministic_time = float(work_limit)
    solver.parameters.catch_sigint_signal = False
    status = solve_stoppable(solver, md, stop)
    best = start
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) and solver.objective_value < start.objective:
        values = np.array([solver.value(v) for v in cols], dtype=float)
        best = Point(values[model.x], model.assignment(values), float(solver.objective_value))
    optimal = status == cp_model.OPTIMAL
    stopped = None if optimal else "time_limit"
    return (
        best,
        float(solver.best_objective_bound),
        optimal,
        {
            "status": "optimal" if optimal else f"stopped: {stopped}",
            "stopped_by": stopped,
            "branches": solver.num_branches,
            "last_milp_status": solver.status_name(status),
        },
    )


def solve_relaxation(
    inst: Instance,
    *,
    backend: str = "highs",
    time_limit: float | None = None,
    threads: int | None = None,
    node_limit: int | None = None,
    max_rounds: int | None = None,
    gpu_available=None,
    ladder_ratio: float = 1.05,
    search_evals: int = SEARCH_EVALS,
    max_assignments: int = MAX_ASSIGNMENTS,
    log: bool = False,
    hare_start: bool = False,
    stop: threading.Event | None = None,
    relaxation: str = "per-gpu",
    on_start: Callable[[Relaxation], None] | None = None,
) -> Relaxation:
    """Solve Hare_Sched_RL; under a limit the incumbent comes with the proved bound.

    ``node_limit`` (B&B nodes over all rounds) and ``max_rounds`` are
    deterministic limits (``max_rounds=0``: the starting point only, no MILP);
    ``stats["stopped_by"]`` says which limit ended the run. ``gpu_available``: per
    GPU, the time from which it may start tasks. ``backend="cpsat"`` states
    L^2 <= R exactly but restricts starts to integers. ``hare_start``: also try our
    ``hare`` heuristic's assignment as a starting point (off by default, so that
    Algorithm 1 does not lean on our heuristic). ``relaxation``: ``per-gpu`` (the
    paper's model) or ``per-type`` (GPUs of a type aggregated: ``Machines``).
    ``on_start``: called with the starting point (a ``Relaxation``, not optimal) before
    the MILP, so that a caller holds a usable answer while the MILP runs. A set
    ``stop`` ends the local search and the MILP; the best point so far is returned.
    """
    owner = "solver 'hare-paper'"
    if backend not in ("highs", "cpsat"):
        raise OptionError(
            f"must be 'highs' or 'cpsat', got {backend!r}", option="relaxation_solver", owner=owner
        )
    if backend == "cpsat" and (node_limit is not None or max_rounds is not None):
        raise OptionError(
            "node_limit and max_rounds apply to the 'highs' relaxation only",
            option="relaxation_solver",
            owner=owner,
        )
    if relaxation not in MODES:
        raise OptionError(
            f"must be one of {', '.join(MODES)}, got {relaxation!r}",
            option="relaxation",
            owner=owner,
        )
    if backend == "cpsat" and relaxation != "per-gpu":
        raise OptionError(
            "the 'cpsat' backend solves the per-gpu relaxation only",
            option="relaxation_solver",
            owner=owner,
        )
    if ladder_ratio <= 1:
        raise OptionError(f"must be > 1, got {ladder_ratio}", option="ladder_ratio", owner=owner)
    t0 = time.perf_counter()
    pairs = pair_count(inst, relaxation)
    if pairs > max_assignments:
        what = "type" if relaxation == "per-type" else "GPU"
        raise RelaxationTooLargeError(
            f"instance {inst.name!r}: the relaxation would have {pairs} (task, {what}) pairs "
            f"({inst.num_tasks} tasks x {inst.num_gpus} GPUs), more than max_assignments="
            f"{max_assignments}"
        )
    avail = availability(inst, gpu_available)
    if backend == "cpsat":
        avail = np.ceil(avail)  # integer starts: GPU m's tasks start at >= ceil(A_m)
    mach = Machines.of(inst, avail, relaxation)
    tasks = RelaxedTasks.of(inst)
    start, evals, search_clock, done = eft_start(mach, tasks), 0, False, False
    first = start
    if backend == "highs":  # the better of two assignments, each with its optimal x, then
        starts = [start.gpu, hare_assignment(mach)] if hare_start else [start.gpu]
        search = min((AssignmentSearch(mach, tasks, g) for g in starts), key=lambda a: a.objective)
        first = search.point()
        deadline = None if time_limit is None else t0 + time_limit / 4
        evals = search.search(search_evals, deadline=deadline, stop=stop)  # a local search
        start, done = search.point(), search.done
        search_clock = not done and deadline is not None and time.perf_counter() >= deadline
    # The MILP's build cannot be stopped (about 15 us a column, 10^5 columns at 200 jobs
    # on 15 GPUs) and HiGHS does not stop in a MIP's root LP: with too little time left for
    # both, the starting point is the answer (a time limit is honoured like the others').
    late = (
        time_limit is not None
        and time.perf_counter() - t0 + MILP_S_PER_PAIR * pairs * 2 >= time_limit
    )
    if late:  # no time left to build the MILP (seconds at 10^5 columns)
        max_rounds = 0
    chain = chain_bound(inst)  # a bound of the relaxation before any MILP
    if on_start is not None:
        on_start(
            Relaxation(
                tasks,
                start.x,
                start.gpu,
                start.objective,
                chain,
                False,
                backend,
                time.perf_counter() - t0,
                {"stopped_by": "start"},
                mach,
            )
        )
    if max_rounds == 0:  # the starting point is the answer: no model to build
        best, bound, optimal = start, -INF, False
        why = "time_limit" if late else "round_limit"
        stats = {
            "status": f"stopped: {why}",
            "stopped_by": why,
            "rounds": 0,
            "nodes": 0,
            "last_milp_status": "not run",
        }
        model = None
    else:
        model = build(mach, tasks, start)
        if backend == "highs":
            ladder(model, start, ladder_ratio)
        initial = len(model.cuts)
        if backend == "highs":
            best, bound, optimal, stats = _solve_oa(
                model,
                start,
                time_limit=time_limit,
                node_limit=node_limit,
                max_rounds=max_rounds,
                threads=threads,
                t0=t0,
                log=log,
                stop=stop,
            )
        else:
            best, bound, optimal, stats = _solve_cpsat(
                model,
                start,
                time_limit=time_limit,
                threads=threads,
                work_limit=node_limit,
                stop=stop,
            )
    bound = max(bound, chain)
    if optimal:  # equal up to the backends' tolerances
        bound = min(bound, best.objective)
    gap = (best.objective - bound) / max(1.0, abs(best.objective))
    stats.update(
        gap=gap,
        search_evals=evals,
        search_done=done,
        assignments=pairs,
        model=relaxation,
        columns=0 if model is None else len(model.lm.lb),
        rows=0 if model is None else len(model.lm.rows),
        cuts=0 if model is None else len(model.cuts),
        initial_cuts=0 if model is None else initial,
        start_objective=start.objective,
        wall_clock_limited=search_clock or stats.get("stopped_by") == "time_limit",
    )
    return Relaxation(
        tasks,
        best.x,
        best.gpu,
        float(best.objective),
        float(bound),
        optimal,
        backend,
        time.perf_counter() - t0,
        stats,
        mach,
        start,
        first,
    )
