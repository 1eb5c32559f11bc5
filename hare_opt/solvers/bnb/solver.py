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

import math
import time
from dataclasses import dataclass

import numpy as np

from hare_opt.bounds.combinatorial import min_sync
from hare_opt.model import GPU, Instance, Job, Result, Schedule, Stats, Status, ceil_bound
from hare_opt.model.options import Run
from hare_opt.solvers import incumbent
from hare_opt.solvers.bnb import _search as k
from hare_opt.solvers.bnb.options import BnbOptions, fits
from hare_opt.solvers.exact import Context, Found, run_exact

#: Labels the dominance memo starts with; it doubles when full, up to ``memo_mb``.
MEMO_START = 1 << 14
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
        "fix": np.stack(
            [
                instance.weight,
                instance.release,
                instance.overhead,
                instance.tasks_per_round,
                instance.rounds,
            ]
        ).astype(np.int64),
        "rt": instance.round_time_next.astype(np.int64),
        "minp": instance.min_task_time.astype(np.int64),
        "mins": min_sync(instance).astype(np.int64),
        "gtype": instance.gpu_type_index.astype(np.int64),
        "groups": order.astype(np.int64),
        "gptr": np.searchsorted(
            instance.gpu_type_index[order], np.arange(len(instance.gpu_types) + 1)
        ).astype(np.int64),
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


@dataclass
class _Search:
    """The search's arrays (``_search`` says what each holds) and what it found."""

    a: dict[str, np.ndarray]
    states: np.ndarray
    chj: np.ndarray
    chg: np.ndarray
    nch: np.ndarray
    ptr: np.ndarray
    depth: np.ndarray
    moves: np.ndarray
    best_moves: np.ndarray
    best: np.ndarray
    memo: _Memo
    counts: np.ndarray
    root: float
    root_s: float
    own_value: int
    own_moves: np.ndarray | None = None

    @property
    def tail(self) -> tuple[np.ndarray, ...]:
        a = self.a
        return (a["proc"], a["sync"], a["fix"], a["rt"], a["minp"], a["mins"])


