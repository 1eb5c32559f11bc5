"""Signals during start-up: from the first moments of ``hare_opt`` on, an interrupt gives exit
130 and a line saying so, never a traceback or a death by the signal.

Before that, the interpreter is starting (and importing ``site``), where no Python code
can handle a signal: its default action is the interpreter's. ``hare_opt.cli`` installs
the guard as its first act, after the package root (which imports only ``typing``).
Which side of that moment a signal landed on is read from the process's own import trace
(``PYTHONPROFILEIMPORTTIME``), so the verdict does not depend on the machine's speed;
the delays only sample start-up densely.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_faults import HARD, session

from hare_opt.cli.main import COMPILE_NOTE
from hare_opt.util import startup

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="orphan detection reads /proc (Linux)"
)
#: The one line a signal leaves; one that lands while a solve loads its compiled kernels
#: (an exact solver loads its start heuristic's too) says that nothing was lost.
ONE_LINE = re.compile(
    r"hare-opt( [a-z-]+)?: (interrupted|stopped) by (SIGINT|SIGTERM)"
    f"({re.escape(COMPILE_NOTE)})?"
)
IMPORTED = re.compile(r"^import time:.*\|\s*(\S+)$", re.M)


def guarded(trace: str) -> bool:
    """Whether the import trace shows ``hare_opt.cli`` imported with success: a failed
    import is listed too, then only the modules that were importing it, so a success is
    another module listed after it."""
    names = IMPORTED.findall(trace)
    if "hare_opt.cli" not in names:
        return False
    after = names[names.index("hare_opt.cli") + 1 :]
    return any(n not in ("hare_opt", "hare_opt.cli.main") for n in after)


#: Seconds after the process starts: densely over the first imports, then sparser.
DELAYS = (*(i * 0.015 for i in range(14)), 0.25, 0.35, 0.5, 0.75, 1.0)


def signalled_at(argv: list[str], sig: int, delay: float) -> tuple[int, str]:
    """Exit status and stderr (import trace removed; empty if the signal came before
    ``hare_opt`` ran) of ``argv`` sent ``sig`` ``delay`` seconds after it started."""
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
    )
    time.sleep(delay)
    os.kill(proc.pid, sig)
    try:
        _, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:  # a lost signal: fail without leaving it running
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"{sig!r} at {delay} s did not end {argv[-3:]} in 90 s") from None
    assert session(proc.pid) == [], "a process outlived the command"
    if not guarded(err):
        return proc.returncode, ""
    return proc.returncode, "".join(
        ln for ln in err.splitlines(keepends=True) if not ln.startswith("import time:")
    )


@pytest.mark.parametrize(
    "how, command", [("module", "solve"), ("module", "reproduce"), ("script", "solve")]
)
def test_a_signal_at_any_moment_of_start_up_exits_130(tmp_path, how, command):
    script = Path(sys.executable).with_name("hare-opt")
    if how == "script" and not script.is_file():
        pytest.skip("the hare-opt script is not installed next to this interpreter")
    head = [str(script)] if how == "script" else [sys.executable, "-m", "hare_opt.cli.main"]
    args = (
        ["solve", str(HARD), "--solver", "cpsat"]
        if command == "solve"
        else [
            "reproduce",
            "--quick",
            "--only",
            "fig1",
            "--out-dir",
            str(tmp_path / "r"),
            "--no-progress",
        ]
    )
    judged = 0
    for i, delay in enumerate(DELAYS):
        sig = (signal.SIGINT, signal.SIGTERM)[i % 2]
        code, err = signalled_at([*head, *args], sig, delay)
        if not err:
            continue  # the interpreter's own start
        judged += 1
        lines = err.splitlines()
        assert code == 130, (delay, sig.name, code, err[-1500:])
        # the interrupt's line last (reproduce may say first what it saved)
        assert ONE_LINE.fullmatch(lines[-1]), (delay, sig.name, err[-1500:])
        assert not re.search(r"Traceback|Exception|Error", err), (delay, sig.name, err[-1500:])
    assert judged >= 5, "too few signals landed after start-up to judge"


def test_importing_the_cli_as_a_library_installs_no_handler():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import signal, hare_opt.cli.main; "
            "print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == "True", out.stderr


@pytest.mark.parametrize(
    "argv, orig, expected",
    [
        (
            ["/venv/bin/hare-opt", "solve"],
            ["/venv/bin/python", "/venv/bin/hare-opt", "solve"],
            True,
        ),
        (["-m"], ["python", "-m", "hare_opt.cli.main", "solve"], True),
        (["-m"], ["python", "-X", "importtime", "-u", "-m", "hare_opt.cli.main"], True),
        (["-m"], ["python", "-mhare_opt.cli.main"], True),
        (["-m"], ["python", "-m", "hare_opt.cli.other"], False),
        (["-c"], ["python", "-c", "pass", "-m", "hare_opt.cli.main"], False),
        (["tool.py"], ["python", "tool.py", "-m", "hare_opt.cli.main"], False),
        (["-c"], ["python", "-W", "ignore", "-c", "import hare_opt.cli"], False),
    ],
)
def test_the_guard_is_for_the_command_line_only(monkeypatch, argv, orig, expected):
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "orig_argv", orig)
    assert startup.is_command_line() is expected


#: A KeyboardInterrupt raised by the handler inside a weakref callback (the import system
#: runs some) was printed as "Exception ignored" and lost: the command went on.
SWALLOWED = """
import os, signal, sys, time, weakref
from hare_opt.util import interrupt
class A: pass
def callback(_):
    os.kill(os.getpid(), signal.SIGTERM)
    t = time.monotonic()
    while time.monotonic() - t < 0.5:
        pass
