"""Read and write ``hare-opt/instance@1`` and ``hare-opt/schedule@1`` files.

Parsing is strict: unknown keys, wrong types and missing fields are errors
that name the field and the job or GPU. Writing is canonical and atomic
(``hare_opt.io.output``), so an interrupted save never leaves half a file.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hare_opt.io.output import atomic_write_text
from hare_opt.model import GPU, STATUSES, Instance, InstanceError, Job, Result, Schedule
from hare_opt.model.errors import ScheduleError

INSTANCE_FORMAT = "hare-opt/instance@1"
SCHEDULE_FORMAT = "hare-opt/schedule@1"

_INSTANCE_KEYS = {"format": True, "name": True, "time_unit": False, "gpus": True, "jobs": True}
_GPU_KEYS = {"id": True, "type": True, "node": False}
_JOB_KEYS = {
    "id": True,
    "weight": False,
    "release": False,
    "rounds": True,
    "tasks_per_round": True,
    "task_time": True,
    "sync_time": False,
    "switch_overhead": False,
}
_SCHEDULE_KEYS = {
    "format": True,
    "instance": False,
    "solver": False,
    "status": False,
    "objective": False,
    "lower_bound": False,
    "runtime_s": False,
    "tasks": True,
}
_TASK_KEYS = ("job", "round", "task", "gpu", "start", "end")
_TASK_KEYSET = frozenset(_TASK_KEYS)


def _keys(obj: Any, spec: Mapping[str, bool], owner: str, err: type[Exception]) -> None:
    if not isinstance(obj, Mapping):
        raise _make(err, f"must be a JSON object, got {type(obj).__name__}", None, owner)
    unknown = sorted(set(obj) - set(spec))
    if unknown:
        raise _make(err, f"unknown key(s) {unknown}", unknown[0], owner)
    for key, required in spec.items():
        if required and key not in obj:
            raise _make(err, "is missing", key, owner)


def _make(err: type[Exception], message: str, field: str | None, owner: str | None) -> Exception:
    if err is InstanceError:
        return InstanceError(message, field=field, owner=owner)
    prefix = ": ".join(p for p in (owner, f"field '{field}'" if field else None) if p)
    return err(f"{prefix}: {message}" if prefix else message)


def endless(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as a file to its end (a device node such as /dev/zero
    or /dev/urandom never ends; a socket is not a file), or None. Pipes are fine."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # the read itself says what is wrong
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device node, not a file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a file"
    return None


def read_json(path: str | Path, err: type[Exception]) -> Any:
    """Parse a JSON file; every failure is one ``err`` naming the file (and the line)."""
    why = endless(path)
    if why:
        raise err(f"{path}: {why}")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise err(f"{path}: no such file") from None
    except IsADirectoryError:
        raise err(f"{path}: is a directory, not a file") from None
    except json.JSONDecodeError as exc:
        raise err(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        # UnicodeDecodeError is a ValueError; so is an integer literal past Python's
        # digit limit, and absurd nesting is a RecursionError.
        raise err(f"{path}: not valid JSON ({str(exc)[:200]})") from None
    except MemoryError:
        raise err(f"{path}: too large to read") from None
    except OSError as exc:  # unreadable: permissions, a symlink loop, an I/O error
        raise err(f"{path}: cannot be read ({exc.strerror or exc})") from None


_read_json = read_json


def _owner(kind: str, obj: Any, pos: int) -> str:
    if isinstance(obj, Mapping) and isinstance(obj.get("id"), str) and obj["id"]:
        return f"{kind} {obj['id']!r}"
    return f"{kind} #{pos}"


def instance_from_dict(data: Any) -> Instance:
    """Validate a parsed instance document and build the ``Instance``."""
    if not isinstance(data, Mapping):
        raise InstanceError("must be a JSON object", owner="instance")
    if data.get("format") != INSTANCE_FORMAT:
        raise InstanceError(
            f"unknown or missing format tag {data.get('format')!r}, expected {INSTANCE_FORMAT!r}",
            field="format",
            owner="instance",
        )
    _keys(data, _INSTANCE_KEYS, "instance", InstanceError)
    for key in ("gpus", "jobs"):
        if not isinstance(data[key], list):
            raise InstanceError("must be a list", field=key, owner="instance")
    gpus = []
    for pos, g in enumerate(data["gpus"]):
        owner = _owner("gpu", g, pos)
        _keys(g, _GPU_KEYS, owner, InstanceError)
        gpus.append(GPU(g["id"], g["type"], g.get("node")))
    jobs = []
    for pos, j in enumerate(data["jobs"]):
        owner = _owner("job", j, pos)
        _keys(j, _JOB_KEYS, owner, InstanceError)
        jobs.append(
            Job(
                id=j["id"],
                task_time=j["task_time"],
                rounds=j["rounds"],
                tasks_per_round=j["tasks_per_round"],
                weight=j.get("weight", 1),
                release=j.get("release", 0),
                sync_time=j.get("sync_time", 0),
                switch_overhead=j.get("switch_overhead", 0),
            )
        )
    return Instance(tuple(gpus), tuple(jobs), data["name"], data.get("time_unit", "s"))


def instance_to_dict(instance: Instance) -> dict[str, Any]:
    gpus = []
    for g in instance.gpus:
        d: dict[str, Any] = {"id": g.id, "type": g.type}
        if g.node is not None:
            d["node"] = g.node
        gpus.append(d)
    jobs = []
    for j in instance.jobs:
        sync = dict(j.sync_time) if isinstance(j.sync_time, Mapping) else j.sync_time
        jobs.append(
            {
                "id": j.id,
                "weight": j.weight,
                "release": j.release,
                "rounds": j.rounds,
                "tasks_per_round": j.tasks_per_round,
                "task_time": dict(j.task_time),
                "sync_time": sync,
                "switch_overhead": j.switch_overhead,
            }
        )
    return {
        "format": INSTANCE_FORMAT,
        "name": instance.name,
        "time_unit": instance.time_unit,
        "gpus": gpus,
        "jobs": jobs,
    }


def load_instance(path: str | Path) -> Instance:
    """Load an instance file; raises ``InstanceError`` naming the file, field and owner."""
    data = _read_json(path, InstanceError)
    try:
        return instance_from_dict(data)
    except InstanceError as exc:
        err = InstanceError(f"{path}: {exc}")
        err.field, err.owner = exc.field, exc.owner
        raise err from None


def _dump_lines(header: dict[str, Any], list_key: str, rows: list[str]) -> str:
    """Pretty JSON with one list item (already encoded) per line: readable, small for 10^6 rows."""
    head = json.dumps(header, indent=2)[:-2]  # drop the closing "\n}"
    body = ",\n".join("    " + r for r in rows)
    sep = ",\n" if header else "\n"
    return (
        f'{head}{sep}  "{list_key}": [\n{body}\n  ]\n}}\n'
        if rows
        else f'{head}{sep}  "{list_key}": []\n}}\n'
    )


def dumps_instance(instance: Instance) -> str:
    d = instance_to_dict(instance)
    jobs = d.pop("jobs")
    gpus = d.pop("gpus")
    head = json.dumps(d, indent=2)[:-2]
    g = ",\n".join("    " + json.dumps(x) for x in gpus)
    j = ",\n".join("    " + json.dumps(x) for x in jobs)
    return f'{head},\n  "gpus": [\n{g}\n  ],\n  "jobs": [\n{j}\n  ]\n}}\n'


def save_instance(instance: Instance, path: str | Path) -> None:
    atomic_write_text(path, dumps_instance(instance))


# --- schedules ----------------------------------------------------------------


def _number(x: Any, field: str) -> float | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        # Python's reader takes NaN and Infinity, which JSON does not have
        raise ScheduleError(
            f"schedule: field '{field}': must be a finite number or null, got {x!r}"
        )
    return x


def result_from_dict(data: Any) -> Result:
    """Validate a parsed schedule document; feasibility is the checker's job, not this."""
    if not isinstance(data, Mapping):
        raise ScheduleError("schedule: must be a JSON object")
    if data.get("format") != SCHEDULE_FORMAT:
        raise ScheduleError(
            f"schedule: field 'format': unknown or missing format tag "
            f"{data.get('format')!r}, expected {SCHEDULE_FORMAT!r}"
        )
    _keys(data, _SCHEDULE_KEYS, "schedule", ScheduleError)
    status = data.get("status", "feasible")
    if status not in STATUSES:
        raise ScheduleError(
            f"schedule: field 'status': must be one of {list(STATUSES)}, got {status!r}"
        )
    tasks = data["tasks"]
    if not isinstance(tasks, list):
        raise ScheduleError("schedule: field 'tasks': must be a list")
    cols = _task_columns(tasks)
    if cols is None:
        cols = _task_columns_strict(tasks)
    schedule = Schedule(
        *(
            np.asarray(cols[k], dtype=object if k in ("job", "gpu") else np.int64)
            for k in _TASK_KEYS
        )
    )
    runtime = _number(data.get("runtime_s"), "runtime_s")
    for key in ("instance", "solver"):
        if not isinstance(data.get(key, ""), str):
            raise ScheduleError(f"schedule: field '{key}': must be a string")
    objective = _number(data.get("objective"), "objective")
    return Result(
        solver=data.get("solver", ""),
        status=status,
        schedule=schedule,
        objective=math.inf if objective is None else objective,
        lower_bound=_number(data.get("lower_bound"), "lower_bound"),
        runtime_s=runtime or 0.0,
        instance_name=data.get("instance", ""),
    )


