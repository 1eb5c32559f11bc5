"""Tools a search uses to stop: native calls it can let go of, actions on its stop flag,
and the hook through which the command's edge turns signals into that flag.

Why apart from ``util.interrupt``: a backend sees only its run's stop flag (``Run.stop``);
which signals set it, and whether any do, is decided at the edge of the process (the
command line's ``main``, a portfolio child, a library caller's ``interrupt.on_signals``),
which installs its hook with ``signals_to``. ``solve`` arms the hook for the length of a
search (``searching``); without an edge, no signal is handled and Python's default
(``KeyboardInterrupt``) holds.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

#: Worker threads ``in_worker`` let go while they were still in native code.
_abandoned: list[threading.Thread] = []
#: The edge's hook: given a search's stop flag, a context during which signals set it.
_edge: contextvars.ContextVar[Callable[[threading.Event], AbstractContextManager[Any]] | None] = (
    contextvars.ContextVar("hare_opt_signal_edge", default=None)
)


@contextlib.contextmanager
def signals_to(
    hook: Callable[[threading.Event], AbstractContextManager[Any]],
) -> Iterator[None]:
    """For the body (this thread's context): searches started through ``searching`` have
    their stop flag set by ``hook`` (the edge's signal handling)."""
    token = _edge.set(hook)
    try:
        yield
    finally:
        _edge.reset(token)


@contextlib.contextmanager
def searching(stop: threading.Event) -> Iterator[threading.Event]:
    """While a search runs: the edge's signals, if an edge is installed, set ``stop``."""
    hook = _edge.get()
    with hook(stop) if hook is not None else contextlib.nullcontext():
        yield stop


def end_process(code: int) -> None:
    """End a command's process with ``code`` once its output is flushed: at once (exit
    handlers run, the interpreter's tear-down does not) if a worker ``in_worker`` let go
    is still in native code. Tearing the interpreter down under a running solver takes
    about a second and can abort the process (a C++ thread destroyed while it runs,
    exit -6); nothing of the command is lost by skipping it. Otherwise: returns."""
    if not any(t.is_alive() for t in _abandoned):
        return
    import atexit

    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


#: Seconds ``in_worker`` waits for a stopped native call before it abandons it.
ABANDON_S = 0.5


def in_worker(
    fn: Callable[[], Any],
    stop: threading.Event | None,
    name: str,
    *,
    grace: float = ABANDON_S,
    deadline: float | None = None,
) -> Any:
    """``fn()`` in a daemon thread; None if ``stop`` is set, or ``deadline``
    (``perf_counter``) has passed, and ``fn`` has not returned ``grace`` seconds later (it
    then winds down alone: it must watch ``stop`` and the deadline itself).

    Why: a native solver polls its interrupt only in some phases (HiGHS's root LP of a
    MIP runs on for seconds); the caller returns what it has instead of waiting."""
    box: list[Any] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    stopped_at = None
    while worker.is_alive():
        worker.join(0.05)
        if (stop is not None and stop.is_set()) or (
            deadline is not None and time.perf_counter() >= deadline
        ):
            stopped_at = stopped_at or time.perf_counter()
            if time.perf_counter() > stopped_at + grace:
                _abandoned.append(worker)
                return None
    if errors:
        raise errors[0]
    return box[0]


@contextlib.contextmanager
def on_stop(
    event: threading.Event | None, action: Callable[[], Any], name: str = "on-stop"
) -> Iterator[None]:
    """Call ``action()`` once ``event`` is set, during the body: a thread watches, because
    the calling thread is inside a solver's native code until it returns."""
    if event is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.05):
            if event.is_set():
                action()
                return

    thread = threading.Thread(target=watch, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(1.0)
