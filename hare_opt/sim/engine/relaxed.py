"""The compiled engine for relaxed policies: plan followers and hlas in one numba loop
(``relaxed_kernel.py``).

The reference engine (``reference.Simulator``) stays the definition; this one
transcribes the plan followers' dispatch and hlas's decision and gives the same
executed schedules, task for task (tests/test_relaxed.py). What it reads of a policy
is the ``RelaxedKernel`` the policy hands it (``engine.state``). A plan follower's
planning is the policy's own code (the state's ``replan``): the loop returns when it
re-plans, the policy plans from the loop's state, and the plan is queued in the
loop's arrays as runs (``engine/plans.py``). A subclass that changes the rules the
kernel transcribes hands no state and runs in the reference engine.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from hare_opt.heuristics.listsched import ClusterState
from hare_opt.sim.engine import compiled
from hare_opt.sim.engine import kernel as K
from hare_opt.sim.engine import relaxed_kernel as RK
from hare_opt.sim.engine.state import RelaxedKernel
from hare_opt.sim.events import ARRIVE, SimulationError

if TYPE_CHECKING:
    from hare_opt.model import Instance
    from hare_opt.sim.engine.plans import PlanRuns
    from hare_opt.sim.engine.reference import Simulator
    from hare_opt.sim.results import SimResult

#: Relaxed rule -> the kernel's policy code.
CODES = {"plan": RK.PLAN, "hlas": RK.HLAS}


class _View:
    """What a plan follower's re-plan reads of the simulator (``inst``, ``now``,
    ``active``, ``state``), over the loop's arrays."""

    def __init__(self, inst: Instance, ctl: np.ndarray, jst: np.ndarray, gst: np.ndarray):
        self.inst, self._ctl, self._jst = inst, ctl, jst
        st = self.state = ClusterState(inst)
        st.free, st.last = gst[K.GFREE], gst[K.GLAST]
        st.barrier, st.round = jst[K.BARR], jst[K.RND]
        st.placed, st.round_end = jst[RK.PLACED], jst[RK.RENDS]

    @property
    def now(self) -> int:
        return int(self._ctl[K.NOW])

    @property
    def active(self) -> set[int]:
        jst = self._jst
        return set(np.flatnonzero((jst[K.ARRIVED] == 1) & (jst[K.FINISHED] == 0)).tolist())


