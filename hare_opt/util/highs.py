"""HiGHS objects made quietly: HiGHS prints a banner on stdout when the first one of a
process is created, which would corrupt machine-readable output (``--json``)."""

from __future__ import annotations

import os
import sys
from functools import cache
from typing import Any


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


def new_highs() -> Any:
    """A Highs object with its log off."""
    import highspy

    quiet_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


_threads: list[int | None] = [None]


def use_threads(threads: int) -> None:
    """HiGHS sizes one global thread pool at its first run; a run asking for another
    count must reset it first, or HiGHS fails."""
    import highspy

    if _threads[0] not in (None, threads):
        highspy.Highs.resetGlobalScheduler(True)
    _threads[0] = threads
