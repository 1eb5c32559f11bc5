"""Kernels run as Python (``util.jit.interpreted``) compute what they compute compiled.

A solve of an instance of at most ``solvers.base.INTERPRET_TASKS`` tasks in a process
that has not loaded numba runs the kernels as their Python functions (numba costs more
than the whole search there). The answer must not hinge on that: a fresh interpreter
solves every instance with numba never imported, and this process solves them compiled;
the schedules must be the same, task for task.
"""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import INSTANCES, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import instances

from hare_opt.io import instance_from_dict, instance_to_dict, load_instance
from hare_opt.solvers import solve
from hare_opt.solvers.base import INTERPRET_TASKS
from hare_opt.util import jit

#: The solvers that run kernels, with options that make them depend on nothing but the
#: input (bnb: a node limit keeps the Python run short on the rare hard instance).
SOLVERS = {
    "hare": {},
    "geobatch": {},
    "hare-paper": {},
    "bnb": {"work_limit": 20_000},
    "cpsat": {"work_limit": 0.0},
}  # cpsat: its start (hare's schedule), no search

INTERPRETED = """
import json, sys
from hare_opt.io import instance_from_dict
from hare_opt.solvers import solve
docs, solvers = json.load(sys.stdin)
out = []
for doc in docs:
    inst = instance_from_dict(doc)
    for name, options in solvers.items():
        res = solve(inst, name, **options)
        out.append([res.stats.get("kernels"), res.objective,
                    [list(t) for t in res.schedule.sorted().tasks()]])
print(json.dumps({"numba_loaded": "numba" in sys.modules, "runs": out}))
"""


def rows(result) -> list:
    """The schedule as JSON lists (job, round, task, gpu, start), in one order."""
    return json.loads(json.dumps([list(t) for t in result.schedule.sorted().tasks()]))


def compare(insts: list) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", INTERPRETED],
        cwd=ROOT,
        text=True,
        input=json.dumps([[instance_to_dict(i) for i in insts], SOLVERS]),
        capture_output=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["numba_loaded"] is False  # tiny solves never load numba
    jit.load()  # this process: compiled
    runs = iter(got["runs"])
    for inst in insts:
        for name, options in SOLVERS.items():
            kernels, objective, schedule = next(runs)
            assert kernels == "python", (inst.name, name)
            res = solve(inst, name, **options)
            assert res.stats.get("kernels") is None
            assert (objective, schedule) == (res.objective, rows(res)), (inst.name, name)


def test_the_tiny_library_and_fig1_solve_alike_interpreted_and_compiled():
    paths = [INSTANCES / "fig1.json", *sorted((INSTANCES / "tiny").glob("tiny-*.json"))]
    insts = [load_instance(p) for p in paths]
    assert all(i.num_tasks <= INTERPRET_TASKS for i in insts)
    compare(insts)


@settings(max_examples=3)
@given(
    st.lists(instances(max_jobs=4, max_gpus=3, max_tasks=INTERPRET_TASKS), min_size=8, max_size=8)
)
def test_generated_instances_solve_alike_interpreted_and_compiled(insts):
    compare(
        [
            instance_from_dict({**instance_to_dict(i), "name": f"hyp-{k}"})
            for k, i in enumerate(insts)
        ]
    )


def test_an_interpreted_block_runs_python_only_before_numba_loads():
    jit.load()
    with jit.interpreted() as python:
        assert python is False and not jit.interpreting()


def test_integer_overflow_wraps_silently_interpreted_as_compiled():
    """numba's int64 arithmetic wraps; the Python run of a kernel does too, without a
    warning (the bnb kernel's hash relies on it)."""
    code = """
import warnings
import numpy as np
from hare_opt.model.rules import earliest_start
from hare_opt.util import jit
pin = jit.PinnedJit(earliest_start, jit.source_pin(earliest_start), "test")

@pin
def double(x):
    return x * np.int64(2)

with warnings.catch_warnings():
    warnings.simplefilter("error", RuntimeWarning)
    with jit.interpreted():
        print(int(double(np.int64(2**63 - 1))))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # no cache for a function without a file: said once
    print(int(double(np.int64(2**63 - 1))))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert proc.stdout.split() == ["-2", "-2"]
