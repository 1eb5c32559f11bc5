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
            return cls(
                mode,
                real,
                avail,
                real,
                np.arange(real.num_gpus),
                ones,
                avail,
                avail,
                np.zeros(real.num_gpus),
            )
        if mode != "per-type":
            raise HareOptError(f"relaxation: must be one of {', '.join(MODES)}, got {mode!r}")
        k = real.gpu_type_index
        cap = real.type_count.astype(float)
        amin = np.full(len(cap), np.inf)
        np.minimum.at(amin, k, avail)
        amean = np.bincount(k, weights=avail, minlength=len(cap)) / cap
        gamma = -np.bincount(k, weights=(avail - amean[k]) ** 2, minlength=len(cap))
        inst = Instance(
            tuple(GPU(t, t) for t in real.gpu_types), real.jobs, real.name, real.time_unit
        )
        return cls(mode, real, avail, inst, k, cap, amin, amean, gamma)

    def f(self, m, load):
        """f_m(load): the least 2 S_m + Q_m a machine-m load may have (vectorised)."""
        load = np.asarray(load, dtype=float)
        return load * load / self.cap[m] + np.maximum(
            2 * self.amin[m] * load, 2 * self.amean[m] * load + self.gamma[m]
        )

    @property
    def type_of(self) -> np.ndarray:
        """(machines,) GPU type index of each machine (in the real instance's types)."""
        return (
            self.real.gpu_type_index
            if self.mode == "per-gpu"
            else np.arange(len(self.real.gpu_types))
        )

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
        pos = np.arange(len(job), dtype=np.int64) - np.repeat(np.cumsum(per_job) - per_job, per_job)
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
    tptr = np.concatenate(
        [[0], np.cumsum(np.bincount(gtype, minlength=len(real.gpu_types)))]
    ).astype(np.int64)
    free = np.ceil(np.asarray(mach.avail, dtype=float)).astype(np.int64)
    x = np.empty(len(tasks.job))
    gpu = np.empty(len(tasks.job), dtype=np.int64)
    i64 = np.int64
    barrier = kernel(
        free,
        tgpu,
        tptr,
        real.proc_by_type.astype(i64),
        real.sync_by_type.astype(i64),
        real.release.astype(i64),
        real.rounds.astype(i64),
        real.tasks_per_round.astype(i64),
        rank,
        np.ascontiguousarray(real.eligible_by_type, dtype=np.bool_),
        i64(big),
        x,
        gpu,
    )
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
        fin[:, k] = np.where(elig[:, k] & (left > 0), np.maximum(fmin[k], barrier) + p[:, k], big)
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


#: Exact evaluations of step 1's local search by default: a cap, not a setting; a search
#: stops at a local optimum well before it (docs/simulator.md counts the plans it capped).
SEARCH_EVALS = 5000
#: Moves evaluated exactly per round of the search: the best by first-order estimate.
SEARCH_TRIES = 30
#: Seconds a batch of the search's evaluations should take: it checks the clock and a
#: stop between batches (a time limit is kept to about a second).
BATCH_S = 0.05


