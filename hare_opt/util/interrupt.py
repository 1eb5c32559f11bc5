"""One discipline for interrupts and child processes.

Why: a search that runs for minutes must stop on Ctrl-C (SIGINT) or SIGTERM and hand
back the best schedule it has, even while its thread sits in native code (CP-SAT,
HiGHS, a numba kernel), and no process it started may outlive it.

* The first SIGINT/SIGTERM sets the stop event of every running search registered with
  ``watch`` (``solve`` registers ``Run.stop``): each backend polls it and returns its
  best checked schedule as ``feasible``. When nothing is registered (a command that
  does not search) the signal raises ``KeyboardInterrupt`` at once, as Python would.
* The second raises ``KeyboardInterrupt`` in the main thread: stop now, keep nothing.
* The third ends the process (exit 130) even if the main thread is stuck in native
  code, after killing the registered child process groups.

Signals reach Python handlers only when the main thread runs bytecode, so a listener
thread reads them from ``signal.set_wakeup_fd`` and sets the events immediately. Before
the discipline is installed, the command line's start-up guard (``util.startup``) ends
the process with 130; a KeyboardInterrupt that Python would swallow (raised inside a
weakref callback or a finaliser) is raised again (``_unraisable``).

A signal that repeats the one before within ``SAME_S`` seconds is the same interrupt:
``timeout`` and ``kill -- -PGID`` deliver one signal to a process twice (directly and
through its group), and that must not count as "interrupted again".

Children (``util.children``) live in their own process groups; a hard exit kills them.
Backends never import this module: they watch their run's stop flag, and the edge of
the process (the command line, a portfolio child, ``on_signals`` for a library caller)
installs ``watch`` as the hook that ``solve`` arms for each search
(``util.stopping.signals_to``).

Native calls that do not poll a stop everywhere run in ``in_worker``: the caller returns
``ABANDON_S`` after a stop with what it has; ``end_process`` then ends the command's
process without tearing the interpreter down around the still-running call.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from hare_opt.util import startup, stopping
from hare_opt.util.children import (  # noqa: F401 - the process discipline's public names
    BOOT,
    EXIT_INTERRUPTED,
    child_command,
    child_init,
    kill_all_groups,
    kill_group,
    lifeline,
    spawn_options,
    track,
    untrack,
)
from hare_opt.util.stopping import (  # noqa: F401 - the process discipline's public names
    ABANDON_S,
    _abandoned,
    end_process,
    in_worker,
    on_stop,
)

SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: A repeat of the same signal within this many seconds counts as one interrupt.
SAME_S = 0.25

_lock = threading.RLock()
_events: list[threading.Event] = []
_state: dict = {
    "installed": False,
    "mode": None,
    "thread_count": 0,
    "handler_count": 0,
    "signum": None,
    "old": {},
    "old_fd": -1,
    "socks": None,
    "last": {},
    "again": False,
}


def _counts(source: str, signum: int) -> bool:
    """Whether this delivery (seen by ``source``: "thread" or "handler") is a new
    interrupt rather than a repeat of the last one (same signal within ``SAME_S``).
    The caller holds ``_lock``."""
    now = time.monotonic()
    last = _state["last"].get(source)
    _state["last"][source] = (signum, now)
    return last is None or last[0] != signum or now - last[1] > SAME_S


def _forget_in_child() -> None:
    """In a process forked from one that has the discipline installed: drop it. The
    wakeup socket is shared with the parent, so a signal to the child (a pool
    terminating its workers with SIGTERM) would otherwise be read as one to the parent."""
    if not _state["installed"]:
        return
    with contextlib.suppress(ValueError, OSError):
        signal.set_wakeup_fd(-1)
    for s, h in _state["old"].items():
        with contextlib.suppress(ValueError, OSError, TypeError):
            signal.signal(s, h if h is not None else signal.SIG_DFL)
    _events.clear()
    _state.update(installed=False, mode=None, thread_count=0, handler_count=0, signum=None, last={})


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def requested() -> int | None:
    """The signal that asked the current command to stop, or None."""
    return _state["signum"]


def _count() -> int:
    return max(_state["thread_count"], _state["handler_count"])


def _set_all() -> None:
    with _lock:
        for ev in _events:
            ev.set()


def _hard_exit() -> None:
    kill_all_groups()
    with contextlib.suppress(Exception):
        sys.stderr.write("hare-opt: interrupted again: stopped at once\n")
        sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


def _listen(sock: socket.socket, signals: tuple[int, ...]) -> None:
    """Listener thread: one byte per delivered signal, even while the main thread is in C."""
    while True:
        try:
            data = sock.recv(64)
        except OSError:
            return
        if not data:
            return
        for b in data:
            if b not in signals:
                continue
            with _lock:
                if not _counts("thread", b):
                    continue
                _state["thread_count"] += 1
                _state["signum"] = _state["signum"] or b
                soft = _state["mode"] == "soft" and bool(_events)
                n = _state["thread_count"]
            if soft:
                _set_all()
            if n >= (3 if soft else 2):
                _hard_exit()


def _handler(signum: int, frame) -> None:  # noqa: ARG001 - signal handler signature
    if _state["again"]:  # re-raised by ``_unraisable``: not a new signal
        _state["again"] = False
        raise KeyboardInterrupt
    with _lock:
        if not _counts("handler", signum):
            return  # the same interrupt, delivered twice
        _state["handler_count"] += 1
        _state["signum"] = _state["signum"] or signum
        soft = _state["mode"] == "soft" and bool(_events)
    if soft and _count() < 2:
        _set_all()
        return
    raise KeyboardInterrupt


def _raise_again(signum: int) -> None:
    if not (_state["installed"] and _state["again"]):
        return  # the body has ended meanwhile
    with contextlib.suppress(Exception):
        import _thread

        _thread.interrupt_main(signal.Signals(signum))


def _unraisable(hook: Any) -> Any:
    """A ``sys.unraisablehook`` that does not let Python swallow our KeyboardInterrupt.

    The handler raises it in whatever bytecode runs; when that is a weakref callback or
    a finaliser (the import system runs some), Python prints "Exception ignored in ..."
    and carries on as if nothing happened. This hook prints nothing for it and has the
    handler raise it again as soon as the main thread is back in ordinary code."""

    def unraisable(info: Any) -> None:
        if not (isinstance(info.exc_value, KeyboardInterrupt) and _state["installed"]):
            hook(info)
            return
        _state["again"] = True
        # from another thread, so that it lands after this hook has returned (if it is
        # swallowed again, this hook runs again)
        threading.Timer(0.01, _raise_again, args=(_state["signum"] or signal.SIGINT,)).start()

    return unraisable


@contextlib.contextmanager
def handling(
    mode: str = "soft", signals: tuple[int, ...] = SIGNALS, *, final: bool = False
) -> Iterator[bool]:
    """Install the discipline for the body (main thread only; a no-op elsewhere or when
    already installed). ``soft``: a first signal stops running searches; ``hard``: it
    raises ``KeyboardInterrupt``. Yields whether this call installed the handlers.
    ``final``: the process ends after the body, so the handlers are not given back but
    replaced by ``exit_on_signal``'s (no moment when a signal has its default action)."""
    if _state["installed"] or threading.current_thread() is not threading.main_thread():
        yield False
        return
    rsock, wsock = socket.socketpair()
    wsock.setblocking(False)
    # the start-up guard stands in for the handlers it replaced: those are the ones to give back
    old = {s: startup.prior(s, signal.getsignal(s)) for s in signals}
    try:
        old_fd = signal.set_wakeup_fd(wsock.fileno(), warn_on_full_buffer=False)
    except ValueError:  # not the main interpreter
        rsock.close()
        wsock.close()
        yield False
        return
    _state.update(
        installed=True,
        mode=mode,
        thread_count=0,
        handler_count=0,
        signum=None,
        last={},
        old=old,
        again=False,
    )
    listener = threading.Thread(
        target=_listen,
        args=(rsock, tuple(int(s) for s in signals)),
        name="hare-opt-signals",
        daemon=True,
    )
    listener.start()
    for s in signals:
        signal.signal(s, _handler)
    old_hook, sys.unraisablehook = sys.unraisablehook, _unraisable(sys.unraisablehook)
    try:
        yield True
    finally:
        sys.unraisablehook = old_hook
        if final:
            exit_on_signal()
        else:
            for s, h in old.items():
                signal.signal(s, h if h is not None else signal.SIG_DFL)
        signal.set_wakeup_fd(old_fd)
        wsock.close()
        with contextlib.suppress(OSError):
            rsock.shutdown(socket.SHUT_RDWR)
        rsock.close()
        listener.join(1.0)
        _state.update(installed=False, mode=None)


