"""HiGHS objects made quietly: HiGHS prints a banner on stdout when the first one of a
process is created, which would corrupt machine-readable output (``--json``)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from functools import cache
from typing import Any

from hare_opt.util import stopping


@cache
def quiet_banner() -> None:
    """Create the process's first Highs object with stdout muted (once)."""
    import highspy  # a core dependency; imported here so that util stays light

    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    try:
        highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def new_highs(threads: int | None = None) -> Any:
    """A Highs object with its log off, on the process's one thread pool (``use_threads``)."""
    import highspy

    quiet_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", use_threads(threads))
    return h


_threads: list[int | None] = [None]


def use_threads(threads: int | None = None) -> int:
    """Size HiGHS's one global thread pool; returns the count every run must then ask for.

    Why: HiGHS sizes the pool at the first run of the process, and a later run asking
    for another count fails with an error status (no solve at all). So every HiGHS run
    of the package goes through here: ``threads=None`` keeps the current pool (HiGHS's
    own default, 0, if no count was asked for yet); another count resets it.
    """
    import highspy

    want = threads or _threads[0] or 0
    if _threads[0] != want:
        highspy.Highs.resetGlobalScheduler(True)
        _threads[0] = want
    return want


def run(h: Any) -> Any:
    """``h.run()``, once more on a fresh thread pool if HiGHS refused to start.

    Why: the pool is HiGHS's, per process, and a run from another thread (the MILP's
    worker) can leave it in a state where the next run here errors without solving
    (model status 'Not Set'). Nothing was solved then, so one retry is safe.
    """
    import highspy

    ran = h.run()
    if ran == highspy.HighsStatus.kError and h.getModelStatus() == highspy.HighsModelStatus.kNotset:
        highspy.Highs.resetGlobalScheduler(True)
        ran = h.run()
    return ran


def cancel_on(stop: threading.Event | None, h: Any) -> contextlib.AbstractContextManager:
    """``h.cancelSolve()`` once ``stop`` is set, for the body (a run of ``h``): HiGHS polls
    its interrupt callbacks only in some phases (a node-limited MIP once ignored two
    SIGTERMs); cancelling reaches more of them (not the root LP of a MIP: see
    ``stopping.in_worker``)."""
    return stopping.on_stop(stop, h.cancelSolve, "highs-stop")
