"""The one-off numba compile on a cold cache: announced on stderr once, counted by
``util.jit.compile_seconds``, and (for the solvers) done before the time limit's clock
starts, by the solver's kernel groups (``solvers.kernels.KERNELS``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hare_opt.util.jit import ANNOUNCEMENT

ROOT = Path(__file__).resolve().parents[1]

KERNEL = """
from hare_opt.model.rules import earliest_start
from hare_opt.util.jit import PinnedJit, source_pin

jit = PinnedJit(earliest_start, source_pin(earliest_start), __name__)

@jit
def add(a, b):
    return a + b
"""

RUN = """
import sys
sys.path.insert(0, sys.argv[1])
from hare_opt.util import jit
import tiny_kernel
assert tiny_kernel.add(1, 2) == 3
print(jit.compile_seconds() > 0)
"""


def test_a_compile_is_announced_once_and_counted_a_cache_load_is_neither(tmp_path):
    (tmp_path / "tiny_kernel.py").write_text(KERNEL)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", RUN, str(tmp_path)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        for _ in range(2)
    ]
    cold, warm = runs
    assert cold.returncode == 0 and warm.returncode == 0, cold.stderr + warm.stderr
    assert cold.stdout.strip() == "True" and cold.stderr.count(ANNOUNCEMENT) == 1
    assert warm.stdout.strip() == "False" and ANNOUNCEMENT not in warm.stderr


SOLVE = """
import json, sys
from hare_opt.io import load_instance
from hare_opt.solvers import solve
from hare_opt.util import jit
res = solve(load_instance(sys.argv[1]), sys.argv[2], time_limit=2.0)
print(json.dumps({"compile_s": res.stats.compile_s, "clock": jit.compile_seconds()}))
"""


@pytest.mark.slow  # a cold cache: the solver's kernels compile (tens of seconds)
@pytest.mark.parametrize("solver", ["hare", "hare-paper", "bnb", "geobatch"])
def test_on_a_cold_cache_every_compile_happens_before_the_clock(tmp_path, solver):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run(
        [sys.executable, "-c", SOLVE, str(ROOT / "instances" / "small" / "small-07.json"), solver],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-800:]
    got = json.loads(out.stdout.splitlines()[-1])
    assert ANNOUNCEMENT in out.stderr
    # all compiling was inside the warm-up that stats.compile_s measures (before the clock)
    assert got["compile_s"] is not None and got["clock"] <= got["compile_s"] + 1e-6, got


#: In a fresh process on a warm cache: what the solver's kernel groups load before its
#: clock, then which numba functions gain a compiled signature while it solves.
LOADED_IN_SOLVE = """
import gc, json, sys
from hare_opt.io import load_instance
from hare_opt.solvers import SOLVERS, solve
from hare_opt.solvers.base import kernel_groups
from hare_opt.solvers.kernels import LOADER

def loaded():
    from numba.core.dispatcher import Dispatcher
    return {f"{d.py_func.__module__}.{d.py_func.__qualname__}": len(d.overloads)
            for d in gc.get_objects() if isinstance(d, Dispatcher)}

inst, name = load_instance(sys.argv[1]), sys.argv[2]
spec = SOLVERS.spec(name)  # what solve() loads before its clock starts
LOADER.warm_kernels(kernel_groups(spec, spec.parse_options(json.loads(sys.argv[3])), None))
before = loaded()
solve(inst, name, time_limit=2.0, **json.loads(sys.argv[3]))
print(json.dumps(sorted(k for k, n in loaded().items() if n > before.get(k, 0))))
"""


@pytest.mark.parametrize(
    "solver, options",
    [("hare", {}), ("geobatch", {}), ("hare-paper", {}), ("bnb", {}), ("lns", {"work_limit": 2})],
)
def test_every_kernel_a_solver_runs_is_loaded_before_its_clock(solver, options):
    """The cheap, warm-cache form of the cold-cache test above (which is @slow): a numba
    function that first gets a compiled signature inside the solve would, on a cold cache,
    compile inside the time limit (hare once compiled geobatch's kernel inside its 1 s)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            LOADED_IN_SOLVE,
            str(ROOT / "instances" / "small" / "small-07.json"),
            solver,
            json.dumps(options),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-800:]
    assert json.loads(out.stdout.splitlines()[-1]) == [], solver


