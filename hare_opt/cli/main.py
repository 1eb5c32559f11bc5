"""``hare-opt`` entry point.

Sub-commands are discovered from ``hare_opt.cli.commands``: each module there
defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``,
so adding a command touches no shared file. Errors a user can fix (bad files,
unknown names, malformed arguments) print one line on stderr and exit with status 2.
Ctrl-C or SIGTERM stops a running search, which hands back its best schedule; the
command then finishes its output and exits with status 130 (a second signal stops
at once). A closed output pipe (``| head``) ends the command quietly, as Unix tools do.
The contract (formats, exit codes, options) is docs/spec.md.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import os
import pkgutil
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import Any, NoReturn

from hare_opt.model import HareOptError
from hare_opt.util import interrupt

EXIT_USAGE = 2
EXIT_PIPE = 128 + signal.SIGPIPE
#: Whether the running command's module declares ``SKIP_TEARDOWN`` (see ``_leave``).
_skip_teardown = [False]
SPEC = "docs/spec.md"


class UsageError(HareOptError):
    """A malformed command line (argparse's complaint, on one line)."""


class Parser(argparse.ArgumentParser):
    """argparse that raises one ``UsageError`` line instead of printing a usage block."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _command_names() -> list[str]:
    """Module names under ``hare_opt.cli.commands`` (nothing imported)."""
    import hare_opt.cli.commands as pkg

    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))


def _commands(only: str | None = None) -> list:
    """The command modules (each module's ``NAME`` is its file name); ``only``: just that
    one, so that a command pays for its own imports and no other's."""
    import hare_opt.cli.commands as pkg

    names = [only] if only is not None else _command_names()
    mods = [_import_command(f"{pkg.__name__}.{n}", n) for n in names]
    return sorted((m for m in mods if hasattr(m, "NAME")), key=lambda m: m.NAME)


def _import_command(module: str, name: str) -> Any:
    """The command module, or a stand-in that reports why it cannot load.

    One command with a missing optional dependency (or half-written by a
    colleague) must not take every other command down with it.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if interrupt.requested() is not None:
            raise KeyboardInterrupt from None  # cut short by a signal, not missing
        reason = f"command unavailable ({exc})"

        def run(args: argparse.Namespace) -> int:
            raise HareOptError(reason)

        def add_arguments(p: argparse.ArgumentParser) -> None:
            p.add_argument("rest", nargs=argparse.REMAINDER)

        return SimpleNamespace(NAME=name, HELP=f"[{reason}]", run=run, add_arguments=add_arguments)


def _named(argv: Sequence[str] | None) -> str | None:
    """The command ``argv`` names, if any (the first word that is not an option)."""
    words = list(sys.argv[1:] if argv is None else argv)
    first = next((w for w in words if not w.startswith("-")), None)
    return first if first in _command_names() else None


def build_parser(
    argv: Sequence[str] | None = None, *, lazy: bool = False
) -> argparse.ArgumentParser:
    """The parser; with ``lazy``, only the sub-command ``argv`` names is loaded (all of
    them when it names none: the help lists every command)."""
    parser = Parser(
        prog="hare-opt",
        description="Schedule distributed ML training jobs on heterogeneous GPUs "
        "(Hare, HPDC '22): exact solvers, heuristics, checker, simulator.",
    )
    from hare_opt import __version__

    parser.add_argument("--version", action="version", version=f"hare-opt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _commands(_named(argv) if lazy else None):
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def _usage_prefix(argv: Sequence[str] | None) -> str:
    """``hare-opt CMD`` when argv names a command, else ``hare-opt``."""
    first = _named(argv)
    return f"hare-opt {first}" if first else "hare-opt"


def _pointer(exc: HareOptError) -> str:
    """Where the rule that was broken is written down (the spec's section)."""
    from hare_opt.model import InstanceError, ScheduleError
    from hare_opt.model.limits import CapacityError

    for kind, section in (
        (InstanceError, "instance-file"),
        (ScheduleError, "schedule-file"),
        (CapacityError, "size-limits"),
    ):
        if isinstance(exc, kind):
            return f" (see {SPEC}#{section})"
    return ""


def _quiet_stdout() -> None:
    """After a broken pipe: send what is left to /dev/null so that the interpreter's
    final flush does not complain."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


def _say(line: str) -> None:
    """One line on stderr in one write: another thread's output (an import trace, a
    progress line) cannot land inside it."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hare-opt`` (``argv``: the arguments; None: this process's command line).

    The signal discipline is installed before anything else (the command's imports take
    most of start-up), so an interrupt at any moment from here on gives exit 130 and one
    line.
    """
    # argv None: this process's own command line, and the process ends after it: once the
    # output is flushed and the status decided, signals no longer change it.
    with interrupt.on_signals(final=argv is None), _quiet_compiler_cleanup(keep=argv is None):
        try:
            code = _run(argv)
        except KeyboardInterrupt as exc:
            sig = interrupt.requested()
            what = signal.Signals(sig).name if sig else "SIGINT"
            note = _compiling(exc)
            _say(f"{_usage_prefix(argv)}: interrupted by {what}{note}")
            code = interrupt.EXIT_INTERRUPTED
            if note and argv is None:
                # LLVM's state, cut mid-compile, can crash the interpreter's clean-up
                # (a segfault, exit -11, seen after this line): nothing was written yet
                # that clean-up could finish, so the process ends here
                _leave(code, clean_up=False)
        if argv is None:  # the process ends next: what it printed must not be lost
            code = _flush(code)
    if argv is None:
        interrupt.end_process(code)
        # after an interrupt the interpreter's tear-down has nothing left to finish and
        # can crash: once, 0.35 s into ``reproduce`` (its imports, C extensions among
        # them, under way), it aborted (exit -6, a fatal error after the interrupt's line)
        if _skip_teardown[0] or code == interrupt.EXIT_INTERRUPTED:
            _leave(code)
    return code


COMPILE_NOTE = (
    " while loading compiled kernels (a first run compiles them, once), before "
    "any result existed: nothing written; the kernels compiled so far are kept"
)


@contextlib.contextmanager
def _quiet_compiler_cleanup(*, keep: bool) -> Iterator[None]:
    """After an interrupt, the half-built objects of an abandoned numba compile fail to
    free themselves (llvmlite's finalisers raise, and Python prints "Exception ignored"
    with a traceback): noise about an interrupt the command already reports, so it is
    not printed. Any other unraisable error is, as before. ``keep``: the process ends
    after the command, and its last collections come after this body."""
    hook = sys.unraisablehook

    def quiet(info: Any) -> None:
        owner = str(getattr(info.object, "__module__", "") or "")
        if interrupt.requested() is not None and owner.split(".")[0] in ("llvmlite", "numba"):
            return
        hook(info)

    sys.unraisablehook = quiet
    try:
        yield
    finally:
        if sys.unraisablehook is quiet and not keep:
            sys.unraisablehook = hook


def _compiling(exc: BaseException) -> str:
    """Why an interrupt left nothing, when it came while a solve loaded its compiled
    kernels (``solvers.kernels.KernelLoader.warm_kernels``: numba's compiler on a first
    run, a cache load or a warm-up search later): that comes before any search, so there
    is no schedule to keep yet, and the user should know none was lost."""
    # the interrupt's own frames, then those of what it was raised from: an error numba
    # raised after the interrupt cut it short is reported as the interrupt (``_run``)
    cur: BaseException | None = exc
    seen: set[int] = set()
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        tb = cur.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if code.co_name == "warm_kernels" or any(
                f"{os.sep}{lib}{os.sep}" in code.co_filename for lib in ("numba", "llvmlite")
            ):
                return COMPILE_NOTE
            tb = tb.tb_next
        cur = cur.__cause__ or cur.__context__
    return ""


def _leave(code: int, *, clean_up: bool = True) -> NoReturn:
    """End the process with ``code`` once its output is out, without the interpreter's
    tear-down: after a solve that freeing of every module (OR-Tools, numba, HiGHS) took
    0.7-2 s of wall time on a loaded 2-core machine, after the result was printed, so a
    user's time limit looked overrun. With ``clean_up``, what a normal exit does that
    matters still happens: other non-daemon threads are waited for, exit handlers run
    (temporary folders, child processes); the streams are always flushed."""
    if clean_up:
        main = threading.main_thread()
        for t in threading.enumerate():
            if t is not main and not t.daemon:
                t.join()
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _flush(code: int) -> int:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_PIPE
    except (OSError, ValueError):
        pass
    return code


def _run(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words == ["--version"]:  # answered before any command module loads
        from hare_opt import __version__

        print(f"hare-opt {__version__}")
        return 0
    try:
        parser = build_parser(words, lazy=True)
    except Exception:
        if interrupt.requested() is not None:
            raise KeyboardInterrupt from None
        raise
    try:
        args = parser.parse_args(argv)
    except HareOptError as exc:  # UsageError, or a deprecated spelling's own complaint
        _say(f"{_usage_prefix(argv)}: error: {exc}")
        return EXIT_USAGE
    if not hasattr(args, "_run"):  # bare ``hare-opt``: the list of commands, and why 2
        parser.print_help()
        print("hare-opt: error: a command is required (see 'hare-opt --help')", file=sys.stderr)
        return EXIT_USAGE
    name = f"hare-opt {args.command}"
    try:
        _skip_teardown[0] = bool(
            getattr(sys.modules.get(args._run.__module__), "SKIP_TEARDOWN", False)
        )
        code = int(args._run(args) or 0)
        sig = interrupt.requested()
        if sig is not None:
            _say(f"{name}: stopped by {signal.Signals(sig).name}")
            return interrupt.EXIT_INTERRUPTED
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_PIPE
    except Exception as exc:
        if interrupt.requested() is not None:
            # Whatever failed after a signal failed because of it (a library cut short
            # in its own set-up says "initialization failed"): report the interrupt.
            raise KeyboardInterrupt from None
        return _refusal(name, exc)


def _refusal(name: str, exc: Exception) -> int:
    """One line on stderr for an error a user can act on; anything else is a bug, and
    its traceback is the report."""
    if isinstance(exc, HareOptError):
        text = _one_line(exc).removeprefix(f"{name.split()[-1]}: ")  # said once is enough
        _say(f"{name}: error: {text}{_pointer(exc)}")
    elif isinstance(exc, MemoryError):
        print(
            f"{name}: error: out of memory (instance or option too large; limits: {SPEC})",
            file=sys.stderr,
        )
    elif isinstance(exc, (OSError, ValueError, OverflowError)):
        # Files that cannot be written, numbers a user typed wrong.
        _say(f"{name}: error: {_one_line(exc)}")
    else:
        raise exc
    return EXIT_USAGE


def _one_line(exc: BaseException) -> str:
    """An error message as one line (a backend's message may span several)."""
    return " ".join(str(exc).split("\n")).strip() or type(exc).__name__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
