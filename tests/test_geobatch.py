"""``geobatch`` and its factor (docs/theory.md (c)): every step of the proof is checked on
the algorithm's own schedule, which ``solve`` passes through the checker; the factor
is checked against proved optima and lower bounds, and against cluster scaling."""

from __future__ import annotations

import heapq
import json
import math
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from strategies import instances

from hare_opt.bounds import approx_factor, approx_terms, geometric_bound, lower_bound
from hare_opt.bounds.approx import covers, grid_start, ratio_order, restriction
from hare_opt.bounds.combinatorial import cluster_work, critical_path_bound
from hare_opt.bounds.guarantee import solo_span
from hare_opt.checker import check
from hare_opt.cli.main import main
from hare_opt.examples import cascade_instance
from hare_opt.generators import paper_instance, random_instance
from hare_opt.heuristics.geobatch import geobatch, plan_batches
from hare_opt.io import load_instance, load_result, save_instance
from hare_opt.model import GPU, Instance, Job
from hare_opt.solvers import solve


def replay(inst: Instance, theta: float) -> dict[tuple[int, int, int], tuple[int, int]]:
    """The list rule of the module docstring in plain Python: (job, round, task) -> (gpu,
    start). Independent of the kernel but for ``plan_batches``."""
    keep = restriction(inst, theta)[:, inst.gpu_type_index]
    p, s, o = inst.proc, inst.sync, inst.overhead
    last = [-1] * inst.num_gpus
    out, free = {}, 0
    for _, jobs in plan_batches(inst):
        t = free
        rank = {j: i for i, j in enumerate(jobs)}
        left = {j: int(inst.tasks_per_round[j]) for j in jobs}
        rnd, carry = dict.fromkeys(jobs, 0), dict.fromkeys(jobs, 0)
        ready = [j for j in jobs if inst.release[j] <= t]
        idle = set(range(inst.num_gpus))
        events = [(int(inst.release[j]), 1, j) for j in jobs if inst.release[j] > t]
        heapq.heapify(events)
        while True:
            for j in sorted(ready, key=rank.get):
                cands = sorted(
                    (g for g in idle if keep[j, g]),
                    key=lambda g: (last[g] != j, p[j, g] + s[j, g], inst.gpu_type_index[g], g),
                )
                for g in cands[: left[j]]:
                    st = t if last[g] == j else t + int(o[j])
                    out[(j, rnd[j], int(inst.tasks_per_round[j]) - left[j])] = (g, st)
                    heapq.heappush(events, (st + int(p[j, g]), 0, g))
                    free = max(free, st + int(p[j, g]))
                    carry[j] = max(carry[j], st + int(p[j, g]) + int(s[j, g]))
                    last[g], left[j] = j, left[j] - 1
                    idle.discard(g)
                if not left[j]:
                    ready.remove(j)
                    rnd[j] += 1
                    if rnd[j] < inst.rounds[j]:
                        heapq.heappush(events, (carry[j], 1, j))
                        left[j], carry[j] = int(inst.tasks_per_round[j]), 0
            if not events:
                break
            t = events[0][0]
            while events and events[0][0] <= t:
                _, kind, x = heapq.heappop(events)
                (ready.append if kind else idle.add)(x)
    return out


@given(inst=instances(max_jobs=5, max_tasks=30))
def test_kernel_follows_the_list_rule(inst):
    sched, objective, stats = geobatch(inst)
    rows = {
        (inst.job_index(j), int(r), int(k)): (inst.gpu_index(g), int(s))
        for j, r, k, g, s in zip(sched.job, sched.round, sched.task, sched.gpu, sched.start)
    }
    assert rows == replay(inst, stats["theta"])
    rep = check(inst, sched)
    assert rep.feasible, rep.violations
    assert rep.objective == objective


