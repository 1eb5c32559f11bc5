"""Feasible points of the relaxation Hare_Sched_RL: starts, the fixed-assignment LP, a local search.

With the assignment y fixed, the relaxation is an LP in the starts x (each
GPU's Queyranne inequality becomes linear), so every assignment gives a
feasible point and an upper bound on the relaxation's optimum. The MILP in
``relaxation`` uses the best one as its incumbent and MIP start; this module
also holds the solver-neutral model container and the HiGHS plumbing both use.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import highspy
import numpy as np

from hare_opt.heuristics.hare import solve_hare
from hare_opt.heuristics.rules import eft_state
from hare_opt.model import HareOptError, Instance
from hare_opt.util.highs import new_highs

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


def eft_start(inst: Instance, tasks: RelaxedTasks, avail: np.ndarray) -> Point:
    """The setup-free EFT schedule (GPU m free from A_m), in ``tasks`` order: a feasible point."""
    free = inst.without_setups()
    state = eft_state(free, np.ceil(avail).astype(np.int64))
    return Point(*_assignment(free, state.schedule()), float(state.objective()))


def hare_assignment(inst: Instance) -> np.ndarray:
    """GPU per task (``tasks`` order) of our ``hare`` heuristic's setup-free schedule.

    Any assignment is feasible in the relaxation (x may grow); this one is a
    good start. ``hare`` is deterministic (its budget counts placements).
    """
    free = inst.without_setups()
    return _assignment(free, solve_hare(free).schedule)[1]


class AssignmentLP:
    """The relaxation with y fixed: an LP in x, whose optimum is a feasible point.

    Kept in one HiGHS object so that moving a task to another GPU changes a few
    coefficients and re-solves from the previous basis (the local search).
    """

    def __init__(self, inst: Instance, tasks: RelaxedTasks, gpu: np.ndarray,
                 avail: np.ndarray):
        self.inst, self.tasks, self.avail = inst, tasks, avail
        self.gpu = gpu.copy()
        self.proc = np.where(inst.eligible, inst.proc, 0)[tasks.job].astype(float)  # (T, M)
        self.span = (inst.proc + inst.sync)[tasks.job].astype(float)
        p = self.proc[np.arange(len(gpu)), gpu]
        self.load = np.bincount(gpu, weights=p, minlength=inst.num_gpus)
        self.square = np.bincount(gpu, weights=p * p, minlength=inst.num_gpus)
        lm = LinearModel()
        self.xcol = [lm.var(self._lower(i, int(m)), INF) for i, m in enumerate(gpu.tolist())]
        self.brow = np.empty(len(gpu), dtype=np.int64)
        prev = None
        for ids in tasks.rounds():
            n = int(tasks.job[ids[0]])
            last = tasks.round[ids[0]] == inst.rounds[n] - 1
            b = lm.var(0.0, INF, cost=float(inst.weight[n]) if last else 0.0)
            for i in ids.tolist():
                self.brow[i] = len(lm.rows)
                lm.row({b: 1.0, self.xcol[i]: -1.0}, lo=self.span[i, gpu[i]])
                if prev is not None:
                    lm.row({self.xcol[i]: 1.0, prev: -1.0}, lo=0.0)
            prev = None if last else b
        self.qrow = np.arange(len(lm.rows), len(lm.rows) + inst.num_gpus)
        for m in range(inst.num_gpus):  # one row per GPU, empty ones too (tasks move)
            on = np.flatnonzero(gpu == m).tolist()
            lm.row({self.xcol[i]: p[i] for i in on}, lo=self._need(m))
        self.h = to_highs(lm, mip=False)
        self.objective = self.solve()

    def _lower(self, i: int, m: int) -> float:
        return float(max(self.inst.release[self.tasks.job[i]], self.avail[m]))

    def _need(self, m: int) -> float:
        """(L^2 - Q) / 2 + A L: what sum_i p x on GPU m must reach."""
        return (self.load[m] ** 2 - self.square[m]) / 2 + self.avail[m] * self.load[m]

    def solve(self) -> float:
        self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise HareOptError("the LP with the assignment fixed ended with "
                               f"{self.h.modelStatusToString(self.h.getModelStatus())}")
        self.objective = float(self.h.getInfo().objective_function_value)
        return self.objective

    def move(self, i: int, m: int) -> None:
        """Put task i on GPU m (call ``solve`` after)."""
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
        return canonical(self.inst, self.tasks, Point(x, self.gpu.copy(), self.objective),
                         self.avail)

    def estimates(self) -> np.ndarray:
        """(T, M) first-order change of the objective if task i moved to GPU m (from duals).

        Leaving m relaxes its row by p (L_m - p + A_m - x_i), joining m' tightens
        that of m' by p' (L_m' + A_m' - x_i), the barrier row moves by d' - d.
        """
        sol = self.h.getSolution()
        dual = np.abs(np.array(sol.row_dual))
        lam, mu = dual[self.qrow], dual[self.brow]
        x = np.array(sol.col_value)[:len(self.xcol)]
        t = np.arange(len(self.gpu))
        g = self.gpu
        p, d = self.proc[t, g], self.span[t, g]
        leave = lam[g] * p * (self.load[g] - p + self.avail[g] - x)
        join = lam[None, :] * self.proc * (self.load + self.avail)[None, :] - \
            lam[None, :] * self.proc * x[:, None]
        est = mu[:, None] * (self.span - d[:, None]) + join - leave[:, None]
        est[~self.inst.eligible[self.tasks.job]] = INF
        est[t, g] = INF
        return est


def fixed_assignment_lp(inst: Instance, tasks: RelaxedTasks, gpu: np.ndarray,
                        avail: np.ndarray) -> Point:
    """The relaxation's best point with y fixed to ``gpu``."""
    return AssignmentLP(inst, tasks, gpu, avail).point()