def test_an_interrupt_inside_numbas_compiler_is_named_as_such():
    from hare_opt.cli.main import COMPILE_NOTE, _compiling

    def raised_in(filename: str) -> KeyboardInterrupt:
        try:
            exec(compile("raise KeyboardInterrupt", filename, "exec"))
        except KeyboardInterrupt as exc:
            return exc
        raise AssertionError("not raised")

    inside = raised_in(os.path.join(os.sep, "env", "numba", "core", "compiler.py"))
    assert _compiling(inside) == COMPILE_NOTE
    assert _compiling(raised_in(os.path.join(os.sep, "env", "hare_opt", "x.py"))) == ""

    def warm_kernels() -> None:  # a cache load or warm-up search: no numba frame shows
        raise KeyboardInterrupt

    try:
        warm_kernels()
    except KeyboardInterrupt as exc:
        assert _compiling(exc) == COMPILE_NOTE


def test_ctrl_c_during_a_first_run_compile_exits_130_saying_nothing_was_lost(tmp_path):
    """A cold cache (a new NUMBA_CACHE_DIR): Ctrl-C while bnb's kernels compile, before
    any schedule exists, ends at once with 130 and says why no schedule was written."""
    import signal
    import threading
    import time

    out = tmp_path / "s.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hare_opt.cli.main",
            "solve",
            str(Path(__file__).parents[1] / "instances" / "small" / "small-07.json"),
            "--solver",
            "bnb",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")},
    )
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(raw.decode(errors="replace") for raw in proc.stderr),
        daemon=True,
    )
    reader.start()
    deadline = time.time() + 120
    while not any(ANNOUNCEMENT in ln for ln in lines):
        assert proc.poll() is None and time.time() < deadline, "".join(lines)[-500:]
        time.sleep(0.05)
    time.sleep(0.2)  # inside the first compile (seconds; the whole load takes tens)
    sent = time.perf_counter()
    os.killpg(proc.pid, signal.SIGINT)
    code = proc.wait(60)
    waited = time.perf_counter() - sent
    reader.join(5)
    text = "".join(lines)
    assert code == 130, text[-800:]
    assert "before any result existed" in text and "Traceback" not in text
    assert not out.exists()
    assert waited < 10, f"{waited:.1f} s to stop"  # generous: a loaded CI machine


def test_an_error_numba_raised_after_the_interrupt_still_gets_the_compile_note():
    """An interrupt that numba's compiler turned into an error of its own is reported by
    ``_run`` as a fresh KeyboardInterrupt (``raise ... from None``): the note must come
    from the frames of the error it replaced."""
    from hare_opt.cli.main import COMPILE_NOTE, _compiling

    fake = compile(
        "def build():\n    raise RuntimeError('cut short')\n",
        os.path.join(os.sep, "site", "numba", "core", "fake.py"),
        "exec",
    )
    scope: dict = {}
    exec(fake, scope)
    try:
        try:
            scope["build"]()
        except Exception:
            raise KeyboardInterrupt from None
    except KeyboardInterrupt as exc:
        assert _compiling(exc) == COMPILE_NOTE
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as exc:  # nothing compiling: no note
        assert _compiling(exc) == ""


@pytest.mark.slow  # a cold cache: every kernel group compiles (tens of CPU seconds)
def test_the_first_command_that_compiles_compiles_every_group_once(tmp_path):
    """A first ``solve`` on a cold cache compiles every group (``solvers.kernels.KERNELS``,
    the simulator's engines included), so a ``simulate`` after it compiles nothing; a
    first ``simulate`` compiles the rest at its end, so a ``solve`` after it neither."""
    small = str(ROOT / "instances" / "small" / "small-00.json")
    solve = ["solve", small, "--solver", "bnb", "--json"]
    sim = ["simulate", "--workload", "paper", "--jobs", "4", "--policies", "hare,allox"]
    sim += ["--no-progress", "--json"]
    for first, then in ((solve, sim), (sim, solve)):
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / first[0])}
        runs = [
            subprocess.run(
                [sys.executable, "-m", "hare_opt.cli.main", *args],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=1200,
            )
            for args in (first, then)
        ]
        assert all(r.returncode == 0 for r in runs), runs[0].stderr[-800:] + runs[1].stderr
        assert ANNOUNCEMENT in runs[0].stderr and ANNOUNCEMENT not in runs[1].stderr, first[0]
