"""A fast round-level list scheduler: a whole round is placed at once, in pure Python.

``ClusterState`` does one numpy call over all M GPUs per task; on 10^6 tasks
and hundreds of GPUs that is too slow for the default heuristic. Here GPUs of
one type are interchangeable but for their free time and the job they ran
last, so each type keeps its GPUs sorted by free time, and so does each job
for the GPUs it ran last (no setup there). A round merges those streams slot
by slot and touches only the GPUs it uses: O((K + T) log M) per round of K
tasks on T eligible types (plus list moves of at most M entries). The start
rule is ``listsched.earliest_start``, the same as ``ClusterState``'s; the
schedule is ``listsched.expand_blocks`` of the runs.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass

import numpy as np

from hare_opt.heuristics.listsched import earliest_start, expand_blocks
from hare_opt.model import Instance, Schedule

_heappop, _heappush, _heapreplace = heapq.heappop, heapq.heappush, heapq.heapreplace
_BIG = 1 << 62
#: Rounds with more tasks than this are filled by bisection on the barrier, not slot by slot.
STREAM_LIMIT = 256


@dataclass(frozen=True)
class Warm:
    """A cluster already running: the state an online planner starts from.

    An instance alone describes an empty cluster at time 0; a re-plan must start
    from busy GPUs, setups already paid and rounds partly started, or it counts
    running tasks twice and misjudges which GPUs are free. Job indices are the
    instance's; ``last[g] = -1`` means GPU g last ran no job of the instance.
    """

    free: list[int]     # per GPU: free from this time
    last: list[int]     # per GPU: job it ran last (no setup for it), or -1
    left: list[int]     # per job: tasks of its current round still to place
    carry: list[int]    # per job: max end + sync over that round's tasks already placed


class RoundEngine:
    """GPU free times, last jobs and job barriers as plain lists; runs recorded as blocks."""

    def __init__(self, inst: Instance, *, sync_first: bool = True, warm: Warm | None = None):
        self.inst = inst
        # False: rounds take the slots that free GPUs first, not those that sync first
        self.sync_first = sync_first
        n, m = inst.num_jobs, inst.num_gpus
        self.gtype = inst.gpu_type_index.tolist()
        # per job: [(type, task time, sync)] over the types it may run on
        p, s, ok = inst.proc_by_type.tolist(), inst.sync_by_type.tolist(), inst.eligible_by_type
        self.types = [[(k, p[j][k], s[j][k]) for k in np.flatnonzero(ok[j]).tolist()]
                      for j in range(n)]
        self.ptab, self.stab = p, s
        self.k = inst.tasks_per_round.tolist()
        self.rel = inst.release.tolist()
        self.ov = inst.overhead.tolist()
        self.barrier = inst.release.tolist()
        self.round = [0] * n
        self.free = list(warm.free) if warm else [0] * m
        self.last = list(warm.last) if warm else [-1] * m
        self.left = list(warm.left) if warm else list(self.k)  # tasks left in current round
        self.carry = list(warm.carry) if warm else [0] * n
        # sorted (free, GPU) per type, and per job and type for the GPUs it ran last
        self.by_type: list[list[tuple[int, int]]] = [[] for _ in inst.gpu_types]
        self.by_job: list[dict[int, list[tuple[int, int]]]] = [{} for _ in range(n)]
        for g, k in enumerate(self.gtype):
            self.by_type[k].append((self.free[g], g))
            if self.last[g] >= 0:
                self.by_job[self.last[g]].setdefault(k, []).append((self.free[g], g))
        for lst in (*self.by_type, *(x for d in self.by_job for x in d.values())):
            lst.sort()
        self.blocks: list[tuple[int, int, int, int, int, int]] = []

    def type_free(self, k: int) -> int:
        """Earliest free time of a GPU of type k."""
        return self.by_type[k][0][0]

    def place_round(self, j: int) -> int:
        """Place job j's next round with the earliest barrier the GPUs allow; return it.

        Slot n of GPU g ends (with sync) at start_g + n p_g + s_g, and taking the
        K smallest slots overall minimises the barrier (with ``sync_first`` off,
        slots are ranked without the sync: the GPUs that free up first win).
        Within one type, the first slot depends only on the free time, and does
        not decrease with it, among GPUs that need a setup and among GPUs that
        ran j last: each is a stream, and the slots come out of a merge of the
        streams, so only the GPUs used (plus one look-ahead per stream) are
        touched. GPUs idle long enough all tie; the stream gives the one freed
        last first (best fit), keeping long idle gaps for jobs placed later.
        """
        K, b, r, o = self.left[j], self.barrier[j], self.rel[j], self.ov[j]
        free, last = self.free, self.last
        mine_by_type = self.by_job[j]
        streams = {}
        merge = []                                   # (slot end, -free, gpu, start, p, stream)
        for k, p, s in self.types[j]:
            s = s if self.sync_first else 0
            # setup needed: start = max(max(f, r) + o, b), least for f <= max(r, b - o)
            for sid, lst, tie, skip in ((2 * k + 1, mine_by_type.get(k, ()), b, -2),
                                        (2 * k, self.by_type[k], max(r, b - o), j)):
                it = streams[sid] = _stream(lst, tie, skip, last)
                for f, g in it:
                    st = earliest_start(f, sid & 1 == 1, r, o, b)
                    merge.append((st + p + s, -f, g, st, p, sid))
                    if K <= STREAM_LIMIT:
                        break                        # huge rounds: every GPU is a candidate
        runs: dict[int, list[int]] = {}              # gpu -> [start, count, p]
        if K > STREAM_LIMIT:
            for c, n in zip(merge, _smallest_slots([(c[0], c[4]) for c in merge], K)):
                if n:
                    runs[c[2]] = [c[3], n, c[4]]
        else:
            heapq.heapify(merge)
            for _ in range(K):
                e, nf, g, st, p, sid = merge[0]
                run = runs.get(g)
                if run is None:
                    runs[g] = [st, 1, p]
                else:
                    run[1] += 1
                _heapreplace(merge, (e + p, nf, g, st, p, -1))
                if sid >= 0 and (nxt := next(streams[sid], None)) is not None:
                    f2, g2 = nxt
                    st2 = earliest_start(f2, sid & 1 == 1, r, o, b)
                    _heappush(merge, (st2 + e - st, -f2, g2, st2, p, sid))
        rnd, task0, end_sync, sj = self.round[j], self.k[j] - K, self.carry[j], self.stab[j]
        gtype = self.gtype
        for g, (st, n, p) in runs.items():
            self.blocks.append((j, rnd, task0, g, n, st))
            task0 += n
            k, f = gtype[g], free[g]
            end = st + n * p
            end_sync = max(end_sync, end + sj[k])
            _remove(self.by_type[k], (f, g))
            if last[g] >= 0:
                _remove(self.by_job[last[g]][k], (f, g))
            insort(self.by_type[k], (end, g))
            insort(mine_by_type.setdefault(k, []), (end, g))
            free[g], last[g] = end, j
        self.barrier[j] = end_sync
        self.round[j] = rnd + 1
        if self.k[j] != K:  # a partly started round is complete: the next ones are whole
            self.left[j], self.carry[j] = self.k[j], 0
        return end_sync

    def objective(self) -> int:
        return sum(w * c for w, c in zip(self.inst.weight.tolist(), self.barrier))

    def schedule(self) -> Schedule:
        return expand_blocks(self.inst, self.blocks)


def _stream(lst: list[tuple[int, int]], tie: int, skip: int, last: list[int]):
    """(free, GPU) of ``lst`` (sorted by free) in order of first slot: those free by
    ``tie`` (whose slots are equal) latest first, then the rest by free time; GPUs
    whose last job is ``skip`` are left out."""
    i = bisect_right(lst, (tie, _BIG))
    for idx in range(i - 1, -1, -1):
        f, g = lst[idx]
        if last[g] != skip:
            yield f, g
    for idx in range(i, len(lst)):
        f, g = lst[idx]
        if last[g] != skip:
            yield f, g


def _remove(lst: list[tuple[int, int]], item: tuple[int, int]) -> None:
    del lst[bisect_left(lst, item)]


def _smallest_slots(cands: list[tuple[int, int]], count: int) -> list[int]:
    """Tasks per candidate (first slot end, p) so that the ``count`` earliest slots are used:
    the smallest barrier T with ``count`` slots ending by T, found by bisection."""
    first = np.array([c[0] for c in cands], dtype=np.int64)
    p = np.array([c[1] for c in cands], dtype=np.int64)
    lo = int(first.min())
    hi = lo + (count - 1) * int(p[np.argmin(first)])
    while lo < hi:
        mid = (lo + hi) // 2
        if np.maximum((mid - first) // p + 1, 0).sum() >= count:
            hi = mid
        else:
            lo = mid + 1
    n = np.maximum((lo - first) // p + 1, 0)
    surplus = int(n.sum()) - count                   # slots ending exactly at the barrier
    n[np.flatnonzero((n > 0) & (first + (n - 1) * p == lo))[:surplus]] -= 1
    return n.tolist()


def run_serial(inst: Instance, order, *, sync_first: bool = True,
               warm: Warm | None = None) -> RoundEngine:
    """Each job in turn, all its rounds, each round with the earliest barrier."""
    eng = RoundEngine(inst, sync_first=sync_first, warm=warm)
    rounds = inst.rounds.tolist()
    for j in np.asarray(order).tolist():
        for _ in range(rounds[j]):
            eng.place_round(j)
    return eng


def run_interleaved(inst: Instance, order, *, sync_first: bool = True,
                    warm: Warm | None = None) -> RoundEngine:
    """Round by round: let t be the earliest time a waiting job could start its next
    round (barrier passed and an eligible GPU free); every job whose barrier is <= t
    becomes ready, and the first ready job in ``order`` places its next round.

    Jobs are grouped by the set of types they may use, each group a heap by
    barrier, so a step costs O(groups x types + log N), not O(N).
    """
    eng = RoundEngine(inst, sync_first=sync_first, warm=warm)
    rank = [0] * inst.num_jobs
    for i, j in enumerate(np.asarray(order).tolist()):
        rank[j] = i
    left = inst.rounds.tolist()
    groups: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
    for j in range(inst.num_jobs):
        key = tuple(k for k, _, _ in eng.types[j])
        groups.setdefault(key, []).append((eng.barrier[j], rank[j], j))
    group_of = {j: key for key, items in groups.items() for _, _, j in items}
    for items in groups.values():
        heapq.heapify(items)
    ready: list[tuple[int, int]] = []
    todo = inst.num_jobs
    while todo:
        waiting = [(key, h) for key, h in groups.items() if h]
        if waiting:
            t = min(max(h[0][0], min(eng.type_free(k) for k in key)) for key, h in waiting)
            for _, h in waiting:
                while h and h[0][0] <= t:
                    _, rk, j = _heappop(h)
                    _heappush(ready, (rk, j))
        _, j = _heappop(ready)
        eng.place_round(j)
        left[j] -= 1
        if left[j]:
            _heappush(groups[group_of[j]], (eng.barrier[j], rank[j], j))
        else:
            todo -= 1
    return eng


DISPATCH = {
    "interleaved": run_interleaved,
    "serial": run_serial,
    "interleaved-eft": lambda inst, order, **kw: run_interleaved(inst, order, sync_first=False,
                                                                 **kw),
    "serial-eft": lambda inst, order, **kw: run_serial(inst, order, sync_first=False, **kw),
}
