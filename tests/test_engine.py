"""The numba round engine against a brute-force oracle, and its schedules against the checker."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit
from strategies import instances

from hare_opt.checker import check
from hare_opt.generators import random_instance
from hare_opt.heuristics import _kernels
from hare_opt.heuristics.rounds import (
    DISPATCH,
    HOLD,
    STREAM_LIMIT,
    RoundEngine,
    clip_runs,
    expand_blocks,
    run_interleaved,
)
from hare_opt.model import GPU, Instance, Job
from hare_opt.model.planning import Warm
from hare_opt.model.rules import earliest_start
from hare_opt.sim.engine import relaxed_kernel
from hare_opt.solvers.bnb import _search
from hare_opt.util import jit as jit_module


def oracle_slots(inst, j, free, last, barrier, K, sync_first):
    """Every slot of every eligible GPU, from the spec alone: (gpu start, ranking key of
    each slot, end + sync of each slot), K slots per GPU (more are never needed)."""
    g = np.flatnonzero(inst.eligible[j])
    r, o = inst.release[j], inst.overhead[j]
    start = np.where(
        last[g] == j, np.maximum(free[g], barrier), np.maximum(np.maximum(free[g], r) + o, barrier)
    )
    p, s = inst.proc[j, g], inst.sync[j, g]
    ends = start[:, None] + p[:, None] * np.arange(1, K + 1)  # (GPUs, K)
    synced = ends + s[:, None]
    return dict(zip(g.tolist(), start.tolist())), (synced if sync_first else ends), synced


@st.composite
def warm_runs(draw):
    """An instance (some rounds larger than STREAM_LIMIT), a running cluster consistent
    with it, and a sequence of jobs whose rounds get placed one by one."""
    inst = draw(instances(max_jobs=4, max_gpus=4, max_rounds=3, max_k=4, max_tasks=None))
    if draw(st.booleans()):  # a huge round: the bisection path
        j = draw(st.integers(0, inst.num_jobs - 1))
        jobs = list(inst.jobs)
        jobs[j] = dataclasses.replace(
            jobs[j], tasks_per_round=draw(st.integers(STREAM_LIMIT - 2, 2 * STREAM_LIMIT + 50))
        )
        inst = inst.with_jobs(jobs)
    m, n = inst.num_gpus, inst.num_jobs
    free = draw(st.lists(st.integers(0, 25), min_size=m, max_size=m))
    last = draw(st.lists(st.integers(-1, n - 1), min_size=m, max_size=m))
    k = inst.tasks_per_round.tolist()
    left = [draw(st.integers(1, kj)) for kj in k]
    carry = [draw(st.integers(0, 40)) if lj < kj else 0 for lj, kj in zip(left, k)]
    warm = Warm(free, last, left, carry) if draw(st.booleans()) else None
    seq = draw(st.lists(st.sampled_from(range(n)), min_size=1, max_size=8))
    return inst, warm, seq, draw(st.booleans())


def assert_rounds_match_oracle(inst, warm, seq, sync_first):
    """Each round uses exactly the K smallest slots (by end + sync, or by end in the
    -eft form) of all eligible GPUs, each run starting at its GPU's earliest start;
    with sync first, the barrier is the K-th smallest end + sync: the least possible."""
    eng = RoundEngine(inst, sync_first=sync_first, warm=warm)
    free = np.array(warm.free if warm else [0] * inst.num_gpus)
    last = np.array(warm.last if warm else [-1] * inst.num_gpus)
    k = inst.tasks_per_round
    left = np.array(warm.left if warm else k)
    carry = np.array(warm.carry if warm else [0] * inst.num_jobs)
    barrier, rnd = inst.release.copy(), np.zeros(inst.num_jobs, int)
    for j in seq:
        K = int(left[j])
        starts, key, synced = oracle_slots(inst, j, free, last, barrier[j], K, sync_first)
        before = len(eng.blocks)
        got = eng.place_round(j)
        runs = eng.blocks[before:]
        assert (runs[:, 0] == j).all() and (runs[:, 1] == rnd[j]).all()
        assert runs[:, 2].tolist() == (k[j] - K + np.cumsum(runs[:, 4]) - runs[:, 4]).tolist()
        assert len(set(runs[:, 3].tolist())) == len(runs) and runs[:, 4].sum() == K
        used_key, used_end = [], []
        assert (runs[:, 7] == 1).all()  # one round: no period
        for _, _, _, g, cnt, start, _, _ in runs.tolist():
            assert start == starts[g]  # the GPU's earliest start
            p, s = int(inst.proc[j, g]), int(inst.sync[j, g])
            ends = start + p * np.arange(1, cnt + 1)
            used_key += (ends + s if sync_first else ends).tolist()
            used_end.append(int(ends[-1]) + s)
            free[g], last[g] = ends[-1], j
        assert sorted(used_key) == np.sort(key, axis=None)[:K].tolist()
        assert got == max(int(carry[j]), *used_end)
        if sync_first:
            assert got == max(int(carry[j]), int(np.sort(synced, axis=None)[K - 1]))
        else:
            assert got >= max(int(carry[j]), int(np.sort(synced, axis=None)[K - 1]))
        barrier[j], rnd[j], left[j], carry[j] = got, rnd[j] + 1, k[j], 0
    assert eng.barrier.tolist() == barrier.tolist()


@given(case=warm_runs())
def test_place_round_takes_the_earliest_slots(case):
    assert_rounds_match_oracle(*case)


def test_setup_ties_end_where_the_setup_fits_before_the_barrier():
    # round 2 (barrier 13, setup 3): GPUs freed at 11 and 12 by another job do not tie
    # (starts 14 and 15); the earlier one must win the second slot (barrier 19, not 20)
    inst = Instance(
        (GPU("a", "A"), GPU("b", "A"), GPU("c", "A")),
        (Job("j", {"A": 5}, rounds=2, tasks_per_round=2, switch_overhead=3),),
    )
    warm = Warm([0, 11, 12], [-1, -1, -1], [2], [0])
    assert_rounds_match_oracle(inst, warm, [0, 0], True)


@pytest.mark.parametrize("seed", range(4))
def test_every_dispatch_is_checked_with_its_objective(seed):
    # rounds on both sides of STREAM_LIMIT, setups, per-type syncs, releases, eligibility
    inst = random_instance(
        seed,
        n_jobs=8,
        n_gpus=9,
        rounds=(1, 5),
        tasks_per_round=(1, 2 * STREAM_LIMIT if seed % 2 else 12),
        heterogeneity=1.5,
        release_spread=60,
        sync=(0, 4),
        sync_map=True,
        switch_overhead=(0, 6),
        eligibility=0.3,
        max_task_time=6,
    )
    order = np.random.default_rng(seed).permutation(inst.num_jobs)
    for mode, run in DISPATCH.items():
        eng = run(inst, order)
        rep = check(inst, eng.schedule())
        assert rep.feasible, (mode, rep.violations[:3])
        assert rep.objective == eng.objective()
        assert eng.blocks[:, 4] @ eng.blocks[:, 7] == inst.num_tasks


def test_unwritable_numba_cache_warns_once_and_still_compiles(monkeypatch):
    """numba raises at decoration when no cache folder is writable: fall back, one warning."""

    def compiled(fn, cache, options):
        if cache:
            raise RuntimeError("cannot cache function 'f': no locator available")
        return fn

    monkeypatch.setattr(jit_module, "_compiled", compiled)
    jit = jit_module.PinnedJit(earliest_start, jit_module.source_pin(earliest_start), "test")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = jit.compiled(lambda x: x + 1, {})  # what a kernel gets when numba loads
        g = jit.compiled(lambda x: x * 2, {})
    assert f(1) == 2 and g(2) == 4
    assert len(caught) == 1 and "cache unavailable" in str(caught[0].message)


def test_a_kernel_called_with_a_constant_compiles_once_for_the_plain_type():
    """numba types a constant argument of a call between kernels as a literal and would
    compile the callee for it and again for int64 (place_round took 2.5 s each)."""

    def add(a, b):
        return a + b

    plain = jit_module._compiled(add, False, {})

    def caller(x):
        return plain(x, 0) + plain(x, 1) + plain(x, x)

    assert jit_module._compiled(caller, False, {})(3) == 13
    assert [str(s) for s in plain.signatures] == ["(int64, int64)"]
    literal = njit(add)
    njit(lambda x: literal(x, 0) + literal(x, x))(3)
    assert len(literal.signatures) == 2  # what plain numba does: the test can fail


@given(st.lists(st.sampled_from(["nrt", "no_cpython_wrapper", "boundscheck", "fastmath"])))
def test_numbas_flags_hash_and_compare_as_numba_computes_them(names):
    """``util.jit`` replaces numba's flag hashing with a cheaper computation of the same
    values (a tenth of the compile); numba's own methods are kept for the comparison."""
    from numba.core.compiler import Flags
    from numba.core.targetconfig import TargetConfig

    jit_module.load()
    assert getattr(TargetConfig, "_hare_opt_fast", False)  # this numba got the replacement
    original = TargetConfig._hare_opt_values
    a, b = Flags(), Flags()
    for name in names:
        setattr(a, name, True)
    assert a.values() == original(a) and b.values() == original(b)
    assert hash(a) == hash(tuple(sorted(original(a))))
    assert (a == b) == (original(a) == original(b))
    b.nrt = a.nrt  # set explicitly to the same value: equal as numba compares them
    assert (a == b) == (original(a) == original(b))


