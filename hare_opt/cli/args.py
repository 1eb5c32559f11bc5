"""Typed, range-checked command-line values: every number finite and in range, every
path checked before any work, each refusal one line naming the option.

argparse calls these as ``type=``; an ``ArgumentTypeError`` becomes the one-line usage
error of ``hare_opt.cli.main.Parser``. ``check_output`` and ``check_folder`` refuse an
output that cannot or must not be written (an input of the same command, a folder for
a file, a special file) before any work. ``deprecated`` keeps an old option spelling
for one release.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hare_opt.model import OptionError

#: Longest path accepted (the system's own limit is 4096 bytes; anything near it is a mistake).
MAX_PATH = 4096


def number(
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    what: str = "a number",
) -> Callable[[str], float]:
    """A finite float within [lo, hi] (``lo_open``: > lo)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected {what}, finite, got {text!r}")
        if lo is not None and (value <= lo if lo_open else value < lo):
            raise argparse.ArgumentTypeError(
                f"expected {what} {'>' if lo_open else '>='} {lo:g}, got {text!r}"
            )
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"expected {what} <= {hi:g}, got {text!r}")
        return value

    parse.__name__ = what  # argparse names the type in its messages
    return parse


def integer(
    *, lo: int | None = None, hi: int | None = None, what: str = "an integer"
) -> Callable[[str], int]:
    """A decimal integer within [lo, hi] (no 10**30, no 1e3, at most 30 digits)."""

    def parse(text: str) -> int:
        t = text.strip()
        if not t.lstrip("+-").isdigit() or len(t) > 30:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        value = int(t)
        if lo is not None and value < lo:
            raise argparse.ArgumentTypeError(f"expected {what} >= {lo}, got {text!r}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"expected {what} <= {hi:,}, got {text!r}")
        return value

    parse.__name__ = what
    return parse


#: Seconds of a time limit: finite and > 0 (a week at most: more is a typo).
seconds = number(lo=0.0, lo_open=True, hi=7 * 86400.0, what="a number of seconds")
#: A seed: a non-negative integer below 2^63 (numpy and the solvers take it).
seed = integer(lo=0, hi=2**63 - 1, what="a seed")
#: Worker processes: 1 to 1024.
workers = integer(lo=1, hi=1024, what="a number of workers")


def path(text: str) -> str:
    """A path a user can mean: non-empty, no NUL byte, not absurdly long."""
    if not text or "\0" in text or len(text.encode(errors="replace")) > MAX_PATH:
        shown = text if len(text) < 60 else text[:40] + f"... ({len(text)} characters)"
        raise argparse.ArgumentTypeError(f"not a usable path: {shown!r}")
    return text


def file_name(text: str) -> str:
    """A name that becomes a file in an output folder: a plain file name
    (``hare_opt.io.output.plain_name``), never a path out of the folder."""
    from hare_opt.io.output import OutputError, plain_name

    try:
        return plain_name(text, "a name that becomes a file")
    except OutputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def names(text: str) -> list[str]:
    """A comma-separated list with at least one name, none twice."""
    out = [s.strip() for s in text.split(",") if s.strip()]
    if not out:
        raise argparse.ArgumentTypeError(
            f"expected one or more comma-separated names, got {text!r}"
        )
    twice = sorted({n for n in out if out.count(n) > 1})
    if twice:
        raise argparse.ArgumentTypeError(f"{', '.join(twice)} listed twice in {text!r}")
    return out


def cluster(text: str) -> str:
    """A cluster spec or name (``testbed``, ``V100:8,T4:4``), checked and counted before
    any GPU is made."""
    from hare_opt.generators.clusters import parse_cluster
    from hare_opt.model import HareOptError

    try:
        parse_cluster(text)
    except HareOptError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("field 'cluster': ")) from None
    return text


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output(
    out: str | os.PathLike,
    inputs: Iterable[str | os.PathLike | None],
    option: str = "--out",
    owner: str = "command",
    *,
    streams: bool = True,
) -> Path:
    """``out`` as a Path, refused before any work when it is one of ``inputs`` (an output
    never replaces an input), a folder, a special file (``hare_opt.io.output`` decides),
    or in a folder that cannot be written. ``streams=False``: only a file will do (the
    command writes several files named after it)."""
    from hare_opt.io.output import OutputError, destination, writable

    p = Path(out)
    for src in inputs:
        # realpath, not Path.resolve: a symlink loop is an unusable output, not a crash
        if src is not None and (
            _same(p, Path(src)) or os.path.realpath(p) == os.path.realpath(src)
        ):
            raise OptionError(
                f"{str(out)!r} is also an input of this command; write the output elsewhere",
                option=option,
                owner=owner,
            )
    if p.is_dir():
        raise OptionError(f"{str(out)!r} is a folder; give a file name", option=option, owner=owner)
    try:
        dest = destination(out)
        if not streams and not dest.is_file:
            raise OutputError(
                f"{str(out)!r}: this command writes files named after it; give a file name"
            )
        writable(dest, str(out))
    except OutputError as exc:
        raise OptionError(str(exc), option=option, owner=owner) from None
    return p


def check_folder(
    folder: str | os.PathLike, option: str = "--out-dir", owner: str = "command"
) -> Path:
    """An output folder: refused before any work when it is a file or cannot be made."""
    p = Path(folder)
    probe = p
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe == p and not p.is_dir():
        raise OptionError(f"{str(folder)!r} is not a folder", option=option, owner=owner)
    if not probe.is_dir():
        raise OptionError(f"{str(folder)!r}: {probe} is not a folder", option=option, owner=owner)
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OptionError(f"{str(folder)!r}: cannot write in {probe}", option=option, owner=owner)
    return p


def uses_stdout(out: str | os.PathLike | None) -> bool:
    """Whether an ``--out`` value is standard output (the command's own lines then go to
    stderr, so that stdout holds the output alone)."""
    from hare_opt.io.output import STDOUT

    return out is not None and os.fspath(out) in STDOUT


class _Deprecated(argparse.Action):
    """An old spelling of an option: does what the new one does, after one line on stderr."""

    def __init__(
        self, option_strings: list[str], dest: str, *, target: argparse.Action, new: str, **kw
    ) -> None:
        super().__init__(option_strings, dest, **kw)
        self.target, self.new = target, new

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values,
        option_string: str | None = None,
    ) -> None:
        print(
            f"{parser.prog}: warning: {option_string} is deprecated, use {self.new} (the "
            "old spelling goes in the next release)",
            file=sys.stderr,
        )
        self.target(parser, namespace, values, self.new)


def deprecated(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """Accept ``old`` as an alias of the option ``new`` for one release (hidden in --help)."""
    target = parser._option_string_actions[new]
    typed: dict[str, Any] = {} if target.type is None else {"type": target.type}
    parser.add_argument(
        old,
        action=_Deprecated,
        dest=target.dest,
        nargs=target.nargs,
        metavar=target.metavar,
        choices=target.choices,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
        target=target,
        new=new,
        **typed,
    )