def _task_columns(tasks: list) -> dict[str, Any] | None:
    """Columns of well-formed task rows in bulk, or None if any row is off.

    The fast path for 10^6-row files; on None the strict row-by-row pass
    finds the first bad row and names it.
    """
    if not all(type(t) is dict and t.keys() == _TASK_KEYSET for t in tasks):
        return None
    cols: dict[str, Any] = {}
    for k in _TASK_KEYS:
        col = [t[k] for t in tasks]
        if k in ("job", "gpu"):
            if not all(type(v) is str and v for v in col):
                return None
        else:
            if not all(type(v) is int and -(2**62) < v < 2**62 for v in col):
                return None
        cols[k] = col
    return cols


def _task_columns_strict(tasks: list) -> dict[str, list]:
    cols: dict[str, list] = {k: [] for k in _TASK_KEYS}
    for pos, t in enumerate(tasks):
        owner = f"task #{pos}"
        if isinstance(t, Mapping) and isinstance(t.get("job"), str):
            owner += f" (job {t['job']!r})"
        _keys(t, dict.fromkeys(_TASK_KEYS, True), owner, ScheduleError)
        for k in _TASK_KEYS:
            v = t[k]
            if k in ("job", "gpu"):
                ok = isinstance(v, str) and v != ""
            else:
                ok = isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**62
            if not ok:
                want = "a non-empty string" if k in ("job", "gpu") else "an integer"
                raise ScheduleError(f"{owner}: field '{k}': must be {want}, got {v!r}")
            cols[k].append(v)
    return cols