@pytest.mark.parametrize(
    "module", [_kernels, _search, relaxed_kernel], ids=["round engine", "bnb", "relaxed simulator"]
)
def test_start_rule_is_pinned_for_the_numba_cache(module):
    """numba's cache of a kernel would keep a stale copy of an edited start rule (or of
    another module's helpers it calls); the pin in each kernel file makes such an edit
    visible here (update the pin with the rule)."""
    assert module.jit.pinned


def test_warm_up_runs_every_dispatch_mode():
    from hare_opt.heuristics.rounds import warm_up

    assert warm_up() >= 0.0


@st.composite
def repeat_cases(draw):
    """Long jobs on a few GPUs of few types (ties between GPUs are common), from an idle
    or a running cluster, in a random order."""
    seed = draw(st.integers(0, 10**6))
    inst = random_instance(
        seed,
        n_jobs=draw(st.integers(1, 6)),
        n_gpus=draw(st.integers(1, 8)),
        gpu_types=("A", "B", "C")[: draw(st.integers(1, 3))],
        rounds=(1, 40),
        tasks_per_round=(1, draw(st.integers(1, 5))),
        heterogeneity=draw(st.sampled_from((0.0, 0.5, 2.0))),
        release_spread=draw(st.integers(0, 40)),
        sync=(0, 10),
        sync_map=draw(st.booleans()),
        switch_overhead=(0, 5),
        max_task_time=draw(st.integers(1, 12)),
        eligibility=draw(st.sampled_from((0.0, 0.3))),
    )
    warm = None
    if draw(st.booleans()):
        m, n, k = inst.num_gpus, inst.num_jobs, inst.tasks_per_round.tolist()
        left = [draw(st.integers(1, kj)) for kj in k]
        warm = Warm(
            draw(st.lists(st.integers(0, 30), min_size=m, max_size=m)),
            draw(st.lists(st.integers(-1, n - 1), min_size=m, max_size=m)),
            left,
            [draw(st.integers(0, 40)) if lj < kj else 0 for lj, kj in zip(left, k)],
        )
    return inst, warm, np.random.default_rng(seed).permutation(inst.num_jobs)


