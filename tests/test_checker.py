"""The independent checker: feasible schedules pass, every kind of defect is caught.

Besides hand-made cases, a naive row-by-row reading of the spec (``naive``
below) is compared with the vectorised checker on randomly damaged schedules.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import feasible_schedules, instances, list_schedule, serial_schedule

from hare_opt.checker import KINDS, check
from hare_opt.io import load_instance, load_result
from hare_opt.model import GPU, Instance, Job, Schedule

INSTANCES = Path(__file__).resolve().parents[1] / "instances"

# --- a naive reference, straight from the spec's wording ------------------------------


def naive(inst: Instance, sched: Schedule) -> tuple[bool, int | None]:
    """(feasible, objective or None) by plain loops over rows."""
    jobs = {j.id: j for j in inst.jobs}
    gpus = {g.id: g for g in inst.gpus}
    rows = list(sched.tasks())
    seen: set[tuple] = set()
    ok = True
    for t in rows:
        job, gpu = jobs.get(t.job), gpus.get(t.gpu)
        if (
            job is None
            or gpu is None
            or not (0 <= t.round < job.rounds)
            or not (0 <= t.task < job.tasks_per_round)
        ):
            ok = False
            continue
        if (t.job, t.round, t.task) in seen:
            ok = False
        seen.add((t.job, t.round, t.task))
        if gpu.type not in job.task_time or t.end - t.start != job.task_time[gpu.type]:
            ok = False
        if t.start < job.release:
            ok = False
    if len(seen) != inst.num_tasks:
        ok = False
    done: dict[tuple, int] = defaultdict(lambda: -(2**63))
    for t in rows:
        if t.job in jobs and t.gpu in gpus:
            key = (t.job, t.round)
            done[key] = max(done[key], t.end + jobs[t.job].sync_on(gpus[t.gpu].type))
    for t in rows:
        if t.job in jobs and t.round > 0 and t.start < done[(t.job, t.round - 1)]:
            ok = False
    on_gpu = defaultdict(list)
    for t in rows:
        on_gpu[t.gpu].append(t)
    for ts in on_gpu.values():
        ts.sort(key=lambda t: (t.start, t.end))
        prev = None
        for t in ts:
            if prev is not None and t.start < prev.end:
                ok = False
            if t.job in jobs and (prev is None or prev.job != t.job):
                job = jobs[t.job]
                if t.start < max(prev.end if prev else 0, job.release) + job.switch_overhead:
                    ok = False
            prev = t if prev is None or t.end >= prev.end else prev
    comp = [done.get((j.id, j.rounds - 1)) for j in inst.jobs]
    obj = None if None in comp else sum(j.weight * c for j, c in zip(inst.jobs, comp))
    return ok, obj


def kinds(inst: Instance, sched: Schedule) -> set[str]:
    rep = check(inst, sched)
    assert rep.feasible == (not rep.counts)
    assert set(rep.counts) <= set(KINDS)
    return set(rep.counts)


def replace(sched: Schedule, i: int, **cols) -> Schedule:
    rows = list(sched.tasks())
    rows[i] = rows[i]._replace(**cols)
    return Schedule.from_tasks(rows)


# --- feasible schedules pass ------------------------------------------------------------


@given(feasible_schedules())
def test_feasible_schedules_pass_and_score_like_the_naive_reading(case):
    inst, sched = case
    rep = check(inst, sched)
    assert rep.feasible, rep.violations
    assert naive(inst, sched) == (True, rep.objective)
    # Row order is irrelevant to the verdict and the score.
    perm = np.random.default_rng(0).permutation(len(sched))
    shuffled = Schedule(
        *(getattr(sched, f)[perm] for f in ("job", "round", "task", "gpu", "start", "end"))
    )
    assert check(inst, shuffled).objective == rep.objective


def test_list_scheduler_uses_several_gpus_setups_and_barriers():
    # Guards the test scheduler itself: it must exercise what the checker checks.
    inst = Instance(
        (GPU("a", "A"), GPU("b", "A"), GPU("c", "B")),
        (
            Job("x", {"A": 3, "B": 2}, rounds=3, tasks_per_round=3, sync_time=1, switch_overhead=2),
            Job("y", {"A": 1}, rounds=2, tasks_per_round=2, release=4, switch_overhead=1),
        ),
    )
    sched = list_schedule(inst, random.Random(1))
    assert check(inst, sched).feasible
    assert len(set(sched.gpu.tolist())) == 3
    assert len(set(zip(sched.gpu.tolist(), sched.job.tolist()))) > 3  # GPUs switch jobs


# --- every defect is caught with the right kind ------------------------------------------

MUTATIONS = (
    "barrier",
    "release",
    "setup",
    "overlap",
    "eligibility",
    "duration",
    "missing",
    "duplicate",
    "unknown-job",
    "unknown-gpu",
    "unknown-round",
    "unknown-task",
)


def _mutate(inst: Instance, sched: Schedule, what: str, data) -> tuple[Schedule, str]:
    """Apply one defect of kind ``what`` to a feasible schedule (assume() it is possible)."""
    rows = list(sched.tasks())
    jobs = {j.id: j for j in inst.jobs}
    types = {g.id: g.type for g in inst.gpus}
    pick = data.draw
    if what == "barrier":
        cand = [i for i, t in enumerate(rows) if t.round > 0]
        assume(cand)
        i = pick(st.sampled_from(cand))
        t = rows[i]
        sync = jobs[t.job].sync_on
        barrier = max(
            u.end + sync(types[u.gpu]) for u in rows if u.job == t.job and u.round == t.round - 1
        )
        shift = t.start - (barrier - 1)
        return replace(sched, i, start=t.start - shift, end=t.end - shift), "barrier"
    if what == "release":
        i = pick(st.integers(0, len(rows) - 1))
        t = rows[i]
        shift = t.start - (jobs[t.job].release - 1)
        return replace(sched, i, start=t.start - shift, end=t.end - shift), "release"
    if what == "setup":
        by_gpu = defaultdict(list)
        for i, t in enumerate(rows):
            by_gpu[t.gpu].append(i)
        cand = []  # (row, end of the previous task on its GPU) where a setup is due
        for idx in by_gpu.values():
            idx.sort(key=lambda i: rows[i].start)
            for a, b in zip([None] + idx, idx):
                if jobs[rows[b].job].switch_overhead and (a is None or rows[a].job != rows[b].job):
                    cand.append((b, rows[a].end if a is not None else 0))
        assume(cand)
        i, prev_end = pick(st.sampled_from(cand))
        t = rows[i]
        job = jobs[t.job]
        shift = t.start - (max(prev_end, job.release) + job.switch_overhead - 1)
        return replace(sched, i, start=t.start - shift, end=t.end - shift), "setup"
    if what == "overlap":
        i = pick(st.integers(0, len(rows) - 1))
        k = pick(st.integers(0, len(rows) - 1))
        t, u = rows[i], rows[k]
        assume(i != k and types[u.gpu] in jobs[t.job].task_time)
        return replace(
            sched, i, gpu=u.gpu, start=u.start, end=u.start + jobs[t.job].task_time[types[u.gpu]]
        ), "overlap"
    if what == "eligibility":
        i = pick(st.integers(0, len(rows) - 1))
        t = rows[i]
        bad = [g.id for g in inst.gpus if g.type not in jobs[t.job].task_time]
        assume(bad)
        return replace(sched, i, gpu=pick(st.sampled_from(bad))), "eligibility"
    if what == "duration":
        i = pick(st.integers(0, len(rows) - 1))
        delta = pick(st.integers(-3, 3).filter(bool))
        return replace(sched, i, end=rows[i].end + delta), "duration"
    if what == "missing":
        i = pick(st.integers(0, len(rows) - 1))
        return Schedule.from_tasks(rows[:i] + rows[i + 1 :]), "missing"
    if what == "duplicate":
        i = pick(st.integers(0, len(rows) - 1))
        return Schedule.from_tasks(rows + [rows[i]]), "duplicate"
    i = pick(st.integers(0, len(rows) - 1))
    t = rows[i]
    job = jobs[t.job]
    field = what.split("-")[1]
    value = {
        "job": "no-such-job",
        "gpu": "no-such-gpu",
        "round": pick(st.sampled_from((-1, job.rounds, job.rounds + 7))),
        "task": pick(st.sampled_from((-1, job.tasks_per_round))),
    }[field]
    return replace(sched, i, **{field: value}), "unknown"


@pytest.mark.parametrize("what", MUTATIONS)
@given(case=feasible_schedules(), data=st.data())
def test_every_single_defect_is_reported_with_its_kind(what, case, data):
    inst, sched = case
    bad, kind = _mutate(inst, sched, what, data)
    found = kinds(inst, bad)
    assert kind in found, (what, found)
    assert naive(inst, bad)[0] is False


@given(case=feasible_schedules(), data=st.data())
def test_checker_agrees_with_naive_reading_on_random_damage(case, data):
    inst, sched = case
    rows = list(sched.tasks())
    gpu_ids = [g.id for g in inst.gpus]
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(rows) - 1))
        t = rows[i]
        move = data.draw(st.integers(-3, 3))
        op = data.draw(st.sampled_from(["move", "move", "stretch", "copy", "drop"]))
        if op == "move":
            rows[i] = t._replace(
                start=t.start + move,
                end=t.end + move,
                gpu=data.draw(st.sampled_from([t.gpu] + gpu_ids)),
            )
        elif op == "stretch":
            rows[i] = t._replace(end=t.end + move)
        elif op == "copy":
            rows.append(t._replace(gpu=data.draw(st.sampled_from(gpu_ids))))
        elif len(rows) > 1:
            rows.pop(i)
    bad = Schedule.from_tasks(rows)
    rep = check(inst, bad)
    ok, obj = naive(inst, bad)
    assert rep.feasible == ok, rep.violations
    if ok:
        assert rep.objective == obj


@given(case=feasible_schedules(), shift=st.sampled_from((2**53, 2**60)), data=st.data())
def test_huge_times_are_exact(case, shift, data):
    # Regression: barriers and completions were floats, so past 2^53 a barrier broken
    # by one unit went unnoticed and objectives were rounded.
    inst, sched = case
    inst = inst.with_jobs(
        [
            Job(
                j.id,
                j.task_time,
                j.rounds,
                j.tasks_per_round,
                j.weight,
                0,
                j.sync_time,
                j.switch_overhead,
            )
            for j in inst.jobs
        ]
    )
    far = Schedule(
        sched.job, sched.round, sched.task, sched.gpu, sched.start + shift, sched.end + shift
    )
    rep = check(inst, far)
    assert rep.feasible
    assert rep.objective == naive(inst, far)[1]
    assert rep.makespan == max(naive_completion(inst, far))
    if any(j.rounds > 1 for j in inst.jobs):
        bad, _ = _mutate(inst, far, "barrier", data)
        assert "barrier" in kinds(inst, bad)


def naive_completion(inst: Instance, sched: Schedule) -> list[int]:
    types = {g.id: g.type for g in inst.gpus}
    return [
        max(
            t.end + j.sync_on(types[t.gpu])
            for t in sched.tasks()
            if t.job == j.id and t.round == j.rounds - 1
        )
        for j in inst.jobs
    ]


# --- metrics -----------------------------------------------------------------------------


def _hand_case() -> tuple[Instance, Schedule]:
    """Every task at its earliest start; the numbers are worked out in the comments."""
    inst = Instance(
        (GPU("g0", "A"), GPU("g1", "B")),
        (
            Job(
                "j0",
                {"A": 3, "B": 5},
                rounds=2,
                tasks_per_round=2,
                weight=2,
                release=1,
                sync_time={"A": 1, "B": 2},
                switch_overhead=1,
            ),
            Job("j1", {"B": 2}, weight=3, switch_overhead=2),
        ),
    )
    sched = Schedule.from_tasks(
        [
            ("j1", 0, 0, "g1", 2, 4),  # setup [0, 2); C(j1) = 4
            ("j0", 0, 0, "g0", 2, 5),  # setup [1, 2) after the release; synced at 6
            ("j0", 0, 1, "g1", 5, 10),  # setup [4, 5) after j1; synced at 12 = barrier
            ("j0", 1, 0, "g0", 12, 15),  # same job as before on g0: no setup; synced 16
            ("j0", 1, 1, "g0", 15, 18),  # synced at 19 = C(j0)
        ]
    )
    return inst, sched


def test_metrics_match_a_hand_computation():
    inst, sched = _hand_case()
    rep = check(inst, sched)
    assert rep.feasible, rep.violations
    assert rep.completion.tolist() == [19, 4]
    assert rep.objective == 2 * 19 + 3 * 4 == 50
    assert rep.weighted_flow_time == 2 * (19 - 1) + 3 * (4 - 0) == 48
    assert rep.avg_jct == ((19 - 1) + (4 - 0)) / 2 == 11
    assert rep.makespan == 19


@pytest.mark.parametrize(
    "row, kind", [(0, "setup"), (1, "setup"), (2, "setup"), (3, "barrier"), (4, "overlap")]
)
def test_hand_case_is_tight(row, kind):
    inst, sched = _hand_case()
    t = list(sched.tasks())[row]
    assert kinds(inst, replace(sched, row, start=t.start - 1, end=t.end - 1)) == {kind}


def test_incomplete_schedule_has_no_metrics_and_lists_what_is_missing():
    inst, sched = _hand_case()
    rep = check(inst, Schedule.from_tasks(list(sched.tasks())[:3]))
    assert rep.counts == {"missing": 2}
    assert rep.objective is None and rep.makespan is None
    assert "missing: job 'j0' round 1 task 0 is not scheduled" in rep.violations


def test_message_cap_keeps_counts_exact():
    inst = Instance((GPU("g", "A"),), (Job("j", {"A": 1}, rounds=1000, tasks_per_round=1000),))
    rep = check(inst, Schedule.empty(), max_messages=3)
    assert rep.counts == {"missing": 10**6}
    assert rep.violations[-1] == "missing: ... and 999997 more"
    small = inst.with_jobs([Job("j", {"A": 1}, rounds=50, tasks_per_round=40)])
    assert len(check(small, Schedule.empty(), max_messages=None).violations) == 2000


def test_huge_instance_with_tiny_schedule_does_not_allocate_per_task():
    # 10^14 tasks: the checker must stay sparse over the rows it is given.
    inst = Instance((GPU("g", "A"),), (Job("j", {"A": 1}, rounds=10**7, tasks_per_round=10**7),))
    rep = check(inst, Schedule.from_tasks([("j", 0, 0, "g", 0, 1)]))
    assert rep.counts == {"missing": 10**14 - 1}
    assert rep.violations[0] == "missing: job 'j' round 0 task 1 is not scheduled"


# --- the paper's Fig. 1 -------------------------------------------------------------------


@pytest.mark.parametrize("name, objective", [("a", 21), ("b", 18), ("c", 17)])
def test_fig1_schedules(name, objective):
    inst = load_instance(INSTANCES / "fig1.json")
    res = load_result(INSTANCES / "fig1" / f"{name}.schedule.json")
    rep = check(inst, res.schedule)
    assert rep.feasible, rep.violations
    assert rep.objective == objective == res.objective
    assert naive(inst, res.schedule) == (True, objective)


@given(instances(max_jobs=2, max_rounds=2, max_k=2))
def test_serial_schedule_is_feasible_and_naive_agrees(inst):
    sched = serial_schedule(inst)
    assert naive(inst, sched) == (True, check(inst, sched).objective)


# --- index hints ---------------------------------------------------------------------------


def test_an_index_hint_is_used_only_when_it_names_the_same_ids():
    # A schedule built from indices carries them; the checker uses them instead of
    # looking every id up, but only after checking they name the schedule's ids.
    inst = Instance(
        (GPU("a", "A"), GPU("b", "A")),
        tuple(Job(f"j{i}", {"A": 2}, rounds=3, tasks_per_round=2, sync_time=1) for i in range(4)),
    )
    rows = [(i, r, k, k, 9 * i + 3 * r) for i in range(4) for r in range(3) for k in range(2)]
    j, r, k, g, s = (np.array(c) for c in zip(*rows))
    sched = Schedule.from_indices(inst, j, r, k, g, s)
    rep = check(inst, sched)
    assert rep.feasible and rep.objective == sum(9 * i + 9 for i in range(4))
    wrong = Schedule.from_indices(inst, j, r, k, g, s)
    object.__setattr__(
        wrong, "_hints", {"job": np.zeros(len(j), np.int64), "gpu": np.zeros(len(j), np.int64)}
    )
    assert check(inst, wrong).objective == rep.objective  # ids looked up, hint ignored
    # And a right hint is used: no id is looked up.
    import sys

    module = sys.modules["hare_opt.checker.check"]
    original = module._lookup
    module._lookup = None  # type: ignore[assignment]
    try:
        assert check(inst, sched).objective == rep.objective
    finally:
        module._lookup = original


# --- the header of a schedule file, against its tasks ----------------------------------

HEADER_LIES = [
    ({"status": "unknown"}, "says there is no schedule"),
    ({"status": "infeasible"}, "every valid instance has a schedule"),
    ({"objective": 16}, "but the tasks score 17"),
    ({"lower_bound": 18}, "exceeds 17"),
    ({"lower_bound": 16, "status": "optimal"}, "is its own bound"),
    ({"instance": "other"}, "'instance' is 'other'"),
    ({"runtime_s": -1}, "negative"),
]


@pytest.mark.parametrize("change, says", HEADER_LIES)
def test_check_refuses_a_header_that_contradicts_its_tasks(tmp_path, change, says):
    import io
    import json
    from contextlib import redirect_stdout

    from hare_opt.cli.main import main

    doc = json.loads((INSTANCES / "fig1" / "c.schedule.json").read_text())
    doc.update({"status": "feasible", "objective": 17, "lower_bound": 15}, **change)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["check", str(INSTANCES / "fig1.json"), str(path), "--json"])
    report = json.loads(out.getvalue())
    assert code == 1 and report["feasible"] is True  # the tasks are fine; the header is not
    assert any(says in line for line in report["header"]), report["header"]


@given(instances(max_gpus=3, max_jobs=3), st.sampled_from(["wspt", "hare", "bnb"]))
def test_every_file_a_solver_writes_has_a_true_header(inst, solver):
    import json

    from hare_opt.checker import check_header
    from hare_opt.io import dumps_result, result_from_dict
    from hare_opt.solvers import solve

    back = result_from_dict(json.loads(dumps_result(solve(inst, solver, time_limit=5))))
    assert check_header(inst, back, check(inst, back.schedule)) == []


def test_committed_schedule_files_have_true_headers():
    from hare_opt.checker import check_header

    for path in sorted(INSTANCES.rglob("*.schedule.json")):
        inst_path = path.with_name(path.name.replace(".schedule.json", ".json"))
        if not inst_path.exists():  # instances/fig1/a.schedule.json is for instances/fig1.json
            inst_path = path.parent.with_suffix(".json")
        inst, res = load_instance(inst_path), load_result(path)
        report = check(inst, res.schedule)
        assert report.feasible and check_header(inst, res, report) == [], path


@pytest.mark.parametrize("field", ["objective", "lower_bound", "runtime_s"])
def test_a_header_number_that_json_has_not_is_refused(tmp_path, field):
    import json
    import math

    from hare_opt.model import ScheduleError

    doc = json.loads((INSTANCES / "fig1" / "c.schedule.json").read_text())
    doc[field] = math.nan  # Python writes NaN; JSON has no such number
    (tmp_path / "s.json").write_text(json.dumps(doc))
    with pytest.raises(ScheduleError, match=f"'{field}': must be a finite number"):
        load_result(tmp_path / "s.json")
