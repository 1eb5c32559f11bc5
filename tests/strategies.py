"""Hypothesis strategies for instances and a trivial serial scheduler for tests."""

from __future__ import annotations

import copy
import json
import random

import numpy as np
from hypothesis import strategies as st

from hare_opt.io import dumps_instance, dumps_result
from hare_opt.model import GPU, Instance, Job, Result, Schedule

TYPES = ("A", "B", "C")


@st.composite
def instances(
    draw,
    *,
    max_jobs: int = 4,
    max_gpus: int = 3,
    max_rounds: int = 3,
    max_k: int = 3,
    max_tasks: int | None = 10,
    max_time: int = 9,
    releases: bool = True,
    sync: bool = True,
    setup: bool = True,
    nodes: bool = False,
    finite_alpha: bool = False,
) -> Instance:
    """Small random instances covering every feature of the model.

    ``nodes`` also draws optional GPU nodes (off by default, so that the
    examples other tests see do not change). ``finite_alpha``: a job's sync map
    is all zero or all positive, so the paper's alpha is finite.
    """
    n_gpus = draw(st.integers(1, max_gpus))
    gpus = tuple(
        GPU(
            f"g{i}",
            draw(st.sampled_from(TYPES[:n_gpus])),
            draw(st.sampled_from((None, "n0", "n1"))) if nodes else None,
        )
        for i in range(n_gpus)
    )
    present = sorted({g.type for g in gpus})
    n_jobs = draw(st.integers(1, max_jobs))
    jobs = []
    budget = max_tasks
    for i in range(n_jobs):
        rounds = draw(st.integers(1, max_rounds))
        k = draw(st.integers(1, max_k))
        if budget is not None:
            if budget < 1:
                break
            rounds = min(rounds, budget)
            k = max(1, min(k, budget // rounds))
            budget -= rounds * k
        types = draw(st.lists(st.sampled_from(present), min_size=1, unique=True))
        task_time = {t: draw(st.integers(1, max_time)) for t in types}
        if sync and finite_alpha and draw(st.booleans()):
            low = draw(st.sampled_from((0, 1)))
            sync_time = {t: low and draw(st.integers(1, 3)) for t in types}
        elif sync and not finite_alpha and draw(st.booleans()):
            sync_time = {t: draw(st.integers(0, 3)) for t in types}
        else:
            sync_time = draw(st.integers(0, 3)) if sync else 0
        jobs.append(
            Job(
                f"j{i}",
                task_time,
                rounds,
                k,
                weight=draw(st.integers(1, 5)),
                release=draw(st.integers(0, 10)) if releases else 0,
                sync_time=sync_time,
                switch_overhead=draw(st.integers(0, 3)) if setup else 0,
            )
        )
    return Instance(gpus, tuple(jobs), "hyp")


def serial_schedule(inst: Instance) -> Schedule:
    """One task at a time on the whole cluster, each with a fresh setup: trivially feasible."""
    rows = []
    t = 0
    for j, job in enumerate(inst.jobs):
        g = next(i for i in range(inst.num_gpus) if inst.eligible[j, i])
        for r in range(job.rounds):
            for k in range(job.tasks_per_round):
                start = max(t, job.release) + job.switch_overhead
                end = start + int(inst.proc[j, g])
                rows.append((job.id, r, k, inst.gpus[g].id, start, end))
                t = end + int(inst.sync[j, g])
    return Schedule.from_tasks(rows)


def list_schedule(
    inst: Instance, rng: random.Random | None = None, *, greedy: float = 0.7, max_delay: int = 0
) -> Schedule:
    """A feasible multi-GPU schedule, written independently of hare_opt's engines.

    Jobs are interleaved in random order; each task goes to the GPU where it
    finishes first (with probability ``greedy``) or to a random eligible GPU,
    pays the setup when the GPU switches job, waits for its round's barrier,
    and may idle up to ``max_delay`` more. Tasks of one round may share a GPU.
    """
    rng = rng or random.Random(0)
    free = [0] * inst.num_gpus
    last = [-1] * inst.num_gpus
    barrier = inst.release.tolist()  # earliest start of the job's current round
    todo = {
        j: [(r, k) for r in range(job.rounds) for k in range(job.tasks_per_round)]
        for j, job in enumerate(inst.jobs)
    }
    round_end = [0] * inst.num_jobs
    rows = []
    while todo:
        j = rng.choice(sorted(todo))
        r, k = todo[j].pop(0)
        job = inst.jobs[j]
        starts = {}
        for g in np.flatnonzero(inst.eligible[j]).tolist():
            s = free[g] if last[g] == j else max(free[g], job.release) + job.switch_overhead
            starts[g] = max(s, barrier[j])
        if rng.random() < greedy:
            g = min(starts, key=lambda g: (starts[g] + int(inst.proc[j, g]), g))
        else:
            g = rng.choice(sorted(starts))
        start = starts[g] + rng.randint(0, max_delay)
        end = start + int(inst.proc[j, g])
        rows.append((job.id, r, k, inst.gpus[g].id, start, end))
        free[g], last[g] = end, j
        round_end[j] = max(round_end[j], end + int(inst.sync[j, g]))
        if k == job.tasks_per_round - 1:  # round complete: the next one waits for it
            barrier[j], round_end[j] = round_end[j], 0
        if not todo[j]:
            del todo[j]
    return Schedule.from_tasks(rows)


@st.composite
def feasible_schedules(draw, **instance_kw) -> tuple[Instance, Schedule]:
    """An instance and a feasible schedule of it (serial or a random list schedule)."""
    inst = draw(instances(**instance_kw))
    if draw(st.integers(0, 4)) == 0:
        return inst, serial_schedule(inst)
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    return inst, list_schedule(
        inst, rng, greedy=draw(st.sampled_from((0.0, 0.7, 1.0))), max_delay=draw(st.integers(0, 2))
    )


# --- malformed files: one defect each, with what the error must name ---------------

REQUIRED = {
    "instance": ["format", "name", "gpus", "jobs"],
    "gpu": ["id", "type"],
    "job": ["id", "rounds", "tasks_per_round", "task_time"],
}
JOB_INTS = {
    "weight": 1,
    "release": 0,
    "rounds": 1,
    "tasks_per_round": 1,
    "switch_overhead": 0,
    "sync_time": 0,
}  # field: smallest valid value
WRONG = st.one_of(
    st.text(max_size=3),
    st.none(),
    st.booleans(),
    st.just([]),
    st.just({}),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not x.is_integer()),
)


@st.composite
def broken_instance_docs(draw) -> tuple[dict, str, str | None]:
    """(document, field the error must name, owner it must name or None) for one defect."""
    inst = draw(instances())
    doc = json.loads(dumps_instance(inst))
    what = draw(
        st.sampled_from(
            [
                "drop",
                "wrong-type",
                "bad-int",
                "unknown-key",
                "dup-id",
                "no-gpu",
                "bad-time",
                "format",
                "bad-list",
                "bad-item",
            ]
        )
    )
    kind = draw(st.sampled_from(["gpu", "job"]))
    items = doc[kind + "s"]
    k = draw(st.integers(0, len(items) - 1))
    item = items[k]
    owner = f"{kind} {item['id']!r}"
    if what == "drop":
        level = draw(st.sampled_from(["instance", kind]))
        key = draw(st.sampled_from(REQUIRED[level]))
        target = doc if level == "instance" else item
        del target[key]
        if level == "instance":
            return doc, key, "instance" if key != "format" else None
        return doc, key, None if key == "id" else owner
    if what == "wrong-type":
        key = draw(
            st.sampled_from(["id", "type"] if kind == "gpu" else ["id", "task_time", *JOB_INTS])
        )
        # A string is a fine id or type, so those get only non-strings or "".
        bad = (
            WRONG.filter(lambda v: not isinstance(v, str) or v == "")
            if key in ("id", "type")
            else WRONG
        )
        item[key] = draw(bad)
        return doc, key, None if key == "id" else owner
    if what == "bad-int":
        key = draw(st.sampled_from(sorted(JOB_INTS)))
        job = doc["jobs"][k % len(doc["jobs"])]
        low = JOB_INTS[key]
        job[key] = draw(
            st.one_of(
                st.integers(max_value=low - 1), st.integers(min_value=10**12 + 1, max_value=10**30)
            )
        )
        return doc, key, f"job {job['id']!r}"
    if what == "bad-time":
        job = doc["jobs"][k % len(doc["jobs"])]
        t = draw(st.sampled_from(sorted(job["task_time"])))
        job["task_time"][t] = draw(
            st.one_of(st.integers(max_value=0), WRONG, st.integers(min_value=10**12 + 1))
        )
        return doc, f"task_time.{t}", f"job {job['id']!r}"
    if what == "unknown-key":
        where = draw(st.sampled_from(["instance", "item"]))
        key = draw(st.sampled_from(["extra", "Weight", "task_times", "nodes"]))
        (doc if where == "instance" else item)[key] = 1
        return doc, key, "instance" if where == "instance" else owner
    if what == "dup-id":
        items.append(copy.deepcopy(item))
        return doc, "id", owner
    if what == "no-gpu":
        job = doc["jobs"][k % len(doc["jobs"])]
        job["task_time"] = {"NoSuchType": 3}
        job["sync_time"] = 0
        return doc, "task_time", f"job {job['id']!r}"
    if what == "format":
        doc["format"] = draw(
            st.sampled_from(["hare-opt/instance@2", "", None, 1, "hare-opt/schedule@1"])
        )
        return doc, "format", "instance"
    if what == "bad-list":
        doc[kind + "s"] = draw(st.sampled_from([{}, "g0", None, 3]))
        return doc, kind + "s", "instance"
    items[k] = draw(st.sampled_from([[], "x", None, 1]))  # "bad-item"
    return doc, "", f"{kind} #{k}"


TASK_KEYS = ("job", "round", "task", "gpu", "start", "end")


@st.composite
def broken_schedule_docs(draw) -> tuple[dict, str]:
    inst = draw(instances(max_jobs=2))
    res = Result("t", "feasible", list_schedule(inst, random.Random(draw(st.integers(0, 99)))))
    doc = json.loads(dumps_result(res))
    i = draw(st.integers(0, len(doc["tasks"]) - 1))
    row = doc["tasks"][i]
    what = draw(
        st.sampled_from(["drop", "wrong", "extra", "status", "format", "header", "tasks", "row"])
    )
    if what == "drop":
        key = draw(st.sampled_from(TASK_KEYS))
        del row[key]
        return doc, key
    if what == "wrong":
        key = draw(st.sampled_from(TASK_KEYS))
        bad = st.one_of(WRONG, st.integers(min_value=2**62), st.integers(max_value=-(2**62)))
        if key in ("job", "gpu"):
            bad = st.one_of(st.just(""), st.integers(), st.none(), st.just(["g"]))
        row[key] = draw(bad)
        return doc, key
    if what == "extra":
        row["duration"] = 1
        return doc, "duration"
    if what == "status":
        doc["status"] = draw(st.sampled_from(["Optimal", "done", 1, None]))
        return doc, "status"
    if what == "format":
        doc["format"] = draw(st.sampled_from(["hare-opt/instance@1", None, 3]))
        return doc, "format"
    if what == "header":
        key = draw(st.sampled_from(["objective", "lower_bound", "runtime_s", "solver", "instance"]))
        doc[key] = draw(
            st.sampled_from(
                [[1], {"a": 1}, True] if key not in ("solver", "instance") else [1, None, ["x"]]
            )
        )
        return doc, key
    if what == "tasks":
        doc["tasks"] = draw(st.sampled_from([{}, "x", None, 5]))
        return doc, "tasks"
    doc["tasks"][i] = draw(st.sampled_from([[], "x", None, 1]))
    return doc, f"task #{i}"
