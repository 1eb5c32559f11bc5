"""The CP-SAT formulation (docs/formulations.md explains every part and why it is valid).

One start variable per task and one optional fixed-size interval per
(task, eligible GPU) sharing it; a barrier variable per (job, round); NoOverlap
per GPU; a circuit per GPU for sequence-dependent switching setups, built only
where a job with a non-zero overhead may run. Redundant constraints (critical
path, per-round span, per-job upper bounds from an incumbent) and symmetry
breaking are switchable so that their effect can be measured.

``Features.pooled``: without setups the GPUs of one type are interchangeable, so the
model may choose a *type* per task instead of a GPU, with one cumulative per type
(capacity: its GPU count) instead of a NoOverlap per GPU. That removes the symmetry of
identical GPUs, which is what keeps the per-GPU model from proving optima of instances
with eight V100s; ``Built.gpus`` turns a solution back into GPUs by interval colouring.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hare_opt.model import Instance, SolverError
from hare_opt.solvers.cpsat import size
from hare_opt.solvers.cpsat.tasks import Tasks
from hare_opt.util.ortools import cp_model


@dataclass(frozen=True)
class Features:
    """Switches for the optional parts of the model (all valid; defaults are the fastest)."""

    symmetry: bool = True  # order identical tasks of a round; value precedence on GPUs
    redundant: bool = True  # critical-path and per-round span bounds on barriers
    cumulative: bool = False  # one cumulative over all tasks with capacity = number of GPUs
    set_times: bool = False  # decision strategy for the "fixed" worker: earliest start first
    setups: str = "circuit"  # exact; relaxations: "first" (one per job and GPU), "ignore"
    setup_energy: bool = True  # circuit: each paid setup as an interval in the GPU's NoOverlap
    time_indexed: int = 0  # add a time-indexed relaxation if it holds at most this many entries
    pooled: bool = False  # a GPU type per task, one cumulative per type (no setups only)


@dataclass(frozen=True)
class Resources:
    """What a task chooses from: GPU types (pooled) or GPUs, with each one's capacity."""

    pooled: bool
    ok: np.ndarray  # job x resource: eligible
    proc: np.ndarray  # job x resource: a task's processing time
    sync: np.ndarray  # job x resource: its sync time
    cap: np.ndarray  # per resource: tasks at once (its type's GPU count, or 1)
    kind: np.ndarray  # per resource: its GPU type's index
    of_gpu: np.ndarray  # per GPU: its resource

    @classmethod
    def of(cls, inst: Instance, pooled: bool) -> Resources:
        if pooled:
            kinds = np.arange(len(inst.gpu_types))
            by_type = (inst.eligible_by_type, inst.proc_by_type, inst.sync_by_type)
            return cls(True, *by_type, inst.type_count, kinds, inst.gpu_type_index)
        gpus = np.arange(inst.num_gpus)
        ones = np.ones(inst.num_gpus, dtype=np.int64)
        return cls(False, inst.eligible, inst.proc, inst.sync, ones, inst.gpu_type_index, gpus)


