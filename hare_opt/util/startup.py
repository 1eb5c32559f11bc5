"""A signal guard for the first moments of a ``hare-opt`` process.

Why: the command's own discipline (``util.interrupt``) is installed by ``cli.main.main``,
after the interpreter has imported ``hare_opt.cli.main`` and what it needs (tens of
milliseconds, far more on a loaded machine). A SIGINT in that window raised a
traceback, a SIGTERM killed the process (exit -15). Nothing has started yet then (no
search, no child, no output), so the guard's answer is simply the command's answer to an
interrupt: one line and exit 130.

``hare_opt/cli/__init__.py`` calls ``guard`` when the process is the command line (the
``hare-opt`` script or ``python -m hare_opt.cli.main``), so importing the package as a
library changes no signal handler. The interpreter's own start, before the first line
of ``hare_opt`` runs, is outside any Python handler: a signal there has its default
action. Standard library only: this runs before anything else is imported.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

EXIT_INTERRUPTED = 130
#: The command line's module (named, not imported: this runs before it loads).
_CLI = "hare_opt.cli.main"
SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: The handlers the guard replaced (what a forked child or a library caller gets back).
_prior: dict[int, Any] = {}


def _stop(signum: int, frame: object) -> None:  # noqa: ARG001 - handler signature
    name = signal.Signals(signum).name
    try:
        os.write(2, f"hare-opt: interrupted by {name}\n".encode())
    finally:
        os._exit(EXIT_INTERRUPTED)


def is_command_line() -> bool:
    """Whether this process runs ``hare-opt`` (the script, or ``-m hare_opt.cli.main``)."""
    if os.path.basename(sys.argv[0]).startswith("hare-opt"):
        return True
    argv = list(getattr(sys, "orig_argv", []))[1:]
    while argv:
        word = argv.pop(0)
        if word == "-m":
            return argv[:1] == [_CLI]
        if word.startswith("-m"):
            return word[2:] == _CLI
        if word in _WITH_VALUE:
            argv = argv[1:]
        elif word == "-c" or not word.startswith("-"):
            return False  # a script or -c: a later -m is its argument
    return False


#: Interpreter options whose value is the next word.
_WITH_VALUE = ("-W", "-X", "--check-hash-based-pycs")


def guard() -> None:
    """Install the guard (main thread, once); a no-op elsewhere."""
    if _prior:
        return
    try:
        for s in SIGNALS:
            _prior[s] = signal.signal(s, _stop)
    except ValueError:  # not the main thread
        _prior.clear()


def prior(signum: int, handler: Any) -> Any:
    """``handler`` unless it is the guard, then the handler the guard replaced."""
    return _prior.get(signum, handler) if handler is _stop else handler
