"""Feasible points of the relaxation Hare_Sched_RL: machines, starts, the fixed-assignment LP.

With the assignment y fixed, the relaxation is an LP in the starts x (each
machine's Queyranne inequality becomes linear), so every assignment gives a
feasible point and an upper bound on the relaxation's optimum. The MILP in
``relaxation`` uses the best one as its incumbent and MIP start; this module
also holds the solver-neutral model container, the HiGHS plumbing both use, and
``Machines``: what a column's "GPU" is (a GPU, or a GPU type with its GPUs
aggregated).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field

import highspy
import numpy as np

from hare_opt.heuristics.rules import eft_state
from hare_opt.model import GPU, HareOptError, Instance
from hare_opt.util.highs import new_highs
from hare_opt.util.highs import run as run_highs

INF = math.inf
#: The relaxation's two models: a column per (task, GPU) (the paper's) or per (task, type).
MODES = ("per-gpu", "per-type")


@dataclass(frozen=True)
class Machines:
    """The machines of the relaxation and each one's Queyranne envelope.

    ``per-gpu`` (the paper's model): one machine per GPU. ``per-type``: one per GPU
    type, its c GPUs aggregated; summing the c per-GPU inequalities and using
    sum_m L_m^2 >= (sum_m L_m)^2 / c keeps every schedule feasible (docs/theory.md (a)).
    On machine m the rows ask f_m(L_m) <= 2 S_m + Q_m with the convex envelope
    f_m(L) = L^2 / c + max(2 amin L, 2 amean L + gamma): amin / amean the earliest and
    mean time its GPUs become free, gamma = -sum (A - amean)^2 <= 0. On one GPU
    (c = 1) both branches are L^2 + 2 A L, the paper's inequality with availability.

    ``inst`` is the machine-level instance (one GPU per machine, the jobs unchanged);
    ``real``/``avail`` the cluster and each of its GPUs' free times; ``of_gpu`` maps a
    real GPU to its machine.
    """

    mode: str
    real: Instance
    avail: np.ndarray
    inst: Instance
    of_gpu: np.ndarray
    cap: np.ndarray
    amin: np.ndarray
    amean: np.ndarray
    gamma: np.ndarray

    @classmethod
    def of(cls, real: Instance, avail: np.ndarray, mode: str = "per-gpu") -> Machines:
        avail = np.asarray(avail, dtype=float)
        if mode == "per-gpu":
            ones = np.ones(real.num_gpus)
            return cls(mode, real, avail, real, np.arange(real.num_gpus), ones, avail, avail,
                       np.zeros(real.num_gpus))
        if mode != "per-type":
            raise HareOptError(f"relaxation: must be one of {', '.join(MODES)}, got {mode!r}")
        k = real.gpu_type_index
        cap = real.type_count.astype(float)
        amin = np.full(len(cap), np.inf)
        np.minimum.at(amin, k, avail)
        amean = np.bincount(k, weights=avail, minlength=len(cap)) / cap
        gamma = -np.bincount(k, weights=(avail - amean[k]) ** 2, minlength=len(cap))
        inst = Instance(tuple(GPU(t, t) for t in real.gpu_types), real.jobs, real.name,
                        real.time_unit)
        return cls(mode, real, avail, inst, k, cap, amin, amean, gamma)

    def f(self, m, load):
        """f_m(load): the least 2 S_m + Q_m a machine-m load may have (vectorised)."""
        load = np.asarray(load, dtype=float)
        return load * load / self.cap[m] + np.maximum(2 * self.amin[m] * load,
                                                       2 * self.amean[m] * load + self.gamma[m])

    @property
    def type_of(self) -> np.ndarray:
        """(machines,) GPU type index of each machine (in the real instance's types)."""
        return self.real.gpu_type_index if self.mode == "per-gpu" else \
            np.arange(len(self.real.gpu_types))

    def key(self, m: int) -> tuple[int, float, float]:
        """Machines with equal keys are interchangeable (symmetry breaking)."""
        return int(self.inst.gpu_type_index[m]), float(self.amin[m]), float(self.cap[m])


def as_machines(inst: Instance, avail) -> Machines:
    """``avail`` as given, or per GPU times (None: all 0) as the per-GPU machines of ``inst``."""
    if isinstance(avail, Machines):
        return avail
    return Machines.of(inst, np.zeros(inst.num_gpus) if avail is None else avail)


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
        per_job = inst.rounds * inst.tasks_per_round
        job = np.repeat(np.arange(inst.num_jobs, dtype=np.int64), per_job)
        pos = np.arange(len(job), dtype=np.int64) - np.repeat(np.cumsum(per_job) - per_job,
                                                              per_job)
        k = inst.tasks_per_round[job]
        return cls(job, pos // k, pos % k)

    def rounds(self) -> list[np.ndarray]:
        """Task indices of each (job, round), in job-major order."""
        cut = np.flatnonzero(np.diff(self.job) | np.diff(self.round)) + 1
        return np.split(np.arange(len(self.job)), cut)


@dataclass
class Point:
    """A feasible point of the relaxation: starts, GPU per task, objective."""

    x: np.ndarray
    gpu: np.ndarray
    objective: float


def _assignment(free: Instance, sch) -> tuple[np.ndarray, np.ndarray]:
    """Starts and GPUs of a schedule in tasks order, a round's tasks by GPU index."""
    g = sch.gpu_indices(free)
    key = np.lexsort((sch.start, g, sch.round, sch.job_indices(free)))
    return sch.start[key].astype(float), g[key]


def eft_start(mach: Machines, tasks: RelaxedTasks) -> Point:
    """A setup-free greedy schedule (GPU m free from A_m), in ``tasks`` order, on the
    machines: a feasible point. Per GPU: the EFT schedule. Per type: the same greedy
    over GPU types (``eft_by_type``), linear in the jobs per placement, for the large
    plans that mode is for."""
    if mach.mode == "per-type":
        return eft_by_type(mach, tasks)
    free = mach.real.without_setups()
    state = eft_state(free, np.ceil(mach.avail).astype(np.int64))
    return Point(*_assignment(free, state.schedule()), float(state.objective()))


def eft_by_type(mach: Machines, tasks: RelaxedTasks) -> Point:
    """Earliest finish first without setups, GPUs grouped by type: the next task is the
    one that would finish first on its best type's earliest-free GPU (ties: heavier job,
    lower index, lower type). Within a type the GPUs are identical, so this is the EFT
    schedule but for which equally good GPU takes a task; GPU type per task as the point.
    Compiled (``_eft_kernel``); ``eft_by_type_reference`` is the same rule in NumPy."""
    from hare_opt.heuristics._eft_kernel import eft_by_type as kernel

    real = mach.real
    n = real.num_jobs
    big = np.iinfo(np.int64).max // (4 * (n + 1))  # big * jobs + rank fits
    rank = np.empty(n, dtype=np.int64)  # ties: heavier job, then lower index
    rank[np.lexsort((np.arange(n), -real.weight))] = np.arange(n)
    gtype = real.gpu_type_index.astype(np.int64)
    tgpu = np.argsort(gtype, kind="stable").astype(np.int64)
    tptr = np.concatenate([[0], np.cumsum(np.bincount(gtype, minlength=len(real.gpu_types)))
                           ]).astype(np.int64)
    free = np.ceil(np.asarray(mach.avail, dtype=float)).astype(np.int64)
    x = np.empty(len(tasks.job))
    gpu = np.empty(len(tasks.job), dtype=np.int64)
    i64 = np.int64
    barrier = kernel(free, tgpu, tptr, real.proc_by_type.astype(i64),
                     real.sync_by_type.astype(i64), real.release.astype(i64),
                     real.rounds.astype(i64), real.tasks_per_round.astype(i64), rank,
                     np.ascontiguousarray(real.eligible_by_type, dtype=np.bool_), i64(big),
                     x, gpu)
    return Point(x, gpu, float((real.weight * barrier).sum()))


def eft_by_type_reference(mach: Machines, tasks: RelaxedTasks) -> Point:
    """``eft_by_type`` in NumPy: the reference the kernel is tested against."""
    real = mach.real
    p, s = real.proc_by_type, real.sync_by_type
    big = np.iinfo(np.int64).max // (4 * (real.num_jobs + 1))  # big * jobs + rank fits
    heaps: list[list[tuple[int, int]]] = [[] for _ in real.gpu_types]
    for g, k in enumerate(real.gpu_type_index.tolist()):
        heaps[k].append((int(math.ceil(mach.avail[g])), g))
    for h in heaps:
        heapq.heapify(h)
    fmin = np.array([h[0][0] for h in heaps], dtype=np.int64)
    barrier = real.release.astype(np.int64).copy()
    left = real.rounds.astype(np.int64).copy()
    placed = np.zeros(real.num_jobs, dtype=np.int64)
    round_end = np.zeros(real.num_jobs, dtype=np.int64)
    K = real.tasks_per_round
    first = np.r_[0, np.cumsum(real.rounds * K)[:-1]]  # each job's first row in ``tasks``
    rnd = np.zeros(real.num_jobs, dtype=np.int64)
    x = np.empty(len(tasks.job))
    gpu = np.empty(len(tasks.job), dtype=np.int64)
    n = real.num_jobs
    rank = np.empty(n, dtype=np.int64)  # ties: heavier job, then lower index
    rank[np.lexsort((np.arange(n), -real.weight))] = np.arange(n)
    elig = real.eligible_by_type
    # finish of each job's next task on each type's earliest-free GPU; one column (the type
    # placed on) and one row (the job placed) change per placement
    fin = np.where(elig, np.maximum(fmin[None, :], barrier[:, None]) + p, big)
    for _ in range(len(tasks.job)):
        j = int(np.argmin(fin.min(axis=1) * n + rank))
        k = int(np.argmin(fin[j]))
        free, g = heapq.heappop(heaps[k])
        start = max(free, int(barrier[j]))
        end = start + int(p[j, k])
        heapq.heappush(heaps[k], (end, g))
        fmin[k] = heaps[k][0][0]
        row = first[j] + rnd[j] * K[j] + placed[j]
        x[row], gpu[row] = start, k
        round_end[j] = max(round_end[j], end + int(s[j, k]))
        placed[j] += 1
        if placed[j] == K[j]:
            barrier[j], round_end[j], placed[j] = round_end[j], 0, 0
            rnd[j] += 1
            left[j] -= 1
        fin[:, k] = np.where(elig[:, k] & (left > 0), np.maximum(fmin[k], barrier) + p[:, k],
                             big)
        fin[j] = np.where(elig[j] & (left[j] > 0), np.maximum(fmin, barrier[j]) + p[j], big)
    return Point(x, gpu, float((real.weight * barrier).sum()))


def hare_assignment(mach: Machines) -> np.ndarray:
    """Machine per task (``tasks`` order) of our ``hare`` heuristic's setup-free schedule.

    Any assignment is feasible in the relaxation (x may grow); this one is a
    good start. ``hare`` is deterministic (its budget counts placements).
    """
    from hare_opt.heuristics.hare import solve_hare  # only with ``hare_start``

    free = mach.real.without_setups()
    return mach.of_gpu[_assignment(free, solve_hare(free).schedule)[1]]


class LPTimeLimit(HareOptError):
    """An ``AssignmentLP`` solve stopped by its time limit (no optimal x)."""


class LPFailed(HareOptError):
    """An ``AssignmentLP`` solve HiGHS could not finish (no optimal x): at the size
    limits the machine rows' right-hand sides (squared loads) pass HiGHS's infinity."""


class AssignmentLP:
    """The relaxation with y fixed: an LP in x, whose optimum is a feasible point.

    Kept in one HiGHS object so that moving a task to another machine changes a few
    coefficients and re-solves from the previous basis (the local search).
    """

    def __init__(self, mach: Machines, tasks: RelaxedTasks, gpu: np.ndarray,
                 time_limit: float | None = None):
        inst = mach.inst
        self.mach, self.inst, self.tasks = mach, inst, tasks
        self.gpu = gpu.copy()
        self.proc = np.where(inst.eligible, inst.proc, 0)[tasks.job].astype(float)  # (T, M)
        self.span = (inst.proc + inst.sync)[tasks.job].astype(float)
        p = self.proc[np.arange(len(gpu)), gpu]
        self.load = np.bincount(gpu, weights=p, minlength=inst.num_gpus)
        self.square = np.bincount(gpu, weights=p * p, minlength=inst.num_gpus)
        self.h = self._build(gpu, p)
        if time_limit is not None:  # the first solve is from scratch: seconds at 10^5 columns
            self.h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
        self.objective = self.solve()
        if time_limit is not None:  # re-solves from its basis are the caller's to bound
            self.h.setOptionValue("time_limit", math.inf)

    def _build(self, gpu: np.ndarray, p: np.ndarray):
        """The LP as HiGHS arrays, built in one pass of NumPy (a plan's relaxation has 10^4
        tasks; a Python row per task cost a tenth of a testbed plan). Columns: x per task,
        then b per (job, round). Rows, per task in ``tasks`` order: b - x_i >= d_i, then
        x_i - b_prev >= 0 unless its round is its job's first; then one per machine:
        sum_i p_i x_i >= (f(L) - Q) / 2 over its tasks in index order (empty rows too).
        ``tests/test_relaxation.py`` checks it against a row-by-row build."""
        inst, tasks, mach = self.inst, self.tasks, self.mach
        t = len(gpu)
        start = np.zeros(t, dtype=np.int64)
        cut = np.flatnonzero(np.diff(tasks.job) | np.diff(tasks.round)) + 1
        start[cut] = 1
        rid = np.cumsum(start)  # round of each task (columns t + rid)
        first = np.r_[0, cut]
        nr = len(first)
        rjob = tasks.job[first]
        last = tasks.round[first] == inst.rounds[rjob] - 1
        prev = (tasks.round > 0).astype(np.int64)  # a task's round has one before it
        per_task = 1 + prev
        row0 = np.cumsum(per_task) - per_task  # its barrier row; the precedence row next
        self.xcol = list(range(t))
        self.brow = row0.copy()
        nb = int(per_task.sum())
        lower = np.maximum(inst.release[tasks.job], mach.amin[gpu]).astype(float)
        col_lower = np.r_[lower, np.zeros(nr)]
        cost = np.r_[np.zeros(t), np.where(last, inst.weight[rjob], 0).astype(float)]
        # two non-zeros per barrier / precedence row
        idx = np.empty((nb, 2), dtype=np.int64)
        val = np.empty((nb, 2))
        row_lo = np.empty(nb)
        idx[row0, 0], idx[row0, 1] = t + rid, np.arange(t)
        val[row0] = (1.0, -1.0)
        row_lo[row0] = self.span[np.arange(t), gpu]
        pr = row0[prev == 1] + 1
        idx[pr, 0], idx[pr, 1] = np.flatnonzero(prev), t + rid[prev == 1] - 1
        val[pr] = (1.0, -1.0)
        row_lo[pr] = 0.0
        m = inst.num_gpus
        self.qrow = np.arange(nb, nb + m)
        on = np.argsort(gpu, kind="stable")
        need = [self._need(g) for g in range(m)]
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = t + nr, nb + m
        lp.col_cost_ = cost
        lp.col_lower_ = col_lower
        lp.col_upper_ = np.full(t + nr, INF)
        lp.row_lower_ = np.r_[row_lo, need]
        lp.row_upper_ = np.full(nb + m, INF)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = np.r_[np.arange(0, 2 * nb + 1, 2),
                                    2 * nb + np.cumsum(np.bincount(gpu, minlength=m))]
        lp.a_matrix_.index_ = np.r_[idx.ravel(), on].astype(np.int32)
        lp.a_matrix_.value_ = np.r_[val.ravel(), p[on]].astype(float)
        h = new_highs(None)
        # Primal simplex: a move changes one task's machine rows, after which HiGHS's
        # default (dual) re-solve took about 3x the CPU (a testbed plan, 40 jobs); the
        # optimum is the same LP's, possibly another optimal vertex.
        h.setOptionValue("simplex_strategy", 4)
        h.passModel(lp)
        return h

    def _lower(self, i: int, m: int) -> float:
        return float(max(self.inst.release[self.tasks.job[i]], self.mach.amin[m]))

    def _need(self, m: int) -> float:
        """(f_m(L) - Q) / 2: what sum_i p x on machine m must reach."""
        return float(self.mach.f(m, self.load[m]) - self.square[m]) / 2

    def solve(self) -> float:
        run_highs(self.h)
        if self.h.getModelStatus() not in (highspy.HighsModelStatus.kOptimal,
                                           highspy.HighsModelStatus.kTimeLimit):
            # primal simplex has called a bounded LP (costs >= 0, starts bounded below)
            # unbounded (testbed, seed 3000): solved again from scratch by the default
            self.h.setOptionValue("simplex_strategy", 1)
            self.h.clearSolver()
            run_highs(self.h)
            self.h.setOptionValue("simplex_strategy", 4)
        if self.h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit:
            raise LPTimeLimit("the LP with the assignment fixed reached its time limit")
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise LPFailed("the LP with the assignment fixed ended with "
                               f"{self.h.modelStatusToString(self.h.getModelStatus())}")
        self.objective = float(self.h.getInfo().objective_function_value)
        return self.objective

    def move(self, i: int, m: int) -> None:
        """Put task i on machine m (call ``solve`` after)."""
        old = int(self.gpu[i])
        p, q = self.proc[i, old], self.proc[i, m]
        self.gpu[i] = m
        self.load[old] -= p
        self.square[old] -= p * p
        self.load[m] += q
        self.square[m] += q * q
        self.h.changeCoeff(int(self.qrow[old]), self.xcol[i], 0.0)
        self.h.changeCoeff(int(self.qrow[m]), self.xcol[i], q)
        for g in (old, m):
            self.h.changeRowBounds(int(self.qrow[g]), self._need(g), INF)
        self.h.changeRowBounds(int(self.brow[i]), self.span[i, m], INF)
        self.h.changeColBounds(self.xcol[i], self._lower(i, m), INF)

    def point(self) -> Point:
        x = np.array(self.h.getSolution().col_value)[:len(self.xcol)]
        return canonical(self.mach, self.tasks, Point(x, self.gpu.copy(), self.objective))

    def estimates(self) -> np.ndarray:
        """(T, M) first-order change of the objective if task i moved to machine m (duals).

        Leaving m lowers its row's requirement by (f(L_m) - f(L_m - p) - p^2) / 2 and its
        left side by p x_i; joining m' raises them by (f(L' + p') - f(L') - p'^2) / 2 and
        p' x_i; the barrier row moves by d' - d.
        """
        sol = self.h.getSolution()
        dual = np.abs(np.array(sol.row_dual))
        lam, mu = dual[self.qrow], dual[self.brow]
        x = np.array(sol.col_value)[:len(self.xcol)]
        t = np.arange(len(self.gpu))
        g = self.gpu
        f = self.mach.f
        p, d = self.proc[t, g], self.span[t, g]
        leave = lam[g] * ((f(g, self.load[g]) - f(g, self.load[g] - p) - p * p) / 2 - p * x)
        ms = np.arange(self.inst.num_gpus)[None, :]
        grow = (f(ms, self.load[None, :] + self.proc) - f(ms, self.load[None, :])
                - self.proc ** 2) / 2
        join = lam[None, :] * (grow - self.proc * x[:, None])
        est = mu[:, None] * (self.span - d[:, None]) + join - leave[:, None]
        est[~self.inst.eligible[self.tasks.job]] = INF
        est[t, g] = INF
        return est


def fixed_assignment_lp(inst: Instance, tasks: RelaxedTasks, gpu: np.ndarray,
                        avail) -> Point:
    """The relaxation's best point with y fixed to ``gpu`` (``avail``: see ``as_machines``)."""
    return AssignmentLP(as_machines(inst, avail), tasks, gpu).point()


def canonical(mach: Machines, tasks: RelaxedTasks, pt: Point) -> Point:
    """The same point as the model's symmetry breaking wants it.

    Interchangeable machines (``Machines.key``) relabelled by non-increasing load,
    then each round's (identical) tasks listed by machine, then start.
    """
    inst = mach.inst
    load = np.bincount(pt.gpu, weights=inst.proc[tasks.job, pt.gpu], minlength=inst.num_gpus)
    relabel = np.arange(inst.num_gpus)
    groups: dict[tuple, list[int]] = {}
    for m in range(inst.num_gpus):
        groups.setdefault(mach.key(m), []).append(m)
    for ms in groups.values():
        by_load = sorted(ms, key=lambda m: (-load[m], m))
        relabel[by_load] = ms
    gpu = relabel[pt.gpu]
    key = np.lexsort((pt.x, gpu, tasks.round, tasks.job))
    return Point(pt.x[key], gpu[key], pt.objective)


def local_search(lp: AssignmentLP, evaluations: int, tries: int = 30,
                 deadline: float | None = None, stop=None) -> tuple[Point, int]:
    """Move one task at a time while the LP improves; moves tried in the duals' order.

    At most ``evaluations`` LP solves (deterministic) and, if given, until
    ``deadline`` (perf_counter) or a set ``stop`` event. Returns the best point and
    the solves used.
    """
    used, stale = 0, False
    while used < evaluations and (deadline is None or time.perf_counter() < deadline) \
            and (stop is None or not stop.is_set()):
        est = lp.estimates()
        order = np.argsort(est, axis=None, kind="stable")[:tries]
        before = lp.objective
        for flat in order.tolist():
            i, m = divmod(flat, est.shape[1])
            if est[i, m] >= 0 or used >= evaluations or \
                    (deadline is not None and time.perf_counter() >= deadline):
                break
            old = int(lp.gpu[i])
            lp.move(i, m)
            used += 1
            if lp.solve() < before - 1e-9 * max(1.0, abs(before)):
                stale = False
                break
            # Undone without a solve: the next move's solve starts from this basis, and
            # the undone LP (the one before, objective ``before``) is solved again only
            # if its point is needed. A solve after every undo was half of all solves;
            # restoring the old basis instead took twice the CPU at 160 GPUs (HiGHS
            # refactorises from a set basis).
            lp.move(i, old)
            lp.objective, stale = before, True
        if stale:
            lp.solve()
            stale = False
        if lp.objective >= before - 1e-9 * max(1.0, abs(before)):
            break
    if stale:
        lp.solve()
    return lp.point(), used


# --- HiGHS -------------------------------------------------------------------

def to_highs(lm: LinearModel, *, mip: bool, threads: int | None = None):
    """A quiet HiGHS object holding ``lm`` (``threads``: see ``util.highs.use_threads``)."""
    h = new_highs(threads)
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
    if mip:
        lp.integrality_ = [highspy.HighsVarType.kInteger if b else
                           highspy.HighsVarType.kContinuous for b in lm.integer]
    h.passModel(lp)
    return h
