"""The compiled engine: gang policies' runs in one numba loop (``kernel.py``).

The reference engine (``reference.Simulator``) stays the definition; this one
transcribes it for the built-in gang policies and gives the same executed schedules,
task for task (tests/test_compiled.py, under both semantics). What it reads of a
policy is the ``GangKernel`` the policy hands it (``engine.state``): its tables and
the callbacks for the library solves the reference makes: AlloX's assignment (scipy),
Gavel-LAS's per-round LP (HiGHS) and, under leases, Gavel's round decision of
``gavel-fifo`` and ``gavel-las`` at each round start (a few thousand a run, each with
an LP or a FIFO pass): the very functions the reference policies call. A subclass of a
built-in gang policy hands none and runs in the reference engine.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from hare_opt.model import Schedule
from hare_opt.sim.engine import kernel as K
from hare_opt.sim.engine.state import GangKernel, RoundState
from hare_opt.sim.events import ARRIVE, SimulationError, waiting_forever
from hare_opt.sim.results import RunRecord

if TYPE_CHECKING:
    from hare_opt.sim.engine.reference import Simulator
    from hare_opt.sim.results import SimResult

#: Gang rule -> the kernel's policy code.
CODES = {
    "gavel-fifo": K.FIFO,
    "srtf": K.SRTF,
    "tiresias": K.TIRESIAS,
    "allox": K.ALLOX,
    "gavel-las": K.LAS,
}


def run(sim: Simulator, ks: GangKernel, progress=None, t0: float | None = None) -> SimResult:
    """Run ``sim`` (its instance, semantics and guards; its policy reset, which handed
    ``ks``) in the kernel; ``t0``: when the run began."""
    t0 = time.perf_counter() if t0 is None else t0
    inst = sim.inst
    code = CODES[ks.rule]
    n, m, nt = inst.num_jobs, inst.num_gpus, len(inst.gpu_types)
    ctl = np.zeros(K.CTL, dtype=np.int64)
    ctl[K.LEFT], ctl[K.MAXTIME], ctl[K.MAXEVENTS] = n, sim.max_time, sim.max_events
    ctl[K.POLICY] = code
    rounds = ks.rounds if code in (K.FIFO, K.LAS) else None
    ctl[K.GAVEL], ctl[K.LEASE_FIT] = rounds is not None, sim.lease_fits
    ctl[K.REALLOC], ctl[K.SOLVED_AT] = (
        (ks.realloc, -1) if code == K.LAS and rounds is None else (0, -1)
    )
    ctl[K.LEASE] = (
        K.PER_ROUND if not sim.leases else K.WHOLE_JOB if sim.lease_len is None else sim.lease_len
    )
    span = (
        ks.round_span
        if ks.round_span is not None and code == K.SRTF
        else np.zeros(n, dtype=np.int64)
    )
    jfix = np.stack([inst.release, inst.tasks_per_round, inst.rounds, inst.overhead, span]).astype(
        np.int64
    )
    jst = np.zeros((8, n), dtype=np.int64)
    jst[K.BARR] = inst.release
    jst[K.FIRST] = -1
    gst = np.zeros((4, m), dtype=np.int64)
    gst[K.GLAST] = -1
    # Arrivals sorted by (time, kind, job): a sorted array is a valid heap.
    heap = np.zeros((2 * n + 2 * m + 64, 3), dtype=np.int64)
    order = np.lexsort((np.arange(n), inst.release))
    heap[:n, 0], heap[:n, 1], heap[:n, 2] = inst.release[order], ARRIVE, order
    ctl[K.NHEAP] = n
    buf = np.empty((inst.num_tasks, 5), dtype=np.int64)
    evb = np.zeros((3, n), dtype=np.int64)
    req = np.zeros(n, dtype=np.int64)
    pairs = np.zeros((max(n * nt, m), 2), dtype=np.int64)
    single = code in (K.ALLOX, K.LAS) or rounds is not None
    fits = ks.fits if single and ks.fits is not None else np.zeros((n, nt), dtype=bool)
    pbt = (inst.proc_by_type + inst.sync_by_type).astype(np.int64)
    thr = (ks.limits if ks.limits is not None and code == K.TIRESIAS else np.zeros(0)).astype(
        np.float64
    )
    alloc = np.zeros((n, nt))
    received = np.zeros((n, nt))
    args = (
        ctl,
        jfix,
        inst.proc.astype(np.int64),
        inst.sync.astype(np.int64),
        inst.eligible,
        inst.gpu_type_index.astype(np.int64),
        fits,
        pbt,
        thr,
        jst,
        gst,
        heap,
        buf,
        evb,
        req,
        pairs,
        alloc,
        received,
    )
    while (rc := K.run(*args)) != K.DONE:
        if rc == K.NEED_ROUND:  # Gavel's round start: the reference's decision
            now = int(ctl[K.NOW])
            st = RoundState(
                now,
                jst[K.ARRIVED].astype(bool),
                jst[K.FINISHED].astype(bool),
                jst[K.BARR],
                np.maximum(gst[K.GFREE], gst[K.GHOLD]) <= now,
            )
            assert rounds is not None
            rows = [(j, g) for j, gpus in rounds(st) for g in gpus.tolist()]
            pairs[: len(rows)] = rows if rows else np.zeros((0, 2), dtype=np.int64)
            ctl[K.NPAIRS] = len(rows)
        elif rc == K.NEED_LP:  # gavel-las: the LP over the active jobs, as the reference
            active = np.flatnonzero(
                jst[K.ARRIVED].astype(bool) & ~jst[K.FINISHED].astype(bool)
            ).tolist()
            if active:
                assert ks.allocation is not None
                alloc[active] = ks.allocation(active)
        elif rc == K.NEED_PAIRS:  # allox: the assignment of the waiting jobs
            assert ks.pairs is not None
            got = ks.pairs(req[: ctl[K.NREQ]].copy(), inst.rounds - jst[K.RND])
            pairs[: len(got)] = got if got else np.zeros((0, 2), dtype=np.int64)
            ctl[K.NPAIRS] = len(got)
        else:
            raise stopped(sim, rc, ctl, jst)
    return result(sim, ctl, jst, gst, buf, progress, t0)


def stopped(sim: Simulator, rc: int, ctl: np.ndarray, jst: np.ndarray) -> SimulationError:
    """The error of a run a guard stopped (return code ``rc``, ``kernel.py``'s layout)."""
    sim.now = int(ctl[K.NOW])
    why = {
        K.NO_EVENT: "no event is left",
        K.PAST_TIME: f"simulated time passed the guard {sim.max_time}",
        K.TOO_MANY_EVENTS: f"the number of events passed the guard {sim.max_events}",
        K.HEAP_FULL: "the event heap overflowed",
    }[rc]
    return waiting_forever(
        sim.inst, sim.policy.name, jst[K.FINISHED].astype(bool), jst[K.RND], why, sim.now
    )


def result(
    sim: Simulator,
    ctl: np.ndarray,
    jst: np.ndarray,
    gst: np.ndarray,
    buf: np.ndarray,
    progress,
    t0: float,
) -> SimResult:
    """The checked result of a finished kernel run (``kernel.py``'s layout)."""
    inst = sim.inst
    rows = buf[: int(ctl[K.NBUF])]
    rec = RunRecord(
        Schedule.from_indices(inst, rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3], rows[:, 4]),
        jst[K.BARR].copy(),
        jst[K.FIRST].copy(),
        jst[K.SETUP].copy(),
        gst[K.GBUSY].copy(),
        int(ctl[K.NEVENTS]),
        int(ctl[K.RESERVED]),
        int(ctl[K.LEASE_IDLE]),
        int(ctl[K.LEASES]),
    )
    sim.num_events = rec.num_events
    if progress is not None:
        progress.update(inst.num_jobs)
    return sim.result(rec, time.perf_counter() - t0, "compiled")
