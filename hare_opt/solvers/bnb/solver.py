"""``solve_bnb``: branch and bound over GPU sequences, with dominance, for small clusters.

Why a third exact method: on two or three GPUs of different types with
switching overheads, neither CP-SAT nor the time-indexed MILP proves 30-40 task
instances in a minute; their bounds let jobs share a GPU without paying setups.
Here a node is a partial schedule built in order of start times, so a setup is
paid exactly when it happens, and two partial schedules that placed the same
tasks and leave each GPU with the same last job are compared: one that is no
later anywhere and no costlier dominates the other, whose subtree is dropped.
Correctness, bounds and dominance: docs/formulations.md, "Branch and bound".
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from hare_opt.bounds.combinatorial import min_sync
from hare_opt.model import GPU, Instance, Job, Result, Schedule, SolverError, Status
from hare_opt.model.options import Run
from hare_opt.solvers.bnb import _search as k
from hare_opt.solvers.bnb.options import BnbOptions
from hare_opt.solvers.incumbent import SharedIncumbent
from hare_opt.solvers.special import at_once
from hare_opt.solvers.start import best_start, finish
from hare_opt.util import progress

#: Labels the dominance memo starts with; it doubles when full, up to ``memo_mb``.
MEMO_START = 1 << 14
#: Largest search stack (states + child lists) in bytes: beyond, the instance is refused.
MAX_STACK_BYTES = 1 << 30
#: Largest chunk of nodes between looks at the clock under a node limit (a fixed schedule:
#: the search, memo growth included, is then the same on any machine).
DETERMINISTIC_CHUNK = 50_000
#: Seconds the bound of the open subtrees may take past the time limit.
OPEN_BOUND_SLACK_S = 0.2


def _arrays(instance: Instance) -> dict[str, np.ndarray]:
    ok = instance.eligible
    order = np.argsort(instance.gpu_type_index, kind="stable")
    return {
        "proc": np.where(ok, instance.proc, -1).astype(np.int64),
        "sync": instance.sync.astype(np.int64),
        "fix": np.stack([instance.weight, instance.release, instance.overhead,
                         instance.tasks_per_round, instance.rounds]).astype(np.int64),
        "rt": instance.round_time_next.astype(np.int64),
        "minp": instance.min_task_time.astype(np.int64),
        "mins": min_sync(instance).astype(np.int64),
        "gtype": instance.gpu_type_index.astype(np.int64),
        "groups": order.astype(np.int64),
        "gptr": np.searchsorted(instance.gpu_type_index[order],
                                np.arange(len(instance.gpu_types) + 1)).astype(np.int64),
    }


class _Memo:
    """The dominance memo's arrays (see _search.dominated), grown by doubling up to a budget.

    The label store is allocated once at the budget (``np.zeros``: the OS maps its pages
    only when they are written), and the kernel sees a growing prefix of it, so growing
    costs a rehash of the stored labels and never a copy: copying a half-gigabyte memo
    took seconds, unchecked by the clock, and pushed time-limited runs past their limit.
    """

    def __init__(self, width: int, memo_mb: float, n: int, m: int) -> None:
        self.n, self.m = n, m
        self.limit = max(64, int(memo_mb * 2**20) // (8 * width + 25))
        self.count = np.zeros(1, dtype=np.int64)
        self._labels = np.zeros((self.limit, width), dtype=np.int64)
        self._dead = np.zeros(self.limit, dtype=np.bool_)
        self._resize(min(MEMO_START, self.limit))

    def _resize(self, cap: int) -> None:
        self.labels = self._labels[:cap]
        self.dead = self._dead[:cap]
        self.nxt = np.full(cap, -1, dtype=np.int64)
        self.head = np.full(1 << (2 * cap - 1).bit_length(), -1, dtype=np.int64)
        k.rehash(self.labels, int(self.count[0]), self.head, self.nxt, self.n, self.m)

    @property
    def full(self) -> bool:
        return int(self.count[0]) >= len(self.labels)

    def grow_if_half_full(self) -> None:
        # at half full, so that no label is dropped while room is left
        if 2 * int(self.count[0]) >= len(self.labels) and len(self.labels) < self.limit:
            self._resize(min(2 * len(self.labels), self.limit))


def _rows(instance: Instance, moves: np.ndarray) -> np.ndarray:
    """(job, round, task, gpu, start) per task placed: the c-th task of job j placed is
    round c // K, task c % K."""
    job, gpu, start = moves[:, 0], moves[:, 1], moves[:, 2]
    k = instance.tasks_per_round[job]
    seen = np.zeros(instance.num_jobs, dtype=np.int64)
    nth = np.empty(len(job), dtype=np.int64)
    for i, j in enumerate(job.tolist()):
        nth[i] = seen[j]
        seen[j] += 1
    return np.column_stack([job, nth // k, nth % k, gpu, start])


def _schedule(instance: Instance, moves: np.ndarray) -> Schedule:
    return Schedule.from_indices(instance, *_rows(instance, moves).T)


def solve_bnb(instance: Instance, run: Run | None = None,
              options: BnbOptions | None = None) -> Result:
    """Prove the optimum by branch and bound; ``optimal`` only when the search is complete.

    The run's hint (else ``best_start``'s) is the first incumbent. The search looks only
    for schedules better than the incumbent, so a good one prunes more. ``memo_mb``:
    memory for the dominance memo; when it is full the search goes on without storing
    more (correct, less pruning). ``node_limit``: stop after about that many nodes, like
    a time limit but reproducible. On a limit the schedule is the best found and the
    lower bound the lowest bound of the subtrees not yet searched.
    """
    run = run or Run()
    opts = options or BnbOptions()
    if opts.special and (done := at_once(instance, run, "bnb")) is not None:
        return done
    n, m, total = instance.num_jobs, instance.num_gpus, instance.num_tasks
    width = k.layout(n, m)[-1]
    stack_bytes = (total + 1) * 8 * (width + 2 * n * m + 3)
    if stack_bytes > MAX_STACK_BYTES:
        raise SolverError(f"bnb: {instance.name!r} is too large for the branch and bound "
                          f"({total} tasks x {n} jobs x {m} GPUs needs "
                          f"{stack_bytes / 2**30:.1f} GiB of search stack); use cpsat, milp "
                          f"or portfolio")
    if run.hint is not None:
        start, source = run.hint, "given"
    else:
        start = best_start(instance, run, heuristic=opts.start_heuristic)
        source = start.solver
    upper = int(start.objective)
    memo_mb, node_limit = opts.memo_mb, opts.node_limit
    a = _arrays(instance)
    states = np.zeros((total + 1, width), dtype=np.int64)
    _, lo_last, _, lo_ready, _, _, _, _ = k.layout(n, m)
    states[0, lo_last:lo_last + m] = -1
    states[0, lo_ready:lo_ready + n] = instance.release
    chj = np.zeros((total + 1, n * m), dtype=np.int64)
    chg = np.zeros_like(chj)
    nch = np.zeros(total + 1, dtype=np.int64)
    ptr = np.zeros(total + 1, dtype=np.int64)
    depth = np.zeros(1, dtype=np.int64)
    moves = np.zeros((total, 3), dtype=np.int64)
    best_moves = np.zeros_like(moves)
    best = np.array([upper], dtype=np.int64)
    memo = _Memo(width, memo_mb, n, m)
    stats_arr = np.zeros(4, dtype=np.int64)

    p, s, fix = a["proc"], a["sync"], a["fix"]
    tail = (p, s, fix, a["rt"], a["minp"], a["mins"])
    t_root = time.perf_counter()
    root = k.bound(states[0], *tail, n, m, 1e300, *k.scratch(n, m))
    t_root = time.perf_counter() - t_root  # what one bound costs: prices open_bound below
    finished = root > upper - 1 + k.EPS
    if not finished:
        k.expand(states[0], 0, chj, chg, nch, p, fix, a["gtype"], n, m)
    deadline = run.deadline
    chunk = 1000 if node_limit is None else max(1, min(1000, node_limit))
    shared = None if opts.incumbent is None else SharedIncumbent(opts.incumbent)
    own_value, own_moves, found = upper, None, 0  # the best schedule this search built
    while not finished:
        tick = time.perf_counter()
        if shared is not None:  # another run's better schedule: search only below it
            outside = shared.peek()
            if outside is not None and outside < best[0]:
                best[0] = outside
        code = k.run(states, chj, chg, nch, ptr, depth, moves, best_moves, best, *tail,
                     a["gtype"], a["groups"], a["gptr"], memo.head, memo.nxt, memo.labels,
                     memo.dead, memo.count, stats_arr, chunk)
        finished = code == 0
        if stats_arr[2] > found:  # the kernel built a schedule below best[0]
            found, own_value, own_moves = int(stats_arr[2]), int(best[0]), best_moves.copy()
            if shared is not None:
                shared.offer(own_value, _rows(instance, own_moves))
        memo.grow_if_half_full()
        now = time.perf_counter()
        if (deadline is not None and now >= deadline) or run.stop.is_set() or (
                node_limit is not None and stats_arr[0] >= node_limit):
            break
        progress.report("bnb", incumbent=int(best[0]), note=f"{int(stats_arr[0]):,} nodes")
        # about 0.1 s per call: the clock is read often enough, the call overhead is nil
        if node_limit is None:
            chunk = max(100, min(chunk * 2, int(chunk * 0.1 / max(now - tick, 1e-6))))
        else:  # chunks (hence memo growth between them) must not depend on the clock
            chunk = min(chunk * 2, DETERMINISTIC_CHUNK)
        if node_limit is not None:
            chunk = max(1, min(chunk, node_limit - int(stats_arr[0])))
    schedule = _schedule(instance, own_moves) if own_moves is not None else start.schedule
    if finished and own_value == int(best[0]):
        status, lower = Status.OPTIMAL, None
    elif finished:  # nothing below the shared schedule's value: that value is the optimum
        status, lower = Status.FEASIBLE, float(best[0])
    else:
        # open_bound prices every open child (it took 18 s on 994 tasks x 15 GPUs): only
        # with the time for it, and never after a stop request; else the root's bound
        d = int(depth[0])
        open_children = int((nch[:d + 1] - ptr[:d + 1]).clip(min=0).sum())
        left = run.remaining()
        affordable = not run.stop.is_set() and (
            left is None or open_children * t_root < max(left, OPEN_BOUND_SLACK_S))
        low = k.open_bound(states, chj, chg, nch, ptr, depth, best, *tail) if affordable \
            else -np.inf
        status, lower = Status.FEASIBLE, max(root - k.EPS, low - k.EPS)
    stats: dict[str, Any] = {
        "nodes": int(stats_arr[0]), "dominated": int(stats_arr[1]),
        "pruned_by_bound": int(stats_arr[3]), "improvements": int(stats_arr[2]),
        "memo_labels": int(memo.count[0]), "memo_full": memo.full,
        "root_bound": round(float(root), 3), "hint": source, "hint_objective": upper,
        "search_bound_from_shared": int(best[0]) < own_value}
    result = finish(instance, run, "bnb", status, schedule, bound=lower, start=start,
                    stats=stats)
    if result.objective != own_value:
        raise SolverError(f"bnb: search value {own_value} but its schedule scores "
                          f"{result.objective}")
    return result


def warm_up() -> float:
    """Load (or, on the first run after installing, compile) the search kernel; returns
    seconds, so that callers that time solvers do not charge it to the first bnb solve."""
    t0 = time.perf_counter()
    inst = Instance((GPU("g0", "A"), GPU("g1", "A"), GPU("g2", "B")),
                    (Job("j0", {"A": 2, "B": 3}, rounds=2, tasks_per_round=2, switch_overhead=1),
                     Job("j1", {"A": 1}, release=1, sync_time=1)), "warm-up")
    solve_bnb(inst, Run(), BnbOptions(node_limit=1))  # the root's children: every kernel runs
    solve_bnb(inst)
    return time.perf_counter() - t0