def busy_by_job(inst: Instance, sched) -> np.ndarray:
    """GPU time of each job: its tasks, plus a setup wherever the GPU ran another job (or
    nothing) just before."""
    busy = np.zeros(inst.num_jobs, dtype=np.int64)
    jobs, gpus = sched.job_indices(inst), sched.gpu_indices(inst)
    order = np.lexsort((sched.start, gpus))
    prev_gpu, prev_job = -1, -1
    for i in order.tolist():
        j, g = int(jobs[i]), int(gpus[i])
        busy[j] += int(sched.end[i] - sched.start[i])
        if g != prev_gpu or prev_job != j:
            busy[j] += int(inst.overhead[j])
        prev_gpu, prev_job = g, j
    return busy


def assert_proof_steps(inst: Instance) -> None:
    """Each step of the theorem's proof, on geobatch's own schedule."""
    sched, objective, stats = geobatch(inst)
    rep = check(inst, sched)
    assert rep.feasible, rep.violations
    done = rep.completion.astype(np.int64)
    keep = restriction(inst, stats["theta"])
    terms = approx_terms(inst, keep)
    rho = terms["rho"]
    span, work, w = solo_span(inst), cluster_work(inst), inst.weight
    m = inst.num_gpus
    kept_gpus = np.where(keep, inst.type_count, 0).sum(axis=1)
    round_keep = np.where(keep, inst.proc_by_type + inst.sync_by_type, 0).max(axis=1)
    busy = busy_by_job(inst, sched)
    batches = plan_batches(inst)
    assert [t for t, _ in batches] == stats["batch_taus"]
    starts = stats["batch_starts"]
    order = ratio_order(inst).tolist()
    # Step 1 (selection): released, short, a ratio-order prefix of the candidates plus one
    scheduled: set[int] = set()
    tau = grid_start(inst)
    level = 0
    while len(scheduled) < inst.num_jobs:
        cands = [
            j for j in order if j not in scheduled and inst.release[j] <= tau and span[j] <= tau
        ]
        batch = batches[level][1] if level < len(batches) and batches[level][0] == tau else []
        assert batch == cands[: len(batch)]
        assert (not cands) == (not batch)
        assert sum(int(work[j]) for j in batch[:-1]) <= m * tau
        if len(batch) < len(cands):
            assert sum(int(work[j]) for j in batch) > m * tau
        scheduled.update(batch)
        level += bool(batch)
        tau *= 2
    free = 0
    for (tau, jobs), start in zip(batches, starts):
        # Step 2 (batch start): when every GPU is free
        assert start == free
        batch_busy = int(busy[jobs].sum())
        assert int(work[jobs].sum()) <= 2 * m * tau  # knapsack plus one job
        for j in jobs:
            # Step 3 (non-idling): C_j - max(S, r_j) <= busy / M'_j + R_j a_j
            a = int(inst.overhead[j]) + int(round_keep[j])
            ready = max(start, int(inst.release[j]))
            assert ready <= max(free, tau)
            assert (
                done[j] - ready <= Fraction(batch_busy, int(kept_gpus[j])) + int(inst.rounds[j]) * a
            )
            assert busy[j] <= terms["lambda"] * int(work[j])
            assert done[j] - ready <= rho * tau  # batch makespan
            assert done[j] <= 2 * rho * tau  # Step 4
        free = int(sched.end[np.isin(sched.job_indices(inst), jobs)].max())
    # Step 5 (cover): the weight scheduled by tau_l is at least Obar_l
    for tau_l, cover in covers(inst):
        scheduled_w = sum(int(w[j]) for t, jobs in batches if t <= tau_l for j in jobs)
        assert scheduled_w >= cover
    lb = geometric_bound(inst)
    assert objective <= terms["factor"] * lb  # the theorem
    assert objective <= stats["certificate"] * (1 + 1e-12)


@given(inst=instances(max_jobs=6, max_tasks=None, max_rounds=4, max_k=5))
def test_proof_steps_on_random_instances(inst):
    assert_proof_steps(inst)


