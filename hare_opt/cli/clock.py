"""How long this process has been running: the start-up a command reports.

Why: a time limit bounds the solve, and the process's start-up (the interpreter, the
imports, the one-off compile and cache loads) is left out of it but announced, so each
run must measure its own start-up rather than have it guessed from another run. Linux
gives the process's start in ``/proc/self/stat`` (in clock ticks, 10 ms); elsewhere the
age is counted from the first import of ``hare_opt.cli``, which misses the interpreter's
own start (a few tens of milliseconds).
"""

from __future__ import annotations

import os
import time

_IMPORTED = time.perf_counter()


def process_age() -> float:
    """Seconds since this process started."""
    try:
        with open("/proc/self/stat") as f:
            # fields after the command name (which may hold spaces) start at field 3
            started = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
        with open("/proc/uptime") as f:
            now = float(f.read().split()[0])
        age = now - started
    except (OSError, ValueError, IndexError):
        age = -1.0
    return age if age >= 0 else time.perf_counter() - _IMPORTED
