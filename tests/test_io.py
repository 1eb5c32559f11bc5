"""Instance and schedule files: canonical round-trips; malformed files give clean errors."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    broken_instance_docs,
    broken_schedule_docs,
    feasible_schedules,
    instances,
)

from hare_opt.io import (
    dumps_instance,
    dumps_result,
    instance_to_dict,
    load_instance,
    load_result,
    save_instance,
    save_result,
)
from hare_opt.model import GPU, Instance, InstanceError, Job, Result, Schedule, ScheduleError


def _write(text: str | bytes, name: str = "f.json") -> Path:
    path = Path(tempfile.mkdtemp(prefix="hare-io-")) / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --- round-trips --------------------------------------------------------------------


@given(instances(nodes=True))
def test_instance_round_trip_is_exact_and_canonical(inst):
    path = _write("")
    save_instance(inst, path)
    text = path.read_text()
    back = load_instance(path)
    assert back == inst
    assert back.proc.tolist() == inst.proc.tolist()
    assert dumps_instance(back) == text
    save_instance(back, path)
    assert path.read_text() == text
    assert not list(path.parent.glob(".*.tmp"))  # the atomic write cleaned up


def test_instance_round_trip_keeps_the_form_of_sync_time_and_nodes():
    inst = Instance(
        (GPU("g0", "A", "n0"), GPU("g1", "B")),
        (
            Job("j0", {"A": 2, "B": 3}, sync_time={"B": 1, "A": 0}),
            Job("j1", {"A": 1}, sync_time=np.int64(4), weight=np.int32(2)),
        ),
    )
    d = json.loads(dumps_instance(inst))
    assert d["gpus"] == [{"id": "g0", "type": "A", "node": "n0"}, {"id": "g1", "type": "B"}]
    assert d["jobs"][0]["sync_time"] == {"B": 1, "A": 0}
    assert d["jobs"][1]["sync_time"] == 4 and d["jobs"][1]["weight"] == 2
    assert instance_to_dict(load_instance(_write(dumps_instance(inst)))) == d


def test_optional_fields_take_their_defaults():
    doc = {
        "format": "hare-opt/instance@1",
        "name": "x",
        "gpus": [{"id": "g", "type": "A"}],
        "jobs": [{"id": "j", "rounds": 1, "tasks_per_round": 1, "task_time": {"A": 2}}],
    }
    inst = load_instance(_write(json.dumps(doc)))
    j = inst.jobs[0]
    assert (j.weight, j.release, j.sync_time, j.switch_overhead, inst.time_unit) == (
        1,
        0,
        0,
        0,
        "s",
    )


@given(
    feasible_schedules(), st.sampled_from(["optimal", "feasible"]), st.sampled_from([None, 17, 2.5])
)
def test_schedule_round_trip_is_exact_and_canonical(case, status, bound):
    inst, sched = case
    res = Result(
        "test",
        status,
        sched,
        objective=123,
        lower_bound=bound,
        runtime_s=0.25,
        instance_name=inst.name,
    )
    path = _write("")
    save_result(res, path)
    text = path.read_text()
    back = load_result(path)
    assert back.schedule == sched
    assert (
        back.solver,
        back.status,
        back.objective,
        back.lower_bound,
        back.runtime_s,
        back.instance_name,
    ) == ("test", status, 123, bound, 0.25, inst.name)
    assert dumps_result(back) == text


def test_empty_unknown_schedule_round_trips():
    res = Result("x", "unknown", Schedule.empty(), objective=float("inf"))
    back = load_result(_write(dumps_result(res)))
    assert len(back.schedule) == 0 and back.status == "unknown" and back.objective == float("inf")


# --- malformed instance files --------------------------------------------------------


@given(broken_instance_docs())
def test_every_broken_instance_file_is_rejected_naming_field_and_owner(case):
    doc, field, owner = case
    path = _write(json.dumps(doc))
    with pytest.raises(InstanceError) as info:
        load_instance(path)
    msg = str(info.value)
    assert str(path) in msg
    assert field in msg, msg
    if owner:
        assert owner in msg, msg


@given(
    st.one_of(
        st.integers(),
        st.text(),
        st.none(),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    )
)
def test_non_instance_json_is_rejected(value):
    with pytest.raises(InstanceError):
        load_instance(_write(json.dumps(value)))


@given(instances(), st.data())
def test_truncated_or_garbled_text_is_rejected(inst, data):
    text = dumps_instance(inst)
    cut = data.draw(st.integers(0, text.rindex("}") - 1))
    with pytest.raises(InstanceError, match="not valid JSON"):
        load_instance(_write(text[:cut]))
    with pytest.raises(ScheduleError, match="not valid JSON"):
        load_result(_write(text[:cut]))


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xfe{not utf-8",
        b"",
        b"NaN",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"format": "hare-opt/instance@1", "name": "x", "gpus": [], "jobs": ['
        + b"9" * 5000
        + b"]}",
    ],
)
def test_pathological_files_give_clean_errors(raw):
    path = _write(raw)
    with pytest.raises(InstanceError):
        load_instance(path)
    with pytest.raises(ScheduleError):
        load_result(path)


def test_missing_file_and_directory():
    missing = Path(tempfile.mkdtemp()) / "nope.json"
    with pytest.raises(InstanceError, match="no such file"):
        load_instance(missing)
    with pytest.raises(ScheduleError):
        load_result(missing.parent)


# --- malformed schedule files --------------------------------------------------------


@given(broken_schedule_docs())
def test_every_broken_schedule_file_is_rejected_naming_the_field(case):
    doc, field = case
    with pytest.raises(ScheduleError) as info:
        load_result(_write(json.dumps(doc)))
    assert field in str(info.value), str(info.value)