@pytest.mark.parametrize("seed", range(3))
def test_proof_steps_on_larger_instances(seed):
    inst = random_instance(
        seed,
        n_jobs=40,
        n_gpus=12,
        rounds=(1, 20),
        tasks_per_round=(1, 8),
        heterogeneity=2.0,
        release_spread=400,
        sync=(0, 4),
        sync_map=True,
        switch_overhead=(0, 5),
        eligibility=0.3,
    )
    assert_proof_steps(inst)
    res = solve(inst, "geobatch")
    lb = lower_bound(inst)
    # geometric_bound is one of the bounds, so the theorem gives this with lower_bound
    assert res.objective <= approx_factor(inst) * lb


def test_proof_steps_on_paper_instances():
    for seed, switching in ((11, "hare"), (12, "default")):
        inst = paper_instance(seed, n_jobs=60, switching=switching, unit_ms=10)
        assert_proof_steps(inst)


@given(inst=instances(max_jobs=3, max_tasks=7, max_time=6))
def test_within_factor_of_proved_optimum(inst):
    opt = solve(inst, "cpsat", time_limit=20, threads=1)
    if opt.status != "optimal":
        return  # no proved reference: nothing to compare with
    res = solve(inst, "geobatch")
    assert geometric_bound(inst) <= opt.objective
    assert res.objective <= approx_factor(inst) * opt.objective
    assert solve(inst, "hare").objective <= min(res.objective, approx_factor(inst) * opt.objective)


def scaled(inst: Instance, copies: int) -> Instance:
    gpus = tuple(GPU(f"{g.id}-c{c}", g.type) for c in range(copies) for g in inst.gpus)
    return Instance(gpus, inst.jobs, f"{inst.name}-x{copies}")


@pytest.mark.parametrize("eligibility", [0.0, 0.4])
def test_factor_does_not_change_with_cluster_size(eligibility):
    for seed in range(5):
        inst = random_instance(
            seed,
            n_jobs=10,
            n_gpus=6,
            rounds=(1, 5),
            tasks_per_round=(1, 6),
            heterogeneity=3.0,
            sync=(0, 3),
            sync_map=True,
            switch_overhead=(0, 4),
            eligibility=eligibility,
        )
        base = approx_factor(inst)
        assert math.isfinite(base)
        for copies in (2, 3, 10):
            big = scaled(inst, copies)
            assert approx_factor(big) == base
            assert solve(big, "geobatch").objective <= base * geometric_bound(big)