class BnbBackend:
    """The branch and bound under the exact template (``solvers/exact.py``)."""

    name = "bnb"
    #: Whether the search reads and offers to the process's shared board (the warm-up's
    #: toy instance must not: its schedule is no other run's).
    shares = True

    def fits(self, instance: Instance, options: BnbOptions) -> None:
        fits(instance)

    def build(self, ctx: Context) -> _Search:
        instance, opts = ctx.instance, ctx.options
        n, m, total = instance.num_jobs, instance.num_gpus, instance.num_tasks
        width = k.layout(n, m)[-1]
        a = _arrays(instance)
        states = np.zeros((total + 1, width), dtype=np.int64)
        _, lo_last, _, lo_ready, _, _, _, _ = k.layout(n, m)
        states[0, lo_last : lo_last + m] = -1
        states[0, lo_ready : lo_ready + n] = instance.release
        chj = np.zeros((total + 1, n * m), dtype=np.int64)
        moves = np.zeros((total, 3), dtype=np.int64)
        t_root = time.perf_counter()
        tail = (a["proc"], a["sync"], a["fix"], a["rt"], a["minp"], a["mins"])
        root = k.bound(states[0], *tail, n, m, 1e300, *k.scratch(n, m))
        root_s = time.perf_counter() - t_root  # what one bound costs: prices open_bound
        return _Search(
            a,
            states,
            chj,
            np.zeros_like(chj),
            np.zeros(total + 1, dtype=np.int64),
            np.zeros(total + 1, dtype=np.int64),
            np.zeros(1, dtype=np.int64),
            moves,
            np.zeros_like(moves),
            np.array([ctx.upper], dtype=np.int64),
            _Memo(width, opts.memo_mb, n, m),
            np.zeros(4, dtype=np.int64),
            float(root),
            root_s,
            ctx.upper,
        )

    def search(self, ctx: Context, s: _Search) -> Found:
        """Depth first, in chunks between which the clock, the stop flag, the work limit
        and the shared incumbent are read. ``optimal`` when the search completes with its
        own schedule; when it completes below another's (the start's, the shared one), that
        value is a proved bound; stopped early, the bound is the lowest of the subtrees
        not yet searched (or the root's)."""
        instance, run, opts = ctx.instance, ctx.run, ctx.options
        n, m = instance.num_jobs, instance.num_gpus
        a, tail, best = s.a, s.tail, s.best
        finished = s.root > ctx.upper - 1 + k.EPS
        if not finished:
            k.expand(s.states[0], 0, s.chj, s.chg, s.nch, a["proc"], a["fix"], a["gtype"], n, m)
        limit = None if opts.work_limit is None else max(1, int(opts.work_limit))
        chunk = 1000 if limit is None else max(1, min(1000, limit))
        shared = incumbent.board() if self.shares else None  # the portfolio's children
        found = 0
        stopped = None
        while not finished:
            tick = time.perf_counter()
            if shared is not None:  # another run's better schedule: search only below it
                outside = shared.peek()
                if outside is not None and outside < best[0]:
                    best[0] = outside
            code = k.run(
                s.states,
                s.chj,
                s.chg,
                s.nch,
                s.ptr,
                s.depth,
                s.moves,
                s.best_moves,
                best,
                *tail,
                a["gtype"],
                a["groups"],
                a["gptr"],
                s.memo.head,
                s.memo.nxt,
                s.memo.labels,
                s.memo.dead,
                s.memo.count,
                s.counts,
                chunk,
            )
            finished = code == 0
            if s.counts[2] > found:  # the kernel built a schedule below best[0]
                found, s.own_value, s.own_moves = (
                    int(s.counts[2]),
                    int(best[0]),
                    s.best_moves.copy(),
                )
                run.report("bnb", incumbent=s.own_value)
                if shared is not None:
                    shared.offer(s.own_value, _rows(instance, s.own_moves))
            s.memo.grow_if_half_full()
            now = time.perf_counter()
            if finished:
                break
            if run.stop.is_set():
                stopped = "interrupted"
            elif run.deadline is not None and now >= run.deadline:
                stopped = "time limit"
            elif limit is not None and s.counts[0] >= limit:
                stopped = "work limit"
            if stopped:
                break
            run.report("bnb", note=f"{int(s.counts[0]):,} nodes")
            # about 0.1 s per call: the clock is read often enough, the call overhead is nil
            if limit is None:
                chunk = max(100, min(chunk * 2, int(chunk * 0.1 / max(now - tick, 1e-6))))
            else:  # chunks (hence memo growth between them) must not depend on the clock
                chunk = max(1, min(chunk * 2, DETERMINISTIC_CHUNK, limit - int(s.counts[0])))
        own = s.own_moves is not None
        if finished and own and s.own_value == int(best[0]):
            status, bound = Status.OPTIMAL, float(s.own_value)
        elif finished:  # nothing below best[0] (the start's or a shared value): it is a bound
            status, bound = Status.UNKNOWN, float(best[0])
        else:
            status, bound = Status.UNKNOWN, self._open_bound(ctx, s)
        return Found(
            status,
            solution=own,
            value=s.own_value if own else None,
            bound=bound,
            stopped=stopped,
            stats={
                "nodes": int(s.counts[0]),
                "dominated": int(s.counts[1]),
                "pruned_by_bound": int(s.counts[3]),
                "improvements": int(s.counts[2]),
                "memo_labels": int(s.memo.count[0]),
                "memo_full": s.memo.full,
                "root_bound": ceil_bound(s.root) if math.isfinite(s.root) else None,
                "search_bound_from_shared": int(best[0]) < s.own_value,
            },
        )

    def _open_bound(self, ctx: Context, s: _Search) -> float:
        """open_bound prices every open child (it took 18 s on 994 tasks x 15 GPUs): only
        with the time for it, and never after a stop request; else the root's bound."""
        run = ctx.run
        d = int(s.depth[0])
        open_children = int((s.nch[: d + 1] - s.ptr[: d + 1]).clip(min=0).sum())
        left = run.remaining()
        affordable = not run.stop.is_set() and (
            left is None or open_children * s.root_s < max(left, OPEN_BOUND_SLACK_S)
        )
        low = (
            k.open_bound(s.states, s.chj, s.chg, s.nch, s.ptr, s.depth, s.best, *s.tail)
            if affordable
            else -np.inf
        )
        return max(s.root - k.EPS, low - k.EPS)

    def extract(self, ctx: Context, s: _Search) -> Schedule:
        assert s.own_moves is not None
        return _schedule(ctx.instance, s.own_moves)


def solve_bnb(
    instance: Instance, run: Run | None = None, options: BnbOptions | None = None
) -> Result:
    """Prove the optimum by branch and bound; ``optimal`` only when the search is complete.

    The start (the run's hint, else the rules') is the first incumbent; the search looks
    only for schedules better than it, so a good one prunes more. ``memo_mb``: memory
    for the dominance memo; when it is full the search goes on without storing more
    (correct, less pruning). ``work_limit``: stop after about that many nodes, like a
    time limit but reproducible. On a limit the schedule is the best found and the lower
    bound the lowest bound of the subtrees not yet searched.
    """
    return run_exact(instance, run or Run(), options or BnbOptions(), BnbBackend())


def warm_up() -> float:
    """Load (or, on the first run after installing, compile) the search kernel; returns
    seconds, so that callers that time solvers do not charge it to the first bnb solve."""
    t0 = time.perf_counter()
    inst = Instance(
        (GPU("g0", "A"), GPU("g1", "A"), GPU("g2", "B")),
        (
            Job("j0", {"A": 2, "B": 3}, rounds=2, tasks_per_round=2, switch_overhead=1),
            Job("j1", {"A": 1}, release=1, sync_time=1),
        ),
        "warm-up",
    )
    from hare_opt.heuristics.rules import solve_fifo

    backend = BnbBackend()
    backend.shares = False
    for limit in (1, None):  # the root's children (open_bound), then a complete search
        # its own progress sink: the warm-up instance's incumbent is no command's news
        run = Run(progress=lambda *_: None)
        ctx = Context(
            "bnb", inst, run, BnbOptions(work_limit=limit), solve_fifo(inst, run, None), 0, Stats()
        )
        backend.search(ctx, backend.build(ctx))
    return time.perf_counter() - t0