try:
    with interrupt.handling("soft"):
        a = A(); r = weakref.ref(a, callback); del a
        t = time.monotonic()
        while time.monotonic() - t < 5:
            pass
        print("went on")
except KeyboardInterrupt:
    print("interrupted", interrupt.requested())
"""


def test_an_interrupt_swallowed_by_a_callback_is_raised_again():
    out = subprocess.run(
        [sys.executable, "-c", SWALLOWED], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == f"interrupted {int(signal.SIGTERM)}", out.stdout + out.stderr
    assert out.stderr == ""


#: A process forked under the discipline, in a process that had the start-up guard: the
#: child gets the handlers the guard replaced (a pool's SIGTERM ends a worker silently).
FORKED = """
import os, signal, sys
from hare_opt.util import interrupt, startup
startup.guard()
with interrupt.handling("soft"):
    pid = os.fork()
    if pid == 0:
        os._exit(0 if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL else 1)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_a_forked_child_does_not_inherit_the_guard():
    out = subprocess.run(
        [sys.executable, "-c", FORKED], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "0", out.stdout + out.stderr


TEAR_DOWN = """
import sys
from pathlib import Path

import hare_opt.cli.main as cli

mark = Path(sys.argv[1])


class TornDown:
    def __del__(self):  # runs in the interpreter's tear-down, and only there
        mark.write_text("torn down")


keep = TornDown()


def run(argv):
    if sys.argv[2] == "interrupt":
        raise KeyboardInterrupt
    return 0


cli._run = run
sys.exit(cli.main())
"""


@pytest.mark.parametrize("how, code, torn", [("interrupt", 130, False), ("done", 0, True)])
def test_an_interrupted_command_skips_the_interpreter_s_tear_down(tmp_path, how, code, torn):
    """The tear-down can crash after an interrupt (exit -6, a fatal error after the
    interrupt's line, seen once 0.35 s into ``reproduce`` while its imports ran) and has
    nothing left to finish then: the process ends without it; a command that ends
    normally keeps it."""
    mark = tmp_path / "mark"
    out = subprocess.run(
        [sys.executable, "-c", TEAR_DOWN, str(mark), how],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == code, out.stderr[-800:]
    assert mark.exists() == torn
    if how == "interrupt":
        assert out.stderr.splitlines()[-1] == "hare-opt: interrupted by SIGINT"