def test_full_eligibility_factor_is_free_of_the_cluster():
    # all GPUs eligible, theta = inf: Gamma = 1 for any number of GPUs of any type mix
    jobs = (
        Job(
            "a",
            {"A": 2, "B": 5},
            rounds=3,
            tasks_per_round=4,
            sync_time={"A": 1, "B": 0},
            switch_overhead=1,
        ),
        Job("b", {"A": 7, "B": 3}, rounds=2, tasks_per_round=9, weight=4, release=5),
    )
    factors = set()
    for na, nb in ((1, 1), (1, 40), (25, 3), (100, 100)):
        gpus = tuple(GPU(f"a{i}", "A") for i in range(na)) + tuple(
            GPU(f"b{i}", "B") for i in range(nb)
        )
        inst = Instance(gpus, jobs)
        terms = approx_terms(inst)
        assert terms["gamma"] == 1
        factors.add(terms["factor"])
        assert approx_factor(inst) <= terms["factor"] * (1 + 1e-15)
    # lambda = max_j (pmax + o) / pmin = max(6/2, 7/3) = 3;
    # mu_j = (o + max(p + s)) / min(p + s): a (1 + 5) / 3 = 2, b 7 / 3
    assert factors == {4 * (2 * 3 + Fraction(7, 3))}


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_cascade_family_closed_form(k):
    heavy = 10**4
    inst = cascade_instance(k, heavy)
    m = 2**k
    res = solve(inst, "geobatch")
    assert res.objective == sum(m // 2**i * i for i in range(1, k + 1)) + (k + 1) + heavy * (k + 2)
    opt = m + 3 * heavy  # a schedule with this value exists, and it is the
    assert critical_path_bound(inst) == opt  # critical-path bound: it is OPT
    assert res.objective / opt > (k + 2) / 3 - 0.01  # grows like log2(M) / 3
    assert res.objective <= approx_factor(inst) * opt
    assert solve(inst, "hare").objective <= res.objective


@pytest.mark.parametrize("k", [1, 4])
def test_hare_is_never_worse_than_geobatch(k):
    inst = cascade_instance(k, 5)
    res = solve(inst, "hare")
    assert res.stats["geobatch_objective"] == solve(inst, "geobatch").objective
    assert res.objective <= res.stats["geobatch_objective"]


def test_cli_bound_prints_the_factor(tmp_path, capsys):
    inst = random_instance(
        4, n_jobs=5, n_gpus=4, sync=(1, 3), sync_map=True, switch_overhead=(0, 2), heterogeneity=2.0
    )
    path = tmp_path / "i.json"
    save_instance(inst, path)
    assert main(["bound", str(path), "--json", "--no-lp"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["approx_factor"] == pytest.approx(approx_factor(inst))
    assert {"lower_bound", "guarantee", "guarantee_closed_form", "geometric"} <= set(out)
    for key in ("lambda", "mu", "gamma", "theta"):
        assert key in out["approx_terms"]


GUARANTEE = Path(__file__).resolve().parents[1] / "instances" / "guarantee"
MANIFEST = json.loads((GUARANTEE / "manifest.json").read_text())


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_committed_instances_keep_their_numbers(name):
    """Worst cases found by the falsify hunts and the cascade family: geobatch's
    objective, the proved optimum and the factor are pinned; the ratio stays within
    the factor (the theorem) and the committed schedule is geobatch's."""
    entry = MANIFEST[name]
    inst = load_instance(GUARANTEE / entry["file"])
    res = solve(inst, "geobatch")
    if entry["opt_source"] == "critical_path":
        opt = critical_path_bound(inst)
    elif entry["opt_source"] == "lower_bound":  # OPT not proved: the theorem holds for it too
        opt = lower_bound(inst)
    else:
        ref = solve(inst, "cpsat", time_limit=60, threads=1)
        assert ref.status == "optimal"
        opt = ref.objective
    assert (res.objective, opt) == (entry["objective"], entry["opt"])
    assert approx_factor(inst) == pytest.approx(entry["approx_factor"], rel=1e-12)
    assert res.objective <= entry["approx_factor"] * opt
    sched = load_result(GUARANTEE / entry["file"].replace(".json", ".schedule.json")).schedule
    assert sched.sorted() == res.schedule.sorted()


def test_falsify_hunts_geobatch_within_its_space():
    from hare_opt.falsify import Space, _valid, claimed_guarantee, falsify, mutate
    from hare_opt.falsify import random_candidate as random_doc

    space = Space(
        max_tasks=6, max_gpus=3, model="full", eligibility="full", types=2, finite_alpha=False
    )
    rng = random.Random(3)
    data, seen = random_doc(rng, space), 0
    for _ in range(150):
        cand = mutate(rng, data, space)
        inst = _valid(cand, space)
        if inst is not None:
            data, seen = cand, seen + 1
            assert inst.eligible.all() and len(inst.gpu_types) <= 2
    assert seen > 30
    runs = [
        falsify(
            "geobatch",
            iterations=10,
            budget=300,
            seed=2,
            space=space,
            progress=False,
            score="ratio",
        )
        for _ in range(2)
    ]
    a, b = runs
    assert a.evaluated > 0 and (a.ratio, a.history) == (b.ratio, b.history)
    assert a.guarantee == approx_factor(a.instance) == claimed_guarantee(a.instance, "geobatch")
    assert 1 <= a.ratio <= a.guarantee
    hare = claimed_guarantee(a.instance, "hare")
    assert hare <= a.guarantee