@given(case=repeat_cases())
def test_repeated_rounds_are_the_rounds_placed_one_by_one(case):
    inst, warm, order = case
    for mode, run in {**DISPATCH, **HOLD}.items():
        fast, slow = run(inst, order, warm=warm), run(inst, order, warm=warm, repeat=False)
        assert fast.schedule().sorted() == slow.schedule().sorted(), mode
        assert fast.barrier.tolist() == slow.barrier.tolist(), mode
        assert fast._gst.tolist() == slow._gst.tolist(), mode  # free, last, sorted GPUs
        assert slow.repeated == 0


def side_by_side() -> Instance:
    """Four long jobs of two tasks on eight GPUs of one type, each with its own period."""
    jobs = tuple(
        Job(
            f"j{i}",
            {"A": 3 + i},
            rounds=200 + 10 * i,
            tasks_per_round=2,
            sync_time=2 + i,
            switch_overhead=1 + i % 2,
            weight=1 + i,
        )
        for i in range(4)
    )
    return Instance(tuple(GPU(f"g{i}", "A") for i in range(8)), jobs)


def test_repeats_do_place_most_rounds_of_long_jobs():
    """The fast path is taken (not only correct when idle): long jobs running side by
    side, every dispatcher (the work-conserving ones through ``_repeat_side_by_side``);
    long jobs, one per GPU of different types, the serial and -hold ones (the
    work-conserving dispatch moves those jobs between GPUs: no round repeats for long)."""
    inst = side_by_side()
    for mode, run in {**DISPATCH, **HOLD}.items():
        eng = run(inst, np.arange(inst.num_jobs))
        assert eng.repeated > 0.9 * inst.rounds.sum(), mode
    inst = random_instance(
        3,
        n_jobs=4,
        n_gpus=4,
        rounds=(200, 300),
        tasks_per_round=(1, 1),
        sync=(2, 5),
        switch_overhead=(1, 3),
    )
    for mode, run in {**DISPATCH, **HOLD}.items():
        if not mode.startswith("interleaved") or mode.endswith("-hold"):
            eng = run(inst, np.arange(inst.num_jobs))
            assert eng.repeated > 0.8 * inst.rounds.sum(), mode