def _json_num(x: float | None) -> float | int | None:
    if x is None or not math.isfinite(float(x)):
        return None
    return int(x) if float(x).is_integer() else float(x)


def dumps_result(result: Result) -> str:
    s = result.schedule
    header: dict[str, Any] = {
        "format": SCHEDULE_FORMAT,
        "instance": result.instance_name,
        "solver": result.solver,
        "status": str(result.status),
        "objective": _json_num(result.objective),
        "lower_bound": _json_num(result.lower_bound),
        "runtime_s": round(float(result.runtime_s), 6),
    }
    # Each id is JSON-encoded once, not once per row: 10^6-row files write in seconds.
    # The text equals json.dumps(row, separators=(", ", ": ")) for every row.
    enc = {x: json.dumps(x) for x in {*s.job.tolist(), *s.gpu.tolist()}}
    rows = [
        f'{{"job": {enc[j]}, "round": {r}, "task": {k}, "gpu": {enc[g]}, "start": {a}, "end": {b}}}'
        for j, r, k, g, a, b in s.tasks()
    ]
    return _dump_lines(header, "tasks", rows)


def save_result(result: Result, path: str | Path) -> None:
    """Write the schedule file of a result (atomically)."""
    atomic_write_text(path, dumps_result(result))


def load_result(path: str | Path) -> Result:
    """Read a schedule file into a ``Result`` (raises ``ScheduleError`` naming file and field)."""
    data = _read_json(path, ScheduleError)
    try:
        return result_from_dict(data)
    except ScheduleError as exc:
        raise ScheduleError(f"{path}: {exc}") from None
