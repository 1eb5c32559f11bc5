"""``hare-opt explain``: the chain that sets each completion adds up to it, the critical
path is the left-shifted completion, and the idle measures agree with a brute force
over time written from the spec alone."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from cli_run import refused, run
from hypothesis import given
from hypothesis import strategies as st
from strategies import feasible_schedules, list_schedule

from hare_opt.analysis import Placed, explain, left_shift
from hare_opt.analysis.idle import idle_while_waiting, reserved_idle
from hare_opt.checker import check
from hare_opt.heuristics.rounds import run_interleaved
from hare_opt.io import load_result, save_instance, save_result
from hare_opt.model import GPU, Instance, Job, Result, Schedule
from hare_opt.sim import simulate


def toy(second_release: int = 0) -> Instance:
    """docs/reproduction.md's toy: two 1-GPU jobs that sync every batch, one V100."""
    jobs = tuple(
        Job(n, {"V100": 270}, rounds=5, weight=w, sync_time=205, switch_overhead=4, release=r)
        for n, w, r in (("a", 2, 0), ("b", 1, second_release))
    )
    return Instance(gpus=(GPU("g0", "V100"),), jobs=jobs, name="toy", time_unit="ms")


def serial_toy() -> tuple[Instance, Schedule]:
    """The round engine's interleaved dispatcher in its ``-hold`` form (the engine before
    it conserved work, ``hare:work_conserving=false``) on the toy released together: it
    runs a's five rounds first and the V100 idles through each of a's syncs while b
    waits. The work-conserving form gives the V100 to b during those syncs (8287, as
    ``hlas``): tests/test_work_conserving.py."""
    inst = toy()
    return inst, run_interleaved(inst, np.array([0, 1]), conserve=False).schedule()


def test_the_toy_shows_the_idle_v100_while_b_waits():
    inst, sched = serial_toy()
    e = explain(inst, sched)
    assert e.objective == 9311
    assert e.idle_while_waiting == {"V100": 4 * 205}  # a's four syncs before its last round
    assert e.reserved_idle == {"V100": 4 * 205}  # the V100 kept for a's next round
    a, b = e.story("a"), e.story("b")
    assert a.reserved_idle == 820 and b.reserved_idle == 0  # a's rounds held it
    assert b.idle_while_waiting == {"V100": 820} and a.idle_while_waiting == {"V100": 0}
    # b's completion waits behind all of a: its chain goes through a's tasks by GPU order
    assert b.parts["other_processing"] == 5 * 270 and b.parts["other_sync"] == 4 * 205
    assert any(x.kind == "task" and x.job == "a" for x in b.chain)
    assert [x.via for x in b.chain if x.kind == "task" and x.job == "b"][0] == "gpu"


def test_hlas_leaves_no_gap_on_the_toy():
    inst = toy()
    run_ = simulate(inst, "hlas")
    e = explain(inst, run_.result.schedule, "hlas")
    assert e.objective == 8287
    assert e.idle_while_waiting == {"V100": 0} and e.reserved_idle == {"V100": 0}


def _assert_consistent(inst: Instance, sched: Schedule) -> None:
    e = explain(inst, sched)
    comp = check(inst, sched).completion
    for j, story in enumerate(e.jobs):
        assert story.completion == comp[j]
        assert sum(story.parts.values()) == story.completion  # the parts add up exactly
        links = story.chain
        assert links[0].kind == "release" and links[-1].end == story.completion
        for x, y in zip(links, links[1:]):
            assert y.start == x.end, (x, y)  # consecutive links meet
        assert story.critical_path <= story.completion
        assert all(v >= 0 for v in story.parts.values())
        for k, v in story.idle_while_waiting.items():
            assert 0 <= v <= e.idle_while_waiting[k]
    shifted = left_shift(inst, sched)
    rep = check(inst, shifted)
    assert rep.feasible and rep.objective == e.left_shifted_objective <= e.objective
    again = explain(inst, shifted)
    assert left_shift(inst, shifted) == shifted  # left-shifted already
    for story in again.jobs:  # nothing started late: the chain is the critical path
        assert story.critical_path == story.completion and story.parts["idle"] == 0


@given(case=feasible_schedules())
def test_the_chain_adds_up_and_the_left_shift_is_feasible(case):
    _assert_consistent(*case)


