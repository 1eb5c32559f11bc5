"""The interleaved dispatcher is work-conserving: its loop against a plain
Python reference of the rule, the toy whose schedule used to flip on a 1 ms release
change, and a paper-regime workload on which no V100 idles while a batch that could
start on it (and would finish no later there) waits."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from strategies import instances
from test_engine import repeat_cases

from hare_opt.generators import build_instance, get_regime, paper_jobs, parse_cluster
from hare_opt.heuristics.hare import fluid_order
from hare_opt.heuristics.rounds import RoundEngine, run_interleaved
from hare_opt.model import GPU, Instance, Job
from hare_opt.model.rules import earliest_start
from hare_opt.sim import simulate
from hare_opt.solvers import solve

TESTBED = "V100:8,T4:4,K80:1,M60:2"


def reference_interleaved(inst: Instance, order, *, sync_first: bool = True, warm=None):
    """``run_interleaved``'s rule from the spec, O(N M) a step: t = max(t, least over jobs
    with rounds left of max(key, first free eligible GPU)); of the jobs with key <= t and
    an eligible GPU free by t, the first in ``order`` looks at the GPU of its first slot
    (least end (+ sync), then a GPU that ran it last, then later-freed, then index); busy
    at t: its key becomes that GPU's free time; else it places its round on the GPUs not
    busy at t with a job before it in ``order`` that has rounds left
    (``RoundEngine.place_round`` with the ranks and rounds left) and its key becomes its
    barrier."""
    eng = RoundEngine(inst, sync_first=sync_first, warm=warm)
    rank = np.empty(inst.num_jobs, np.int64)
    rank[np.asarray(order)] = np.arange(inst.num_jobs)
    left = inst.rounds.astype(np.int64).copy()
    key = eng.barrier.copy()
    free, last = eng._gst[0], eng._gst[1]
    elig = inst.eligible
    t, waited = -(1 << 62), 0
    while (live := np.flatnonzero(left > 0)).size:
        tf = np.array([free[elig[j]].min() for j in live])
        t = max(t, int(np.maximum(key[live], tf).min()))
        cand = live[(key[live] <= t) & (tf <= t)]
        j = int(cand[np.argmin(rank[cand])])
        b, r, o = int(eng.barrier[j]), int(inst.release[j]), int(inst.overhead[j])
        best = None
        for g in np.flatnonzero(elig[j]).tolist():
            st_g = earliest_start(int(free[g]), bool(last[g] == j), r, o, b)
            end = st_g + int(inst.proc[j, g]) + (int(inst.sync[j, g]) if sync_first else 0)
            k = (end, last[g] != j, -int(free[g]), g)  # ties: own GPU, freed last, index
            best = k if best is None or k < best else best
        g = best[3]
        if free[g] > t:
            key[j] = free[g]
            waited += 1
            continue
        eng.place_round(j, np.stack([rank, left]), t)
        left[j] -= 1
        key[j] = eng.barrier[j]
    return eng, waited


@given(case=repeat_cases(), sync_first=st.booleans())
def test_dispatch_is_the_reference_rule(case, sync_first):
    inst, warm, order = case
    ref, waited = reference_interleaved(inst, order, sync_first=sync_first, warm=warm)
    for repeat in (True, False):
        eng = run_interleaved(
            inst, order, sync_first=sync_first, warm=warm, repeat=repeat, conserve=True
        )
        assert eng.schedule().sorted() == ref.schedule().sorted()
        assert eng.barrier.tolist() == ref.barrier.tolist()
        assert eng.waited == waited


@given(inst=instances(max_jobs=5, max_gpus=4, max_tasks=30), perm=st.randoms(use_true_random=False))
def test_dispatch_is_the_reference_rule_with_eligibility(inst, perm):
    order = list(range(inst.num_jobs))
    perm.shuffle(order)
    ref, waited = reference_interleaved(inst, order)
    eng = run_interleaved(inst, order, conserve=True)
    assert eng.schedule().sorted() == ref.schedule().sorted()
    assert eng.waited == waited


def reference_hold(inst: Instance, order, *, sync_first: bool = True, warm=None):
    """``run_interleaved(conserve=False)``'s rule (the engine before it conserved work): t
    = least over jobs not yet ready of max(barrier, first free eligible GPU); those with
    barrier <= t become ready; the first ready job in ``order`` places its round."""
    eng = RoundEngine(inst, sync_first=sync_first, warm=warm)
    rank = np.empty(inst.num_jobs, np.int64)
    rank[np.asarray(order)] = np.arange(inst.num_jobs)
    left = inst.rounds.astype(np.int64).copy()
    ready = np.zeros(inst.num_jobs, bool)
    free = eng._gst[0]
    while (live := np.flatnonzero(left > 0)).size:
        wait = live[~ready[live]]
        if wait.size:
            tf = np.array([free[inst.eligible[j]].min() for j in wait])
            t = int(np.maximum(eng.barrier[wait], tf).min())
            ready[wait[eng.barrier[wait] <= t]] = True
        cand = live[ready[live]]
        j = int(cand[np.argmin(rank[cand])])
        eng.place_round(j)
        left[j] -= 1
        ready[j] = False
    return eng


@given(case=repeat_cases(), sync_first=st.booleans())
def test_hold_dispatch_is_the_barrier_clock_rule(case, sync_first):
    inst, warm, order = case
    ref = reference_hold(inst, order, sync_first=sync_first, warm=warm)
    for repeat in (True, False):
        eng = run_interleaved(
            inst, order, sync_first=sync_first, warm=warm, repeat=repeat, conserve=False
        )
        assert eng.schedule().sorted() == ref.schedule().sorted()
        assert eng.waited == 0


def toy(b_release: int) -> Instance:
    """Two 1-GPU jobs that sync every batch (270 ms batch, 205 ms sync), one GPU."""
    jobs = tuple(
        Job(n, {"V": 270}, rounds=5, weight=w, sync_time=205, switch_overhead=4, release=r)
        for n, w, r in (("a", 2, 0), ("b", 1, b_release))
    )
    return Instance(gpus=(GPU("g0", "V"),), jobs=jobs)


def test_toy_release_one_ms_later_gives_the_same_schedule_quality():
    """Both jobs interleave on the GPU whether released together or 1 ms apart: the
    engine, hare's offline solve and the simulated policy give the same quality. The
    -hold dispatch keeps the GPU for the first job through its syncs when both are
    released together (the serial schedule, 9,311)."""
    together, later = toy(0), toy(1)
    assert run_interleaved(together, [0, 1]).objective() == 8287
    assert run_interleaved(later, [0, 1]).objective() == 8287
    assert run_interleaved(together, [0, 1], conserve=False).objective() == 9311
    a, b = (solve(i, "hare").objective for i in (together, later))
    assert abs(a - b) <= 1e-3 * a and a <= 8287
    a, b = (simulate(i, "hare").metrics["total_weighted_jct"] for i in (together, later))
    assert abs(a - b) <= 1e-3 * a


def paper_workload(seed: int, n_jobs: int = 8) -> Instance:
    """A paper-regime workload on the testbed, built as ``sweeps.simulate.simulate_cell``
    builds it (Poisson arrivals at the regime's rate, Hare switching)."""
    reg = get_regime("paper")
    gap = reg.mean_interarrival(len(parse_cluster(TESTBED)))
    jobs = paper_jobs(
        seed,
        n_jobs,
        mix=(1, 1, 1, 1),
        arrival="poisson",
        mean_interarrival=gap,
        max_gpus=8,
        regime=reg,
    )
    return build_instance(
        jobs,
        TESTBED,
        switching="hare",
        bandwidth_gbps=25.0,
        batch_scale=1.0,
        unit_ms=None,
        name=f"wc-s{seed}",
        regime=reg,
    )


def idle_while_waiting(inst: Instance, sched, gtype: int = 0) -> tuple[int, int, int]:
    """(idle, unexcused, busy) GPU time of type ``gtype``: idle while some job eligible on
    it waited with a round released (its barrier, or release, passed) none of whose tasks
    had started; unexcused: the part in which that job's batch, started there at that
    time, would have ended (with its sync) before its round's first-ending task did, so
    the rule (a job waits for the GPU where its first batch ends soonest) does not
    excuse it. Busy: processing and setup time of those GPUs. (Per idle gap, the largest
    such overlap over the waiting rounds: a lower bound of the union, exact when one job
    waits at a time.)"""
    job = np.array([inst.job_index(j) for j in sched.job])
    gpu = np.array([inst.gpu_index(g) for g in sched.gpu])
    rnd, start, end = np.asarray(sched.round), np.asarray(sched.start), np.asarray(sched.end)
    synced = end + inst.sync[job, gpu]
    key = job * (int(inst.rounds.max()) + 1) + rnd
    o = np.lexsort((rnd, job))
    _, first = np.unique(key[o], return_index=True)
    w_job = job[o][first]
    w1 = np.minimum.reduceat(start[o], first)  # the round's first start
    e = np.minimum.reduceat(synced[o], first)  # its first-ending task, synced
    done = np.maximum.reduceat(synced[o], first)  # its barrier
    w0 = np.where(rnd[o][first] == 0, inst.release[w_job], np.r_[0, done[:-1]])
    idle = unexcused = busy = 0
    for g in np.flatnonzero(inst.gpu_type_index == gtype).tolist():
        og = np.flatnonzero(gpu == g)
        og = og[np.argsort(start[og], kind="stable")]
        setup = np.r_[True, job[og][1:] != job[og][:-1]] * inst.overhead[job[og]]
        lo, hi = start[og] - setup, end[og]
        busy += int((hi - lo).sum())
        ga, gc = np.r_[0, hi], np.r_[lo, 1 << 62]
        ran = np.r_[-1, job[og]]  # the job g ran before each gap
        worst, unex = np.zeros(len(ga), np.int64), np.zeros(len(ga), np.int64)
        for j in np.flatnonzero(inst.eligible[:, g]).tolist():
            sel = w_job == j
            a0, a1, ej = w0[sel], w1[sel], e[sel]
            first_w = np.searchsorted(a1, ga, side="right")
            last_w = np.searchsorted(a0, gc, side="left")
            n = np.maximum(last_w - first_w, 0)
            gi = np.repeat(np.arange(len(ga)), n)
            wi = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n) + np.repeat(first_w, n)
            u, v = np.maximum(ga[gi], a0[wi]), np.minimum(gc[gi], a1[wi])
            ok = v > u
            gi, wi, u, v = gi[ok], wi[ok], u[ok], v[ok]
            np.maximum.at(worst, gi, v - u)
            p, s = int(inst.proc[j, g]), int(inst.sync[j, g])
            x_star = ej[wi] - p - s - np.where(ran[gi] == j, 0, int(inst.overhead[j]))
            np.maximum.at(unex, gi, np.minimum(v, x_star) - u)
        idle += int(worst.sum())
        unexcused += int(unex.sum())
    return idle, unexcused, busy


def test_no_v100_idles_while_a_batch_that_could_start_on_it_waits():
    """The interleaved dispatcher's plan of paper-regime workloads (16 jobs, testbed):
    V100 time idle while a released round waits, beyond the rule, is at most a tiny
    share of the V100s' busy time (none on these; a job that waited for a busy GPU may
    lose it to a better-ranked job and then end later than the idle GPU offered, the
    rule's only cost). The hold form (the engine before) leaves a third of that busy
    time idle on seed 4: the measure sees the defect."""
    for seed in (3, 4):
        inst = paper_workload(seed, 16)
        eng = run_interleaved(inst, fluid_order(inst), conserve=True)
        idle, unexcused, busy = idle_while_waiting(inst, eng.schedule())
        assert unexcused <= 1e-3 * busy, (seed, idle, unexcused, busy, eng.waited)
    hold = run_interleaved(inst, fluid_order(inst), conserve=False)
    assert hold.objective() > eng.objective()
    _, unexcused, busy = idle_while_waiting(inst, hold.schedule())
    assert unexcused > 0.2 * busy