def canonical(inst: Instance, tasks: RelaxedTasks, pt: Point, avail: np.ndarray) -> Point:
    """The same point as the model's symmetry breaking wants it.

    Identical GPUs (type and availability) relabelled by non-increasing load,
    then each round's (identical) tasks listed by GPU, then start.
    """
    load = np.bincount(pt.gpu, weights=inst.proc[tasks.job, pt.gpu], minlength=inst.num_gpus)
    relabel = np.arange(inst.num_gpus)
    groups: dict[tuple[int, float], list[int]] = {}
    for m in range(inst.num_gpus):
        groups.setdefault((int(inst.gpu_type_index[m]), float(avail[m])), []).append(m)
    for ms in groups.values():
        by_load = sorted(ms, key=lambda m: (-load[m], m))
        relabel[by_load] = ms
    gpu = relabel[pt.gpu]
    key = np.lexsort((pt.x, gpu, tasks.round, tasks.job))
    return Point(pt.x[key], gpu[key], pt.objective)


def local_search(lp: AssignmentLP, evaluations: int, tries: int = 30,
                 deadline: float | None = None) -> tuple[Point, int]:
    """Move one task at a time while the LP improves; moves tried in the duals' order.

    At most ``evaluations`` LP solves (deterministic) and, if given, until
    ``deadline`` (perf_counter). Returns the best point and the solves used.
    """
    used = 0
    while used < evaluations and (deadline is None or time.perf_counter() < deadline):
        est = lp.estimates()
        order = np.argsort(est, axis=None, kind="stable")[:tries]
        before = lp.objective
        for flat in order.tolist():
            i, m = divmod(flat, est.shape[1])
            if est[i, m] >= 0 or used >= evaluations:
                break
            old = int(lp.gpu[i])
            lp.move(i, m)
            used += 1
            if lp.solve() < before - 1e-9 * max(1.0, abs(before)):
                break
            lp.move(i, old)
            lp.solve()
        if lp.objective >= before - 1e-9 * max(1.0, abs(before)):
            break
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