def brute_force(inst: Instance, sched: Schedule) -> tuple[dict[str, int], int]:
    """Idle-while-waiting per type and total reserved idle, one time unit at a time,
    from the spec's rules only (written apart from hare_opt.analysis)."""
    rows = list(sched.tasks())
    gpu_type = {g.id: g.type for g in inst.gpus}
    job = {j.id: j for j in inst.jobs}
    synced: dict[tuple[str, int], int] = {}
    for r in rows:
        s = job[r.job].sync_on(gpu_type[r.gpu])
        synced[r.job, r.round] = max(synced.get((r.job, r.round), 0), r.end + s)
    by_gpu: dict[str, list] = {}
    for r in sorted(rows, key=lambda r: r.start):
        by_gpu.setdefault(r.gpu, []).append(r)
    busy, waits, held = [], [], []  # (gpu, from, to); (job, from, to); (gpu, from, to, job)
    for g, rs in by_gpu.items():
        for i, r in enumerate(rs):
            switch = i == 0 or rs[i - 1].job != r.job
            setup = job[r.job].switch_overhead if switch else 0
            ready = job[r.job].release if r.round == 0 else synced[r.job, r.round - 1]
            busy.append((g, r.start - setup, r.end))
            waits.append((r.job, ready, r.start - setup))
            if i:
                held.append((g, rs[i - 1].end, min(ready, r.start - setup)))
    horizon = max(r.end for r in rows)
    per_type = {t: 0 for t in inst.gpu_types}
    reserved = 0
    for t in range(horizon):
        for k in inst.gpu_types:
            idle = sum(
                1
                for g in inst.gpus
                if g.type == k and not any(b == g.id and lo <= t < hi for b, lo, hi in busy)
            )
            waiting = sum(1 for j, lo, hi in waits if lo <= t < hi and k in job[j].task_time)
            per_type[k] += min(idle, waiting)
        for g, lo, hi in held:
            if lo <= t < hi and any(
                w0 <= t < w1 and gpu_type[g] in job[j].task_time for j, w0, w1 in waits
            ):
                reserved += 1
    return per_type, reserved


@given(case=feasible_schedules(max_jobs=3, max_gpus=3, max_time=5), seed=st.integers(0, 9))
def test_idle_measures_match_a_brute_force_over_time(case, seed):
    inst, sched = case
    delayed = list_schedule(inst, random.Random(seed), max_delay=3)  # with slack too
    for s in (sched, delayed):
        p = Placed.of(inst, s)
        per_type, _ = idle_while_waiting(p)
        want, held = brute_force(inst, s)
        assert dict(zip(inst.gpu_types, per_type.tolist())) == want
        assert int(reserved_idle(p).sum()) == held


def test_an_infeasible_schedule_is_refused_in_one_line(tmp_path):
    inst, sched = serial_toy()
    bad = Schedule(sched.job, sched.round, sched.task, sched.gpu, sched.start - 1, sched.end - 1)
    f_inst, f_sched = tmp_path / "i.json", tmp_path / "s.json"
    save_instance(inst, f_inst)
    save_result(Result("x", "feasible", bad), f_sched)
    line = refused(["explain", str(f_inst), str(f_sched)])
    assert "not feasible" in line and "hare-opt check" in line


@pytest.fixture
def files(tmp_path):
    inst, sched = serial_toy()
    f_inst, f_sched = tmp_path / "toy.json", tmp_path / "toy.schedule.json"
    save_instance(inst, f_inst)
    save_result(Result("interleaved", "feasible", sched), f_sched)
    return f_inst, f_sched


def test_cli_text_json_and_figure(files, tmp_path):
    f_inst, f_sched = files
    code, out, err = run(["explain", str(f_inst), str(f_sched)])
    assert code == 0, err
    assert "V100: idle while waiting 820 ms" in out and "chain of b" in out
    code, out, _ = run(["explain", str(f_inst), str(f_sched), "--json"])
    doc = json.loads(out)
    assert doc["idle_while_waiting"] == {"V100": 820} and doc["objective"] == 9311
    assert [j["completion"] for j in doc["jobs"]] == [2379, 4553]
    png = tmp_path / "e.png"
    code, out, err = run(["explain", str(f_inst), str(f_sched), "--job", "b", "--out", str(png)])
    assert code == 0, err
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "extra,says",
    [
        (["--job", "nosuch"], "--job"),
        (["--out", "{tmp}/e.txt"], "suffix"),
        (["--out", "{inst}"], "also an input"),
        (["--links", "-1"], "--links"),
    ],
)
def test_cli_refusals(files, tmp_path, extra, says):
    f_inst, f_sched = files
    argv = [x.format(tmp=tmp_path, inst=f_inst) for x in extra]
    line = refused(["explain", str(f_inst), str(f_sched), *argv])
    assert says in line


def test_simulate_out_dir_saves_the_executed_schedules(tmp_path):
    inst = toy()
    f = tmp_path / "toy.json"
    save_instance(inst, f)
    code, _, err = run(
        [
            "simulate",
            "--instance",
            str(f),
            "--policies",
            "hare,hlas",
            "--no-progress",
            "--out-dir",
            str(tmp_path / "runs"),
        ]
    )
    assert code == 0, err
    for policy in ("hare", "hlas"):
        res = load_result(tmp_path / "runs" / f"{policy}.schedule.json")
        rep = check(inst, res.schedule)
        assert rep.feasible and rep.objective == res.objective
        code, out, _ = run(
            [
                "explain",
                str(tmp_path / "runs" / f"{policy}.instance.json"),
                str(tmp_path / "runs" / f"{policy}.schedule.json"),
                "--json",
            ]
        )
        assert code == 0 and json.loads(out)["objective"] == res.objective