class _Queues:
    """A plan's runs in the loop's per-GPU heaps, or per type and job for a
    work-conserving follower (rows grow with the largest plan)."""

    def __init__(self, types: int, gpus: int, jobs: int, conserving: bool):
        self.conserving, self.jobs = conserving, jobs
        self.qh = np.zeros((0, RK.QCOLS), dtype=np.int64)
        self.wh = np.zeros((0, 4), dtype=np.int64)
        self.qlo = np.zeros(gpus + 1, dtype=np.int64)
        self.qn = np.zeros(gpus, dtype=np.int64)
        segs = types * jobs if conserving else 0
        self.wlo = np.zeros(segs + 1, dtype=np.int64)
        self.wn = np.zeros(segs, dtype=np.int64)
        self.tjobs = np.zeros((types, jobs if conserving else 0), dtype=np.int64)
        self.tnj = np.zeros(types, dtype=np.int64)

    def load(self, plan: PlanRuns) -> int:
        """Queue ``plan``; returns the tasks queued."""
        runs = np.stack(
            [
                plan.gtype if self.conserving else plan.gpu,
                plan.job,
                plan.rnd,
                plan.key,
                plan.start,
                plan.step,
                plan.count,
                plan.period,
                plan.rounds,
            ],
            axis=1,
        ).astype(np.int64)
        if len(runs) > len(self.qh):
            self.qh = np.zeros((max(len(runs), len(self.qh) * 5 // 4), RK.QCOLS), np.int64)
        if not self.conserving:
            self.qlo[1:] = np.cumsum(np.bincount(plan.gpu, minlength=len(self.qn)))
            return int(RK.load_plan(runs, self.qh, self.qlo, self.qn))
        if len(runs) > len(self.wh):
            self.wh = np.zeros((len(self.qh), 4), np.int64)
        seg = plan.gtype.astype(np.int64) * self.jobs + plan.job
        order = np.argsort(seg, kind="stable")
        count = np.bincount(seg, minlength=len(self.wn))
        self.wlo[1:] = np.cumsum(count)
        present = count.reshape(len(self.tnj), self.jobs) > 0
        self.tnj[:] = present.sum(axis=1)
        for k, row in enumerate(present):
            self.tjobs[k, : self.tnj[k]] = np.flatnonzero(row)
        return int(
            RK.load_ready(runs[order], order.astype(np.int64), self.qh, self.wh, self.wlo, self.wn)
        )


def run(sim: Simulator, ks: RelaxedKernel, progress=None, t0: float | None = None) -> SimResult:
    """Run ``sim`` (its instance and guards; its policy reset, which handed ``ks``) in
    the kernel; ``t0``: when the run began."""
    t0 = time.perf_counter() if t0 is None else t0
    inst, name = sim.inst, sim.policy.name
    code = CODES[ks.rule]
    n, m, nt = inst.num_jobs, inst.num_gpus, len(inst.gpu_types)
    if nt > 62:
        raise SimulationError(
            f"policy {name!r}: the compiled engine handles at most "
            f"62 GPU types, {inst.name!r} has {nt}"
        )
    plan = code == RK.PLAN
    ctl = np.zeros(RK.CTL, dtype=np.int64)
    ctl[K.LEFT], ctl[K.MAXTIME], ctl[K.MAXEVENTS] = n, sim.max_time, sim.max_events
    ctl[K.POLICY] = code
    if plan:
        ctl[RK.ARRIVAL] = ks.arrival
        ctl[RK.CONSERVING] = ks.conserving
        ctl[RK.GAP], ctl[RK.WATER], ctl[RK.LASTPLAN] = ks.gap, ks.water, ks.last_plan
    jfix = np.stack(
        [inst.release, inst.tasks_per_round, inst.rounds, inst.overhead, np.zeros(n)]
    ).astype(np.int64)
    jst = np.zeros((RK.JROWS, n), dtype=np.int64)
    jst[K.BARR] = inst.release
    jst[K.FIRST] = -1
    jst[RK.BEST_AT] = -1
    ctl[RK.IDLE] = m
    gst = np.zeros((4, m), dtype=np.int64)
    gst[K.GLAST] = -1
    # Room for one decision's events: two per task started (at most one per GPU), and a
    # wake-up per queue a dispatch looks at (each type, again after each round completed).
    headroom = 2 * m + nt * (m + 1) + 2
    heap = np.zeros((2 * n + 2 * m + headroom + 64, 3), dtype=np.int64)
    order = np.lexsort((np.arange(n), inst.release))  # (time, kind, job): a valid heap
    heap[:n, 0], heap[:n, 1], heap[:n, 2] = inst.release[order], ARRIVE, order
    ctl[K.NHEAP] = n
    buf = np.empty((inst.num_tasks, 5), dtype=np.int64)
    gtype = inst.gpu_type_index.astype(np.int64)
    tgpu = np.argsort(gtype, kind="stable").astype(np.int64)
    tptr = np.concatenate([[0], np.cumsum(inst.type_count)]).astype(np.int64)
    gpos = np.empty(m, dtype=np.int64)
    gpos[tgpu] = np.arange(m) - tptr[gtype[tgpu]]
    size = 2 ** np.ceil(np.log2(np.maximum(inst.type_count, 1))).astype(np.int64)
    toff = np.concatenate([[0], np.cumsum(2 * size)]).astype(np.int64)
    tree = np.full(int(toff[-1]), RK._BIG, dtype=np.int64)
    for k in range(nt):  # every GPU free at 0
        leaves = toff[k] + size[k]
        tree[leaves : leaves + inst.type_count[k]] = 0
        for at in range(size[k] - 1, 0, -1):
            tree[toff[k] + at] = min(tree[toff[k] + 2 * at], tree[toff[k] + 2 * at + 1])
    queues = _Queues(nt, m, n, plan and ks.conserving)
    puntil = (
        ks.planned_until if plan and ks.planned_until is not None else np.zeros(n, dtype=np.int64)
    )
    q = float(ks.quantum) if not plan else 1.0
    view = _View(inst, ctl, jst, gst)
    args = [
        ctl,
        jfix,
        inst.proc.astype(np.int64),
        inst.sync.astype(np.int64),
        inst.eligible,
        jst,
        gst,
        heap,
        buf,
        gtype,
        tptr,
        tgpu,
        queues.qh,
        queues.qlo,
        queues.qn,
        queues.wh,
        queues.wlo,
        queues.wn,
        queues.tjobs,
        queues.tnj,
        puntil,
        np.zeros(n, dtype=np.int64),
        inst.weight.astype(np.int64),
        inst.min_task_time.astype(np.int64),
        q,
        inst.proc_by_type.astype(np.int64),
        gpos,
        tree,
        toff,
        np.full((3, max(n, m)), -1, dtype=np.int64),
        headroom,
    ]
    while (rc := RK.run(*args)) != RK.DONE:
        if rc == RK.NEED_PLAN:  # the policy's own re-plan, from the loop's state
            assert ks.replan is not None
            runs, last_plan = ks.replan(view)
            ctl[RK.QUEUED] = queues.load(runs)
            args[12], args[15] = queues.qh, queues.wh
            ctl[RK.LASTPLAN], ctl[RK.NEWJOBS], ctl[RK.STARVED] = last_plan, 0, 0
            jst[RK.BLOCKED] = 0
        elif rc == RK.GROW:
            heap = np.concatenate([heap, np.zeros_like(heap)])
            args[7] = heap
        elif rc == RK.INELIGIBLE:
            job, gpu = inst.jobs[int(ctl[RK.BAD_JOB])].id, inst.gpus[int(ctl[RK.BAD_GPU])].id
            raise SimulationError(f"policy {name!r}: job {job!r} cannot run on gpu {gpu!r}")
        else:
            raise compiled.stopped(sim, rc, ctl, jst)
    return compiled.result(sim, ctl, jst, gst, buf, progress, t0)