@dataclass
class Built:
    """The model with handles to its variables, for hints and for reading a solution."""

    model: cp_model.CpModel
    tasks: Tasks
    start: list[cp_model.IntVar]
    assign: list[dict[int, cp_model.IntVar]]  # task -> {gpu: literal}
    barrier: list[list[cp_model.IntVar]]  # job -> round -> barrier
    res: Resources  # what ``assign`` and ``intervals`` index: GPUs, or GPU types (pooled)
    arcs: dict[int, dict[tuple[int, int], cp_model.IntVar]] = field(default_factory=dict)
    used: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)  # (task, gpu)
    intervals: list[list[cp_model.IntervalVar]] = field(default_factory=list)  # per GPU
    switch: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)  # (task, gpu)
    objective: cp_model.LinearExpr | int = 0
    horizon: int = 0
    stats: dict = field(default_factory=dict)
    window: list[tuple[int, int]] = field(default_factory=list)  # start domain per task

    @property
    def pooled(self) -> bool:
        return self.res.pooled

    def gpus(self, inst: Instance, start: np.ndarray, chosen: Callable[[Any], bool]) -> np.ndarray:
        """Each task's GPU in a solution (``chosen``: a literal's value in it). Pooled: each
        task, in order of start, goes to a GPU of its type that is free by then; at most
        m_k intervals of type k overlap at any instant, so one always is."""
        pick = np.array(
            [next(g for g, lit in lits.items() if chosen(lit)) for lits in self.assign],
            dtype=np.int64,
        )
        if not self.pooled:
            return pick
        proc = self.res.proc[self.tasks.job, pick]
        free: list[list[tuple[int, int]]] = [
            [(0, g) for g in group] for group in self.tasks.type_groups()
        ]
        gpu = np.empty(self.tasks.count, dtype=np.int64)
        for i in np.lexsort((proc, start)).tolist():
            at, g = heapq.heappop(free[pick[i]])
            if at > start[i]:
                raise SolverError(f"cpsat: type {inst.gpu_types[pick[i]]} over capacity")
            gpu[i] = g
            heapq.heappush(free[pick[i]], (int(start[i] + proc[i]), g))
        return gpu


def barrier_lower_bounds(inst: Instance) -> list[list[int]]:
    """Earliest possible barrier of every round: release plus minimum round times."""
    first, nxt = inst.round_time_first, inst.round_time_next
    return [
        [int(inst.release[j] + first[j] + r * nxt[j]) for r in range(int(inst.rounds[j]))]
        for j in range(inst.num_jobs)
    ]


def latest_start(inst: Instance, j: int, r: int, c_max: int) -> int:
    """Latest start of a round-r task of job j if j completes by ``c_max``.

    The task ends and syncs before barrier r, and each later round lasts at
    least the minimum round time.
    """
    ok = inst.eligible[j]
    tail = int((inst.proc[j, ok] + inst.sync[j, ok]).min())
    return c_max - (int(inst.rounds[j]) - 1 - r) * int(inst.round_time_next[j]) - tail


def serial_horizon(inst: Instance) -> int:
    """A time by which some schedule has finished: every task alone, slowest GPU, fresh setup."""
    per_task = np.where(inst.eligible, inst.proc + inst.sync, 0).max(axis=1) + inst.overhead
    return int(inst.release.max() + (per_task * inst.rounds * inst.tasks_per_round).sum())


def _no_poll() -> None:
    pass