class AssignmentSearch:
    """The relaxation with y fixed, solved in closed form, and a local search over y.

    With the assignment fixed the relaxation is an LP in x. Its optimum: given each job's
    completion, a task may start as late as its round's barrier allows, which only helps
    the machine rows (their left side grows with x); so every task ends at its barrier,
    each job's barriers are its earliest chain (``max(barrier before, release, A_m) + p +
    s`` per task), and what the rows still need is met by delaying whole jobs, a covering
    LP with one row per machine (``_relaxation_kernel``). tests/test_relaxation.py checks
    the value against the LP in x solved by HiGHS. The point: those starts, each job's
    delayed by its delta.

    ``search`` moves one task at a time to another machine while that lowers the value
    (first improvement among the ``SEARCH_TRIES`` moves of best first-order estimate, each
    evaluated exactly), until no such move does: a local optimum of the relaxation over
    single-task moves, or the evaluation cap.
    """

    def __init__(self, mach: Machines, tasks: RelaxedTasks, gpu: np.ndarray):
        from hare_opt.heuristics import _relaxation_kernel as kern

        inst = mach.inst
        self.mach, self.inst, self.tasks, self.kern = mach, inst, tasks, kern
        self.gpu = np.ascontiguousarray(gpu, dtype=np.int64).copy()
        f64, i64 = np.float64, np.int64
        tt = len(tasks.job)
        cut = np.flatnonzero(np.diff(tasks.job) | np.diff(tasks.round)) + 1
        self.rptr = np.r_[0, cut, tt].astype(i64) if tt else np.zeros(1, i64)
        nr = len(self.rptr) - 1
        self.trnd = np.repeat(np.arange(nr, dtype=i64), np.diff(self.rptr))
        self.jptr = np.r_[0, np.cumsum(inst.rounds)].astype(i64)
        self.tjob = tasks.job.astype(i64)
        self.p = np.ascontiguousarray(np.where(inst.eligible, inst.proc, 0), dtype=f64)
        self.d = np.ascontiguousarray(
            np.where(inst.eligible, inst.proc + inst.sync, 0), dtype=f64
        )  # C order: one compiled signature
        self.elig = np.ascontiguousarray(inst.eligible, dtype=np.bool_)
        self.rel, self.w = inst.release.astype(f64), inst.weight.astype(f64)
        self.env = tuple(
            np.ascontiguousarray(v, dtype=f64)
            for v in (mach.cap, mach.amin, mach.amean, mach.gamma)
        )
        self.done = False
        self.value = np.array(self._setup(self.gpu))
        self.ranked, self.ranked_mv = np.zeros(SEARCH_TRIES), np.zeros(SEARCH_TRIES, i64)
        self.cursor = np.zeros(2, dtype=i64)  # moves ranked, next to evaluate

    def _setup(self, gpu: np.ndarray) -> tuple[float, float]:
        """Fresh state at assignment ``gpu``: (value, its part sum_n w_n C_n)."""
        nn, mm, tt = self.inst.num_jobs, self.inst.num_gpus, len(gpu)
        nr = len(self.rptr) - 1
        self.bar, self.dr = np.zeros(nr), np.zeros(nr)
        self.x, self.comp = np.zeros(tt), np.zeros(nn)
        self.work, self.jlhs = np.zeros((mm, nn)), np.zeros((mm, nn))
        self.load, self.square, self.lhs, self.g = (np.zeros(mm) for _ in range(4))
        self.delta, self.lam = np.zeros(nn), np.zeros(mm)
        base, lp = self.kern.setup(
            gpu,
            self.tjob,
            self.jptr,
            self.rptr,
            self.p,
            self.d,
            self.rel,
            self.w,
            *self.env,
            self.bar,
            self.dr,
            self.x,
            self.comp,
            self.work,
            self.jlhs,
            self.load,
            self.square,
            self.lhs,
            self.g,
            self.delta,
            self.lam,
        )
        return base + lp, base

    @property
    def objective(self) -> float:
        return float(self.value[0])

    def search(self, evaluations: int, deadline: float | None = None, stop=None) -> int:
        """Up to ``evaluations`` exact evaluations, in batches sized to take about
        ``BATCH_S`` each, so that ``deadline`` (a perf_counter time) and a set ``stop``
        event are seen between them (the batches change nothing else: the kernel resumes
        where it stopped); returns how many were used. ``done``: the search reached its
        local optimum."""
        used, batch = 0, 16
        while used < evaluations and not self.done:
            if (deadline is not None and time.perf_counter() >= deadline) or (
                stop is not None and stop.is_set()
            ):
                break
            t0 = time.perf_counter()
            step, self.done = self.kern.search(
                min(batch, evaluations - used),
                self.gpu,
                self.tjob,
                self.trnd,
                self.jptr,
                self.rptr,
                self.p,
                self.d,
                self.elig,
                self.rel,
                self.w,
                *self.env,
                self.bar,
                self.dr,
                self.x,
                self.comp,
                self.work,
                self.jlhs,
                self.load,
                self.square,
                self.lhs,
                self.g,
                self.delta,
                self.lam,
                self.value,
                self.ranked,
                self.ranked_mv,
                self.cursor,
            )
            used += int(step)
            if step == 0:
                break
            spent = max(time.perf_counter() - t0, 1e-6)
            batch = int(min(4 * batch, max(1, batch * BATCH_S / spent)))
        return used

    def point(self) -> Point:
        """The optimum at the current assignment: starts (each job's delay added), machines,
        value (the state recomputed from scratch, not accumulated over moves; the search
        ranks its moves again after it)."""
        self.value[:] = self._setup(self.gpu)
        self.cursor[:] = 0
        x = self.x + self.delta[self.tjob]
        return canonical(self.mach, self.tasks, Point(x, self.gpu.copy(), self.objective))


def fixed_assignment_lp(inst: Instance, tasks: RelaxedTasks, gpu: np.ndarray, avail) -> Point:
    """The relaxation's best point with y fixed to ``gpu`` (``avail``: see ``as_machines``)."""
    return AssignmentSearch(as_machines(inst, avail), tasks, gpu).point()


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
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous
            for b in lm.integer
        ]
    h.passModel(lp)
    return h