def exit_on_signal() -> None:
    """For a process whose command has finished, its output flushed and its exit status
    decided: signals are ignored from here to the end. (The interpreter's shut-down
    gives every signal back its default action, and a Ctrl-C there would kill the
    process with -2 instead of the status the command chose; shut-down takes about a
    second with numba and OR-Tools loaded.)

    Also clears CPython's "unhandled KeyboardInterrupt" flag: an extension module that
    runs Python code through ``PyRun_String`` (pybind11 modules do, e.g. OR-Tools on
    import) sets it when a Ctrl-C passes through, even though the command caught it,
    and the interpreter would then end by killing itself with SIGINT (status -2, not
    the 130 the command returned). Running a string through the same C path resets it.
    """
    if threading.current_thread() is threading.main_thread():
        for s in SIGNALS:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(s, signal.SIG_IGN)
    with contextlib.suppress(Exception):
        ctypes.pythonapi.PyRun_SimpleString(b"pass")


@contextlib.contextmanager
def watch(event: threading.Event) -> Iterator[threading.Event]:
    """Register a search's stop event for the body: a signal sets it (the hook an edge
    installs with ``stopping.signals_to``)."""
    with _lock:
        _events.append(event)
        if _state["installed"] and _state["signum"] is not None and _state["mode"] == "soft":
            event.set()  # the command is already stopping: do not start a long search
    try:
        yield event
    finally:
        with _lock, contextlib.suppress(ValueError):
            _events.remove(event)


@contextlib.contextmanager
def library_edge(stop: threading.Event | None = None) -> Iterator[None]:
    """The edge of a program's call into the library (``hare_opt.solve``): in the main
    thread with Python's default SIGINT handler, SIGINT stops the body's searches (their
    best schedules are returned) and SIGTERM keeps its meaning; elsewhere (an edge is
    already installed, another thread, a program's own handler) nothing changes.
    ``stop``: the caller's own loop's stop event, which the signal sets too (``watch``)."""
    own = (
        not _state["installed"]
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    with contextlib.ExitStack() as stack:
        if own:
            stack.enter_context(on_signals("soft", (signal.SIGINT,)))
        if stop is not None:
            stack.enter_context(watch(stop))
        yield


@contextlib.contextmanager
def on_signals(
    mode: str = "soft", signals: tuple[int, ...] = SIGNALS, *, final: bool = False
) -> Iterator[None]:
    """The edge of a process: the discipline installed (``handling``) and ``watch`` set as
    the hook every ``solve`` in the body arms, so Ctrl-C or SIGTERM stops a running
    search and returns its best schedule. The command line and a portfolio child run
    under it; a library caller who wants the same wraps its calls in it."""
    with handling(mode, signals, final=final), stopping.signals_to(watch):
        yield