def build(
    inst: Instance,
    features: Features = Features(),
    upper_bound: int | None = None,
    poll: Callable[[], None] | None = None,
) -> Built:
    """The CP-SAT model; with ``upper_bound`` only schedules scoring at most that are kept.
    ``poll`` is called every few hundred tasks and per GPU (it may raise to stop building)."""
    poll = poll or _no_poll
    pooled = features.pooled
    if pooled and (inst.overhead > 0).any():
        raise ValueError("the pooled model needs every switching overhead 0")
    res = Resources.of(inst, pooled)
    ok, proc, sync = res.ok, res.proc, res.sync
    m = cp_model.CpModel()
    tasks = Tasks(inst)
    n = tasks.count
    lb = barrier_lower_bounds(inst)
    w = [int(x) for x in inst.weight]
    last_lb = [lb[j][-1] for j in range(inst.num_jobs)]
    if upper_bound is None:
        horizon = serial_horizon(inst)
        c_max = [horizon] * inst.num_jobs
    else:
        # w_j C_j <= U - sum_{i != j} w_i LB_i: a tight horizon per job.
        total = sum(wi * li for wi, li in zip(w, last_lb))
        c_max = [
            max(last_lb[j], (upper_bound - total + w[j] * last_lb[j]) // w[j])
            for j in range(inst.num_jobs)
        ]
        horizon = max(c_max)

    barrier = [
        [m.new_int_var(lb[j][r], c_max[j], f"B{j}_{r}") for r in range(len(lb[j]))]
        for j in range(inst.num_jobs)
    ]
    start, assign, window = [], [], []
    intervals: list[list[cp_model.IntervalVar]] = [[] for _ in range(ok.shape[1])]
    for i in range(n):
        if not i % 16:
            poll()
        j, r = int(tasks.job[i]), int(tasks.round[i])
        # Every task of j follows a setup of j on its GPU at or after r_j (docs: "first on GPU").
        earliest = lb[j][r - 1] if r else int(inst.release[j] + inst.overhead[j])
        latest = latest_start(inst, j, r, c_max[j])
        window.append((earliest, max(earliest, latest)))
        s = m.new_int_var(*window[-1], f"s{i}")
        lits = {}
        for g in np.flatnonzero(ok[j]).tolist():
            lit = m.new_bool_var(f"x{i}_{g}")
            lits[g] = lit
            intervals[g].append(
                m.new_optional_fixed_size_interval_var(s, int(proc[j, g]), lit, f"I{i}_{g}")
            )
        m.add_exactly_one(lits.values())
        ready = s + sum(int(proc[j, g] + sync[j, g]) * lit for g, lit in lits.items())
        m.add(barrier[j][r] >= ready)
        if r:
            m.add(s >= barrier[j][r - 1])
        start.append(s)
        assign.append(lits)
    built = Built(
        m,
        tasks,
        start,
        assign,
        barrier,
        res,
        intervals=intervals,
        horizon=horizon,
        window=window,
    )

    if features.redundant:
        _add_redundant(built, inst)
    if features.symmetry:
        _add_task_order(built, inst, poll)
        if not pooled:
            _add_gpu_precedence(built, poll)
    if features.cumulative:
        _add_cumulative(built, inst, horizon, poll)
    if (inst.overhead > 0).any() and features.setups != "ignore":
        for g in range(inst.num_gpus):
            poll()
            nodes = [i for i, lits in enumerate(assign) if g in lits]
            if not (inst.overhead[tasks.job[nodes]] > 0).any():
                continue
            if features.setups == "first":
                _add_first_setups(built, inst, g, nodes)
            else:
                _add_circuit(
                    built,
                    inst,
                    g,
                    nodes,
                    ordered=features.symmetry,
                    energy=features.setup_energy,
                    poll=poll,
                )
    for g, on_g in enumerate(built.intervals):
        if res.cap[g] > 1:
            m.add_cumulative(on_g, [1] * len(on_g), int(res.cap[g]))
        else:  # a GPU, or a type of one GPU (NoOverlap propagates more than a cumulative)
            m.add_no_overlap(on_g)

    if features.time_indexed:
        built.stats["time_indexed"] = _add_time_indexed(built, inst, features.time_indexed, poll)
    if features.set_times:
        m.add_decision_strategy(start, cp_model.CHOOSE_LOWEST_MIN, cp_model.SELECT_MIN_VALUE)
    built.objective = cp_model.LinearExpr.weighted_sum(
        [barrier[j][-1] for j in range(inst.num_jobs)], w
    )
    if upper_bound is not None:
        m.add(built.objective <= upper_bound)
    m.minimize(built.objective)
    return built


def model_size(inst: Instance, features: Features = Features()) -> tuple[int, int]:
    """(task-GPU assignment literals, setup arcs) the model would hold (``size``)."""
    return size.model_size(inst, features.setups == "circuit", features.pooled)


def _add_redundant(b: Built, inst: Instance) -> None:
    """Barriers at least a minimum round time apart (critical path of the job)."""
    nxt = inst.round_time_next
    for j, rounds in enumerate(b.barrier):
        for r in range(1, len(rounds)):
            b.model.add(rounds[r] >= rounds[r - 1] + int(nxt[j]))


def _add_task_order(b: Built, inst: Instance, poll: Callable[[], None] = _no_poll) -> None:
    """Identical tasks of a round: (start, GPU type) non-decreasing in task number.

    Task 0 then starts first, so the round cannot end before its start plus the
    minimum round time (valid only together with this ordering).
    """
    tasks, m = b.tasks, b.model
    n_types = len(inst.gpu_types)
    tix = b.res.kind
    for j in range(inst.num_jobs):
        poll()
        K = int(inst.tasks_per_round[j])
        for r in range(int(inst.rounds[j])):
            first = tasks.index(j, r, 0)
            m.add(b.barrier[j][r] >= b.start[first] + int(inst.round_time_next[j]))
            keys = [
                n_types * b.start[i] + sum(int(tix[g]) * lit for g, lit in b.assign[i].items())
                for i in range(first, first + K)
            ]
            for a, c in zip(keys, keys[1:]):
                m.add(a <= c)


def _add_gpu_precedence(b: Built, poll: Callable[[], None] = _no_poll) -> None:
    """GPUs of one type: GPU h may run task i only if GPU h-1 ran some task before i."""
    m = b.model
    for group in b.tasks.type_groups():
        if len(group) < 2:
            continue
        prev: dict[int, cp_model.IntVar] = {}
        for i, lits in enumerate(b.assign):
            if not i % 64:
                poll()
            if group[0] not in lits:
                continue  # the job cannot run on this type
            for h in range(1, len(group)):
                before = prev.get(group[h - 1])
                if before is None:
                    m.add(lits[group[h]] == 0)
                else:
                    m.add_implication(lits[group[h]], before)
            for g in group[:-1]:
                if g not in prev:
                    prev[g] = lits[g]
                else:
                    u = m.new_bool_var(f"u{i}_{g}")
                    m.add_bool_or([prev[g], lits[g]]).only_enforce_if(u)
                    m.add_implication(prev[g], u)
                    m.add_implication(lits[g], u)
                    prev[g] = u
                    b.used[(i, g)] = u


def _add_cumulative(
    b: Built, inst: Instance, horizon: int, poll: Callable[[], None] = _no_poll
) -> None:
    """All tasks on the cluster as a whole: at most M run at once (energetic reasoning)."""
    m, proc = b.model, b.res.proc
    ivs = []
    for i, lits in enumerate(b.assign):
        if not i % 64:
            poll()
        j = int(b.tasks.job[i])
        p = [int(proc[j, g]) for g in lits]
        size = m.new_int_var(min(p), max(p), f"d{i}")
        m.add(size == sum(int(proc[j, g]) * lit for g, lit in lits.items()))
        end = m.new_int_var(0, horizon + max(p), f"e{i}")
        ivs.append(m.new_interval_var(b.start[i], size, end, f"J{i}"))
    m.add_cumulative(ivs, [1] * len(ivs), inst.num_gpus)


def _add_circuit(
    b: Built,
    inst: Instance,
    g: int,
    nodes: list[int],
    *,
    ordered: bool,
    energy: bool,
    poll: Callable[[], None] = _no_poll,
) -> None:
    """Sequence-dependent setups on GPU g: a circuit through the tasks it runs.

    Node 0 is the GPU's empty state; an arc a -> c means c runs right after a.
    A switch of job costs c's overhead; a first task pays it through its start
    domain (release + overhead). Arcs that the task order makes impossible
    (a later round, or a higher-numbered task of the same round, before) are
    left out. With ``energy`` every paid setup is also an interval [s - o, s)
    in the GPU's NoOverlap, so that its propagation and cuts see setup time.
    """
    m, tasks = b.model, b.tasks
    jobs, rounds, nums = tasks.job, tasks.round, tasks.task
    arcs: list[tuple[int, int, cp_model.LiteralT]] = []
    empty = m.new_bool_var(f"empty{g}")
    arcs.append((0, 0, empty))
    b.arcs[g] = {(-1, -1): empty}
    for i in nodes:
        m.add_implication(b.assign[i][g], empty.negated())
    m.add_bool_or([b.assign[i][g] for i in nodes] + [empty])
    into: dict[int, list[cp_model.IntVar]] = {c: [] for c in nodes}  # arcs that switch job
    for a_pos, a in enumerate(nodes, start=1):
        poll()  # a GPU of n tasks adds up to n^2 arcs: seconds for a few thousand
        arcs.append((a_pos, a_pos, b.assign[a][g].negated()))
        first, last = m.new_bool_var(f"f{a}_{g}"), m.new_bool_var(f"l{a}_{g}")
        arcs += [(0, a_pos, first), (a_pos, 0, last)]
        b.arcs[g][(-1, a)], b.arcs[g][(a, -1)] = first, last
        into[a].append(first)
        for c_pos, c in enumerate(nodes, start=1):
            if (
                a == c
                or jobs[a] == jobs[c]
                and (
                    rounds[a] > rounds[c]
                    or ordered
                    and rounds[a] == rounds[c]
                    and nums[a] > nums[c]
                )
            ):
                continue
            lit = m.new_bool_var(f"a{a}_{c}_{g}")
            arcs.append((a_pos, c_pos, lit))
            b.arcs[g][(a, c)] = lit
            gap = int(inst.proc[jobs[a], g])
            if jobs[a] != jobs[c]:
                gap += int(inst.overhead[jobs[c]])
                into[c].append(lit)
            m.add(b.start[c] >= b.start[a] + gap).only_enforce_if(lit)
    m.add_circuit(arcs)
    if not energy:
        return
    for c in nodes:
        o = int(inst.overhead[jobs[c]])
        if o:
            sw = m.new_bool_var(f"sw{c}_{g}")
            m.add(sw == sum(into[c]))
            b.switch[(c, g)] = sw
            b.intervals[g].append(
                m.new_optional_fixed_size_interval_var(b.start[c] - o, o, sw, f"S{c}_{g}")
            )


def _add_first_setups(b: Built, inst: Instance, g: int, nodes: list[int]) -> None:
    """A relaxation of setups: one of job j on GPU g before j's first task there.

    The first task of j on g follows another job or nothing, so [start - o_j,
    start) is free of tasks and after r_j; these windows of different jobs are
    disjoint. Later switches back to j are not charged.
    """
    m, jobs = b.model, b.tasks.job
    for j in sorted(set(jobs[nodes].tolist())):
        o = int(inst.overhead[j])
        if not o:
            continue
        mine = [i for i in nodes if jobs[i] == j]
        used = m.new_bool_var(f"y{j}_{g}")
        m.add_bool_or([b.assign[i][g] for i in mine]).only_enforce_if(used)
        for i in mine:
            m.add_implication(b.assign[i][g], used)
        at = m.new_int_var(int(inst.release[j]), b.horizon, f"F{j}_{g}")
        for i in mine:
            m.add(at + o <= b.start[i]).only_enforce_if(b.assign[i][g])
        b.intervals[g].append(m.new_optional_fixed_size_interval_var(at, o, used, f"S{j}_{g}"))


def _add_time_indexed(
    b: Built, inst: Instance, max_entries: int, poll: Callable[[], None] = _no_poll
) -> int:
    """Channel each start into literals y[i, g, t] (task i starts on g at t).

    At most one task in process on a GPU (pooled: m_k on type k) at each time (setups
    left out: still a relaxation) gives CP-SAT's LP the strong time-indexed bound for
    weighted completion times that disjunctive reasoning lacks. Memory grows with the
    (literal, time unit) entries of those rows, one per unit of a task's length, so the
    budget counts them. Returns that count, 0 when it exceeds ``max_entries``.
    """
    m, jobs = b.model, b.tasks.job
    proc, cap = b.res.proc, b.res.cap
    windows = b.window
    size = sum(
        (hi - lo + 1) * int(proc[jobs[i], list(b.assign[i])].sum())
        for i, (lo, hi) in enumerate(windows)
    )
    if size > max_entries:
        return 0
    busy: dict[tuple[int, int], list[cp_model.IntVar]] = {}
    for i, (lo, hi) in enumerate(windows):
        poll()
        terms = []
        for g, x in b.assign[i].items():
            p = int(proc[jobs[i], g])
            ys = []
            for t in range(lo, hi + 1):
                y = m.new_bool_var(f"y{i}_{g}_{t}")
                ys.append(y)
                terms.append(t * y)
                for u in range(t, t + p):
                    busy.setdefault((g, u), []).append(y)
            m.add(x == sum(ys))
        m.add(b.start[i] == sum(terms))
    for (g, _), lits in busy.items():
        if len(lits) > cap[g]:
            if cap[g] == 1:
                m.add_at_most_one(lits)
            else:
                m.add(sum(lits) <= int(cap[g]))
    return size
