"""The problem model: validation names field and owner; derived views match the definitions."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import round_time
from strategies import instances

from hare_opt.model import GPU, MAX_TIME, Instance, InstanceError, Job, Model
from hare_opt.model.instance import MAX_COUNT, min_makespan_identical

GPUS = (GPU("g0", "A"), GPU("g1", "B"))


def job(**kw) -> Job:
    base = {"id": "j1", "task_time": {"A": 4, "B": 6}, "rounds": 2, "tasks_per_round": 2}
    return Job(**(base | kw))


def raises(fn, field: str, owner: str) -> InstanceError:
    """``fn`` raises InstanceError whose message names ``field`` and ``owner``."""
    with pytest.raises(InstanceError) as info:
        fn()
    err = info.value
    assert err.field is not None and err.field.startswith(field), (err.field, str(err))
    assert owner in str(err) and f"field '{err.field}'" in str(err), str(err)
    return err


# --- validation -----------------------------------------------------------------------

INT_FIELDS = {  # field: (smallest valid value, largest valid value)
    "weight": (1, MAX_COUNT),
    "release": (0, MAX_TIME),
    "rounds": (1, MAX_COUNT),
    "tasks_per_round": (1, MAX_COUNT),
    "switch_overhead": (0, MAX_TIME),
    "sync_time": (0, MAX_TIME),
}


def bad_ints(lo: int, hi: int) -> st.SearchStrategy:
    """Values an integer field in [lo, hi] must reject."""
    return st.one_of(
        st.integers(max_value=lo - 1),
        st.integers(min_value=hi + 1),
        st.booleans(),
        st.floats(allow_nan=True),
        st.none(),
        st.text(max_size=3),
        st.just([1]),
        st.just(np.float64(2.0)),
    )


@pytest.mark.parametrize("name", sorted(INT_FIELDS))
@given(data=st.data())
def test_bad_job_integers_are_rejected_naming_field_and_job(name, data):
    value = data.draw(bad_ints(*INT_FIELDS[name]), label=name)
    raises(lambda: job(**{name: value}), name, "job 'j1'")


@pytest.mark.parametrize("name", sorted(INT_FIELDS))
def test_job_integer_limits_are_inclusive(name):
    lo, hi = INT_FIELDS[name]
    for value in (lo, hi, np.int32(lo)):
        assert getattr(job(**{name: value}), name) == value


@given(value=bad_ints(1, MAX_TIME), key=st.sampled_from(["A", "B"]))
def test_bad_task_time_is_rejected_naming_the_type(value, key):
    raises(lambda: job(task_time={"A": 4, "B": 6} | {key: value}), f"task_time.{key}", "job 'j1'")


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"task_time": {}}, "task_time"),
        ({"task_time": [("A", 4)]}, "task_time"),
        ({"task_time": {"": 4}}, "task_time"),
        ({"task_time": {3: 4}}, "task_time"),
        ({"sync_time": {"A": 1}}, "sync_time"),  # no entry for type B
        ({"sync_time": {"A": 1, "B": -1}}, "sync_time.B"),
        ({"sync_time": {"A": 1, "B": 0.5}}, "sync_time.B"),
        ({"sync_time": "1"}, "sync_time"),
    ],
)
def test_bad_maps_are_rejected(kw, field):
    raises(lambda: job(**kw), field, "job 'j1'")


@pytest.mark.parametrize(
    "make, field, owner",
    [
        (lambda: job(id=""), "id", "job"),
        (lambda: job(id=7), "id", "job"),
        (lambda: GPU("", "A"), "id", "gpu"),
        (lambda: GPU(None, "A"), "id", "gpu"),
        (lambda: GPU("g", ""), "type", "gpu 'g'"),
        (lambda: GPU("g", 3), "type", "gpu 'g'"),
        (lambda: GPU("g", "A", ""), "node", "gpu 'g'"),
        (lambda: Instance((), (job(),)), "gpus", "instance"),
        (lambda: Instance(GPUS, ()), "jobs", "instance"),
        (lambda: Instance(GPUS, (job(),), name=""), "name", "instance"),
        (lambda: Instance(GPUS, (job(),), time_unit=None), "time_unit", "instance"),
        (lambda: Instance(GPUS + (GPU("g0", "C"),), (job(),)), "id", "gpu 'g0'"),
        (lambda: Instance(GPUS, (job(), job(task_time={"A": 1}))), "id", "job 'j1'"),
        (lambda: Instance(GPUS, (job(), "j2")), "jobs", "instance"),
        (lambda: Instance(GPUS, (job(task_time={"K80": 3}),)), "task_time", "job 'j1'"),
    ],
)
def test_structural_rules(make, field, owner):
    raises(make, field, owner)


def test_job_no_gpu_can_run_names_the_types():
    err = raises(
        lambda: Instance(GPUS, (job(task_time={"K80": 3, "T4": 1}),)), "task_time", "job 'j1'"
    )
    assert "K80" in str(err) and "'A'" in str(err)


def test_defaults_and_accepted_forms():
    j = Job("x", {"A": 2})
    assert (j.rounds, j.tasks_per_round, j.weight, j.release, j.sync_time, j.switch_overhead) == (
        1,
        1,
        1,
        0,
        0,
        0,
    )
    assert type(job(weight=np.int64(3)).weight) is int  # numpy ints become plain ints
    # A sync map may name more types than the job runs on; the extras are ignored.
    assert job(sync_time={"A": 1, "B": 2, "Z": 9}).sync_on("B") == 2
    # Fields are frozen: an instance once valid stays valid.
    with pytest.raises(AttributeError):
        j.rounds = 0  # type: ignore[misc]


@given(instances(), st.data())
def test_any_single_bad_field_of_a_valid_instance_is_caught(inst, data):
    k = data.draw(st.integers(0, inst.num_jobs - 1))
    name = data.draw(st.sampled_from(sorted(INT_FIELDS)))
    value = data.draw(bad_ints(*INT_FIELDS[name]))
    jobs = list(inst.jobs)
    bad = jobs[k]
    raises(
        lambda: inst.with_jobs(jobs[:k] + [replace(bad, **{name: value})] + jobs[k + 1 :]),
        name,
        f"job {bad.id!r}",
    )


# --- derived views --------------------------------------------------------------------


@given(instances(max_gpus=3))
def test_job_by_gpu_views(inst):
    n, m = inst.num_jobs, inst.num_gpus
    for arr in (inst.proc, inst.sync, inst.eligible):
        assert arr.shape == (n, m)
    assert inst.proc_by_type.shape == (n, len(inst.gpu_types))
    assert inst.type_count.sum() == m
    for i, j in enumerate(inst.jobs):
        for g, gpu in enumerate(inst.gpus):
            runs = gpu.type in j.task_time
            assert inst.eligible[i, g] == runs
            assert inst.proc[i, g] == (j.task_time[gpu.type] if runs else 0)
            assert inst.sync[i, g] == (j.sync_on(gpu.type) if runs else 0)
            assert inst.gpu_types[inst.gpu_type_index[g]] == gpu.type
        assert inst.min_task_time[i] == min(
            t for ty, t in j.task_time.items() if ty in inst.gpu_types
        )
        assert inst.min_work[i] == j.num_tasks * inst.min_task_time[i]
        assert inst.job_index(j.id) == i
    assert inst.num_tasks == sum(j.num_tasks for j in inst.jobs)
    assert [inst.gpu_index(g.id) for g in inst.gpus] == list(range(m))
    assert inst.weight.tolist() == [j.weight for j in inst.jobs]
    assert inst.overhead.tolist() == [j.switch_overhead for j in inst.jobs]


@given(instances())
def test_alpha_is_the_papers_ratio(inst):
    for i, j in enumerate(inst.jobs):
        types = [t for t in j.task_time if t in inst.gpu_types]
        p = [j.task_time[t] for t in types]
        s = [j.sync_on(t) for t in types]
        want = max(p) / min(p)
        if max(s) > 0:
            want = max(want, math.inf if min(s) == 0 else max(s) / min(s))
        assert inst.alpha[i] == want


@given(instances(max_gpus=3, max_k=6, max_tasks=None))
def test_min_round_time_is_exact(inst):
    for i in range(inst.num_jobs):
        ok = inst.eligible[i]
        p, s = inst.proc[i, ok].tolist(), inst.sync[i, ok].tolist()
        k, o = int(inst.tasks_per_round[i]), int(inst.overhead[i])
        assert inst.min_round_time(i, setup=False) == round_time(p, s, k, 0)
        assert inst.min_round_time(i, setup=True) == round_time(p, s, k, o)
        assert inst.round_time_first[i] == inst.min_round_time(i, setup=True)
        assert inst.round_time_next[i] == inst.min_round_time(i, setup=False)


def test_min_round_time_brute_force_over_literal_assignments():
    # The count-vector shortcut above, checked once against every assignment of tasks.
    proc, sync = [3, 5, 2], [1, 0, 4]
    for count in range(1, 6):
        want = min(
            max(2 + sum(1 for a in assign if a == g) * proc[g] + sync[g] for g in set(assign))
            for assign in itertools.product(range(3), repeat=count)
        )
        assert round_time(proc, sync, count, 2) == want


@given(p=st.lists(st.integers(1, 9), min_size=1, max_size=2), data=st.data())
def test_min_makespan_identical_large_counts(p, data):
    # Beyond 4 M + 64 tasks the heap gives way to a binary search; both must agree
    # with the brute force.
    s = data.draw(st.lists(st.integers(0, 5), min_size=len(p), max_size=len(p)))
    count = data.draw(st.integers(4 * len(p) + 65, 120))
    setup = data.draw(st.integers(0, 3))
    got = min_makespan_identical(np.array(p), np.array(s), np.ones(len(p), bool), count, setup)
    assert got == round_time(p, s, count, setup)


def test_builder_numbers_gpus_per_type_and_validates():
    m = Model()
    m.add_gpus("V100", 2)
    m.add_gpu("K80", node="n1")
    m.add_job({"V100": 4, "K80": 9}, rounds=3, tasks_per_round=2, weight=2)
    inst = m.build("demo", time_unit="ms")
    assert [g.id for g in inst.gpus] == ["V100-0", "V100-1", "K80-0"]
    assert inst.gpus[2].node == "n1" and inst.time_unit == "ms"
    assert inst.type_count.tolist() == [2, 1]
    m.add_job({"T4": 1})
    raises(lambda: m.build(), "task_time", "job 'j1'")


def test_a_job_too_long_for_int64_sums_is_rejected_naming_it():
    # 10^7 tasks of 10^12 units: each value is accepted alone, the round is not.
    raises(lambda: Job("j1", {"A": 10**12}, tasks_per_round=10**7), "task_time", "job 'j1'")
