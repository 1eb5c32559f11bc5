"""``hare_opt.solve``: ``solvers.solve`` for a program that calls the library, with the
command line's answer to Ctrl-C.

Why a front door of its own: signals become a run's stop flag only at the edges of a
process (docs/contributing.md, "Run control"). The command line and a portfolio child
are edges, and so is a program's call of ``hare_opt.solve``: in the main thread, with
Python's default SIGINT handler in place, Ctrl-C stops the search and returns its best
schedule (``stats["stopped"]``); anywhere else (another thread, a program with its own
handler, under the command line) it is ``solvers.solve`` as it is.
"""

from __future__ import annotations

from typing import Any

from hare_opt.model import Instance, Result
from hare_opt.solvers import base
from hare_opt.util import interrupt


def solve(instance: Instance, solver: str = "hare", **kwargs: Any) -> Result:
    """``hare_opt.solvers.solve(instance, solver, **kwargs)`` under the library's edge
    (``util.interrupt.library_edge``); see that function for the arguments."""
    with interrupt.library_edge():
        return base.solve(instance, solver, **kwargs)
