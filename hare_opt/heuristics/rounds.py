"""A fast round-level list scheduler: a whole round is placed at once, compiled with numba.

``ClusterState`` does one numpy call over all M GPUs per task; on 10^6 tasks
and hundreds of GPUs that is too slow for the default heuristic. Here GPUs of
one type are interchangeable but for their free time and the job they ran
last, so a round merges, type by type, two streams of GPUs sorted by free
time (those that ran the job last, needing no setup, and the others) slot by
slot, touching only the GPUs it uses. The start rule is
``model.rules.earliest_start``, the same as ``ClusterState``'s; the schedule is
``expand_blocks`` of the runs. The loops live in ``_kernels`` (numba)
so that a whole dispatch (10^5 rounds) runs compiled; this module holds the
state and the Python API.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, fields

import numpy as np

from hare_opt.heuristics import _kernels as kern
from hare_opt.heuristics._kernels import STREAM_LIMIT
from hare_opt.model import GPU, Instance, Job, Schedule
from hare_opt.model.planning import Warm

__all__ = [
    "DISPATCH",
    "HOLD",
    "STREAM_LIMIT",
    "RoundEngine",
    "clip_runs",
    "expand_blocks",
    "run_interleaved",
    "run_serial",
    "schedule_runs",
]


def expand_blocks(inst: Instance, blocks) -> Schedule:
    """Schedule from runs (job, round, first task, gpu, count, start, period, rounds), a
    (B, 8) array or a list of such rows: ``count`` consecutive tasks of one round on one
    GPU, numbered from ``first task``, in ``rounds`` rounds from ``round``, each
    ``period`` after the one before. Rows: run by run, round by round."""
    blocks = np.ascontiguousarray(blocks, dtype=np.int64).reshape(-1, 8)
    if not len(blocks):
        return Schedule.empty()
    rows = np.empty((5, int(blocks[:, 4] @ blocks[:, 7])), dtype=np.int64)
    kern.expand_runs(blocks, inst.gpu_type_index, inst.proc_by_type, rows)
    return Schedule.from_indices(inst, *rows)


def schedule_runs(inst: Instance, schedule: Schedule) -> np.ndarray:
    """(B, 8) runs of ``schedule`` (``expand_blocks``'s input), one per task in its row
    order: for a plan that came as a schedule."""
    import pandas as pd  # only here: a solve that never takes a schedule skips its import

    job, gpu = schedule.index_hint("job"), schedule.index_hint("gpu")
    if job is None or not np.array_equal(inst.job_ids[job], schedule.job):
        job = pd.Index(inst.job_ids).get_indexer(schedule.job)
    if gpu is None or not np.array_equal(inst.gpu_ids[gpu], schedule.gpu):
        gpu = pd.Index(inst.gpu_ids).get_indexer(schedule.gpu)
    one = np.ones(len(job), np.int64)
    return np.stack(
        [job, schedule.round, schedule.task, gpu, one, schedule.start, 0 * one, one], axis=1
    ).astype(np.int64)


def _i64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


@dataclass(frozen=True)
class _Fixed:
    """The kernels' read-only view of an instance."""

    gtype: np.ndarray  # (M,) type of each GPU
    tptr: np.ndarray  # (T + 1,) type k's GPUs are segment tptr[k]:tptr[k + 1] of ``srt``
    fix: np.ndarray  # (3, N) tasks per round, release, overhead
    ptab: np.ndarray  # (N, T) task time, 0: not eligible
    stab: np.ndarray  # (N, T) sync time
    slower: np.ndarray  # (N, T) task time minus the job's fastest eligible one (slot penalties)
    rounds: np.ndarray  # (N,)
    group: np.ndarray  # (N,) group of jobs with the same eligible types
    gtypes: np.ndarray  # (G, T) those types
    runs: int  # most runs a whole dispatch can make: min(K, eligible GPUs) a round

    def __post_init__(self) -> None:
        # memoised and shared by every engine on the instance: read-only views, so that a
        # kernel that wrote to one would not compile (numba types them read-only) rather
        # than corrupt every later dispatch; views, so the instance's own arrays stay as
        # they are
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                view = value.view()
                view.flags.writeable = False
                object.__setattr__(self, f.name, view)


_fixed_memo: dict[int, tuple[weakref.ref, _Fixed]] = {}


def _fixed(inst: Instance) -> _Fixed:
    """Built once per instance: the local search runs thousands of dispatches on one
    instance, and building these costs more than a small dispatch."""
    hit = _fixed_memo.get(id(inst))
    if hit is not None and hit[0]() is inst:
        return hit[1]
    gtypes, group = np.unique(inst.eligible_by_type, axis=0, return_inverse=True)
    ptab = _i64(inst.proc_by_type)
    pmin = np.where(inst.eligible_by_type, ptab, np.iinfo(np.int64).max).min(axis=1)
    fixed = _Fixed(
        _i64(inst.gpu_type_index),
        _i64(np.concatenate([[0], np.cumsum(inst.type_count)])),
        _i64(np.stack([inst.tasks_per_round, inst.release, inst.overhead])),
        ptab,
        _i64(inst.sync_by_type),
        np.maximum(ptab - pmin[:, None], 0),
        _i64(inst.rounds),
        _i64(group.ravel()),
        np.ascontiguousarray(gtypes),
        int(inst.rounds @ np.minimum(inst.tasks_per_round, inst.eligible.sum(axis=1))),
    )
    _fixed_memo[id(inst)] = (weakref.ref(inst), fixed)
    weakref.finalize(inst, _fixed_memo.pop, id(inst), None)
    return fixed


class RoundEngine:
    """GPU free times, last jobs and job barriers as int64 arrays; runs recorded as blocks.

    ``penalty`` (one for all jobs, or an (N,) array: one per job) ranks a slot as if it
    ended ``penalty x (p_jk - p_j,min)`` later on a type slower than the job's fastest
    (the barrier and the schedule keep the true times): an earliest-barrier round takes
    a slow GPU only when that saves the job more than a share of the extra GPU time,
    leaving it to jobs that need it more. It helps where the optimum confines a job to
    its fast type and another to the slow ones (docs/theory.md (b), "Slot penalties");
    0 is the plain earliest barrier, and a negative penalty lets the job take a slow GPU
    a little later than a fast one would end, leaving the fast one to others.
    """

    def __init__(
        self,
        inst: Instance,
        *,
        sync_first: bool = True,
        warm: Warm | None = None,
        capacity: int = 64,
        penalty: float | np.ndarray = 0.0,
    ):
        self.inst = inst
        # False: rounds take the slots that free GPUs first, not those that sync first
        self.sync_first = bool(sync_first)
        n, m = inst.num_jobs, inst.num_gpus
        fixed = _fixed(inst)
        free = _i64(warm.free) if warm else np.zeros(m, np.int64)
        last = _i64(warm.last) if warm else np.full(m, -1, np.int64)
        srt = np.lexsort((np.arange(m), free, fixed.gtype))  # (type, free, gpu)
        self._gst = np.stack([free, last, srt]).astype(np.int64)
        left = _i64(warm.left) if warm else inst.tasks_per_round
        carry = _i64(warm.carry) if warm else np.zeros(n, np.int64)
        # rows 4 + k: how many GPUs of type k ran the job last
        own = np.zeros((len(inst.gpu_types), n), np.int64)
        ran = last >= 0
        np.add.at(own, (fixed.gtype[ran], last[ran]), 1)
        self._jst = np.concatenate(
            [np.stack([inst.release, np.zeros(n, np.int64), left, carry]), own]
        ).astype(np.int64)
        # writable and this engine's own (the memoised stab is read-only): every call
        # of a kernel then has the same argument types, one compiled version
        ktab = fixed.stab.copy() if self.sync_first else np.zeros_like(fixed.stab)
        if np.any(penalty):
            pen = np.asarray(penalty, float)
            pen = pen[:, None] if pen.ndim else pen
            ktab = ktab + np.rint(pen * fixed.slower).astype(np.int64)
        self._static = (fixed.gtype, fixed.tptr, fixed.fix, fixed.ptab, fixed.stab, ktab)
        width = m + 2 * len(inst.gpu_types)
        self._ws = np.zeros((6, width), np.int64)  # per-round scratch of the kernels
        self._heap = np.zeros((width, 5), np.int64)
        self._buf = np.empty((max(capacity, 16), 8), np.int64)
        self._anyone = np.zeros((2, n), np.int64)  # ``place_round`` on any GPU
        self._nb = 0
        #: rounds a dispatch placed as repeats of the round before (``run_*(repeat=True)``)
        self.repeated = 0
        #: times a ready job waited for a busy GPU (``run_interleaved``'s rule)
        self.waited = 0

    @property
    def barrier(self) -> np.ndarray:
        """(N,) each job's last barrier: its completion once all its rounds are placed."""
        return self._jst[0]

    @property
    def blocks(self) -> np.ndarray:
        """(B, 8) runs (``expand_blocks``) in placement order."""
        return self._buf[: self._nb]

    def _args(self) -> tuple:
        return (
            self.sync_first,
            *self._static,
            self._gst,
            self._jst,
            self._ws,
            self._heap,
            self._buf,
            self._nb,
        )

    def place_round(self, j: int, guard: np.ndarray | None = None, t: int = 0) -> int:
        """Place job j's next round with the earliest barrier the GPUs allow; return it.

        Slot n of GPU g ends (with sync) at start_g + n p_g + s_g, and taking the
        K smallest slots overall minimises the barrier (with ``sync_first`` off,
        slots are ranked without the sync: the GPUs that free up first win).
        Within one type, the first slot depends only on the free time, and does
        not decrease with it, among GPUs that need a setup and among GPUs that
        ran j last: each is a stream, and the slots come out of a merge of the
        streams (ties: a GPU that ran j last, then the later-freed GPU, then lower
        index), so only the GPUs used (plus one look-ahead per stream) are touched.
        GPUs idle long enough all tie; the stream gives the one freed last first
        (best fit), keeping long idle gaps for jobs placed later. Rounds of more than
        ``STREAM_LIMIT`` tasks are filled by bisection on the barrier instead.

        ``guard`` (2, N), each job's rank in a dispatch order and its rounds left: GPUs
        still busy at clock ``t`` with a job that ranks before j and has rounds left
        are not used (``_kernels._booked``; the work-conserving dispatch's rule).
        """
        guard = self._anyone if guard is None else _i64(guard).reshape(2, -1)
        end, self._buf, self._nb = kern.place_round(j, *self._args()[1:], guard, int(t))
        return int(end)

    def objective(self) -> int:
        return sum(w * c for w, c in zip(self.inst.weight.tolist(), self.barrier.tolist()))

    def schedule(self) -> Schedule:
        return expand_blocks(self.inst, self.blocks)


def _engine(
    inst: Instance, sync_first: bool, warm: Warm | None, penalty: float | np.ndarray = 0.0
) -> RoundEngine:
    return RoundEngine(
        inst, sync_first=sync_first, warm=warm, capacity=_fixed(inst).runs, penalty=penalty
    )


def run_serial(
    inst: Instance,
    order,
    *,
    sync_first: bool = True,
    warm: Warm | None = None,
    repeat: bool = True,
    penalty: float | np.ndarray = 0.0,
) -> RoundEngine:
    """Each job in turn, all its rounds, each round with the earliest barrier.

    ``repeat``: rounds that provably repeat the last one's shape are placed in one step
    (``_kernels._repeat_limit``); the blocks are the same as without (tested). The proof
    ranks slots by their times, so a ``penalty`` (``RoundEngine``) turns it off."""
    eng = _engine(inst, sync_first, warm, penalty)
    eng._buf, eng._nb, eng.repeated = kern.run_serial(
        _i64(order), _fixed(inst).rounds, repeat and not np.any(penalty), *eng._args()
    )
    return eng


def run_interleaved(
    inst: Instance,
    order,
    *,
    sync_first: bool = True,
    warm: Warm | None = None,
    repeat: bool = True,
    conserve: bool = True,
    until: int | None = None,
    penalty: float | np.ndarray = 0.0,
) -> RoundEngine:
    """Round by round, work-conserving: the clock t is the earliest time any job with
    rounds left could start its next round (its barrier passed and an eligible GPU free
    by then), and, of the jobs whose barrier is <= t and that have an eligible GPU free
    by t, the first in ``order`` places its next round.

    So a GPU that frees while the jobs that ran on it sync is offered at once to every
    ready job in ``order``: no GPU stays idle while a ready job could start on it,
    except by this rule: a ready job whose round's first slot (the one that ends, with
    its sync, first: what ``place_round`` takes first) is on a GPU still busy at t
    waits for that GPU (it finishes its batch sooner there than on any GPU free now)
    and is looked at again when that GPU frees; meanwhile the jobs after it in
    ``order`` may take the free GPUs. ``RoundEngine.waited`` counts how often the rule
    applied. A job that places its round takes its first slot on a free GPU and the
    rest of its slots as ``place_round`` does, except on GPUs still busy at t with a job
    before it in ``order`` that has rounds left (``_kernels._booked``): a later job's
    batch is not booked right behind an earlier job's task, where that job's next round
    would have gone (docs/theory.md (b) says what it changed).

    ``conserve=False`` (the ``-hold`` dispatchers): t moves only to times when a job
    still waiting for its barrier could start, so the GPUs of the first job in ``order``
    are kept for it through its syncs (ready jobs it outranks take what it leaves): a
    fast GPU stays idle through its job's sync while an outranked job waits.

    ``until``: stop once nothing placed later could start before it (``_kernels._settled``):
    the engine then holds every run of the full dispatch that starts before ``until``
    (and some that start later), not the rest; the barriers and the objective are those
    of that prefix. The online planner asks for the tasks before the next re-plan only.

    Jobs are grouped by the set of types they may use, each group two heaps (waiting by
    barrier, ready by rank), so a step costs O(groups x types + log N), not O(N).
    """
    eng, fixed = _engine(inst, sync_first, warm, penalty), _fixed(inst)
    stop = kern._BIG if until is None else int(until)
    eng._buf, eng._nb, eng.repeated, eng.waited = kern.run_interleaved(
        _i64(order),
        fixed.rounds,
        repeat and not np.any(penalty),
        conserve,
        fixed.group,
        fixed.gtypes,
        stop,
        *eng._args(),
    )
    return eng


def clip_runs(inst: Instance, blocks: np.ndarray, until: int) -> np.ndarray:
    """The tasks of runs ``blocks`` (``expand_blocks``) that start before ``until``, as
    runs: those entirely before it as they are, the others cut task by task."""
    blocks = np.ascontiguousarray(blocks, dtype=np.int64).reshape(-1, 8)
    p = inst.proc_by_type[blocks[:, 0], inst.gpu_type_index[blocks[:, 3]]]
    last = blocks[:, 5] + (blocks[:, 7] - 1) * blocks[:, 6] + (blocks[:, 4] - 1) * p
    whole, cut = blocks[last < until], blocks[(last >= until) & (blocks[:, 5] < until)]
    if not len(cut):
        return whole
    rows = np.empty((5, int(cut[:, 4] @ cut[:, 7])), dtype=np.int64)
    kern.expand_runs(cut, inst.gpu_type_index, inst.proc_by_type, rows)
    rows = rows[:, rows[4] < until]
    one = np.ones(rows.shape[1], np.int64)
    return np.concatenate(
        [whole, np.stack([rows[0], rows[1], rows[2], rows[3], one, rows[4], 0 * one, one], axis=1)]
    )


DISPATCH = {
    "interleaved": run_interleaved,
    "serial": run_serial,
    "interleaved-eft": lambda inst, order, **kw: run_interleaved(
        inst, order, sync_first=False, **kw
    ),
    "serial-eft": lambda inst, order, **kw: run_serial(inst, order, sync_first=False, **kw),
}
#: The interleaved dispatchers that keep a job's GPUs through its syncs
#: (``run_interleaved(conserve=False)``): ``hare``'s with ``work_conserving=False``.
HOLD = {
    "interleaved-hold": lambda inst, order, **kw: run_interleaved(
        inst, order, conserve=False, **kw
    ),
    "interleaved-eft-hold": lambda inst, order, **kw: run_interleaved(
        inst, order, sync_first=False, conserve=False, **kw
    ),
}


def warm_up() -> float:
    """Load (or, on the first run after installing, compile) the kernels; returns seconds.

    Callers that time solvers (the demo, benchmarks) call it first, so that a
    one-off compile is not charged to whichever solver happens to run first.
    """
    t0 = time.perf_counter()
    inst = Instance(
        (GPU("g0", "A"), GPU("g1", "B")),
        (
            Job("j0", {"A": 2, "B": 3}, rounds=2, tasks_per_round=3, switch_overhead=1),
            Job("j1", {"A": 1}, release=1),
        ),
        "warm-up",
    )
    for run in (*DISPATCH.values(), *HOLD.values()):
        run(inst, [0, 1]).schedule()
    RoundEngine(inst).place_round(0)
    return time.perf_counter() - t0