@given(
    a=st.integers(0, 10**6),
    d=st.integers(0, 10**6),
    m=st.integers(1, 400),
    lo=st.integers(0, 399),
    width=st.integers(0, 399),
)
def test_first_hit_is_the_least_step_in_the_window(a, d, m, lo, width):
    """``_first_hit`` (Euclid's descent) against counting up: a sequence a + n d mod m
    revisits its values with period m, so the first m steps decide."""
    lo = lo % m
    hi = min(m - 1, lo + width)
    got = _kernels._first_hit(a, d, m, lo, hi, np.zeros((3, 128), np.int64))
    want = next((n for n in range(m) if lo <= (a + n * d) % m <= hi), None)
    assert got == (_kernels._BIG if want is None else want)


@given(case=repeat_cases(), cut=st.integers(0, 400), conserve=st.booleans())
def test_a_dispatch_cut_in_time_holds_the_full_one_before_the_cut(case, cut, conserve):
    """``until``: the dispatch stopped there holds every task of the full one that starts
    before the cut, and ``clip_runs`` keeps exactly those."""
    inst, warm, order = case
    full = run_interleaved(inst, order, warm=warm, conserve=conserve)
    part = run_interleaved(inst, order, warm=warm, conserve=conserve, until=cut)
    before = expand_blocks(inst, clip_runs(inst, full.blocks, cut)).sorted()
    assert before == expand_blocks(inst, clip_runs(inst, part.blocks, cut)).sorted()
    assert all(s < cut for s in before.start)
    every = full.schedule()
    assert len(before) == int((np.asarray(every.start) < cut).sum())
