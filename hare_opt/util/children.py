"""Child processes that never outlive their parent.

Why: a search may start processes (a portfolio's members, CBC, a sweep's workers), and a
stopped or killed command must leave none behind. ``spawn_options`` puts a child in its
own process group (a terminal's Ctrl-C then reaches only the parent, which decides),
``track``/``kill_group`` end whole groups (grandchildren included), and ``lifeline`` in
the child ends it when its parent dies, even by ``kill -9`` (Linux: ``PR_SET_PDEATHSIG``;
elsewhere: polling). ``util.interrupt`` kills the tracked groups on a hard exit.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

#: Exit status of a process stopped from outside (as a shell reports SIGINT).
EXIT_INTERRUPTED = 130

_lock = threading.Lock()
#: Process groups of the children this process started and has not ended.
_groups: set[int] = set()


def spawn_options() -> dict:
    """``subprocess.Popen`` keywords for a child in its own process group."""
    return {"process_group": 0} if os.name == "posix" else {}


def track(pgid: int) -> None:
    """Remember a child's process group so that a hard exit can kill it."""
    with _lock:
        _groups.add(pgid)


def untrack(pgid: int) -> None:
    with _lock:
        _groups.discard(pgid)


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Signal a child's whole process group (its own children too); gone is fine."""
    with contextlib.suppress(OSError):
        os.killpg(pgid, sig)


def kill_all_groups() -> None:
    with _lock:
        groups = list(_groups)
    for g in groups:
        kill_group(g)


#: ``python -c BOOT PARENT_PID MODULE:FUNCTION``: a child that holds its lifeline before
#: importing anything (importing hare_opt takes seconds; a parent killed meanwhile must
#: not leave the child behind), then calls the function.
BOOT = """
import os, sys, signal, ctypes, importlib
parent = int(sys.argv[1])
if sys.platform.startswith("linux"):
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass
if os.getppid() != parent:
    os._exit(130)
module, _, fn = sys.argv[2].partition(":")
sys.argv = sys.argv[2:]
getattr(importlib.import_module(module), fn)()
"""


def child_command(target: str) -> list[str]:
    """argv of a child interpreter that runs ``module:function`` under a lifeline."""
    return [sys.executable, "-c", BOOT, str(os.getpid()), target]


def lifeline(poll_s: float = 0.5, parent: int | None = None) -> None:
    """In a child: end this process when its parent dies (kill -9 included). ``parent``:
    the pid the parent had when it started the child (default: the current parent), so
    that a parent that died before this call is noticed."""
    parent = os.getppid() if parent is None else parent
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the call above
        os._exit(EXIT_INTERRUPTED)

    def poll() -> None:
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent:
                os._exit(EXIT_INTERRUPTED)

    threading.Thread(target=poll, name="hare-opt-lifeline", daemon=True).start()


def child_init(parent: int | None = None) -> None:
    """Initializer of a pool worker: its own process group (a terminal's Ctrl-C reaches
    only the driver, which kills the workers), and it dies with ``parent``."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    lifeline(parent=parent)
