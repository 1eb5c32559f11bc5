"""Every file hare_opt writes goes through here: all or nothing, and never over a special file.

Why one helper: an output that is interrupted half-way (Ctrl-C, SIGTERM, a full disk, a
crash) must leave the old file or none, never a truncated one that looks like a result.
So a regular file is written to a temporary file in the same folder and renamed over
the destination (``os.replace`` is atomic within a file system); the old file's
permissions are kept. What is not a regular file is decided here too, once:

* ``-`` (or ``/dev/stdout``): standard output, written once the output is complete;
* ``/dev/null``: written through (discarded);
* a symbolic link: followed; its target is replaced, the link stays;
* a named pipe (a FIFO, or a shell's ``>(...)``): written through once the output is
  complete, and refused at once when no process reads it (so nothing hangs);
* a folder, another device node or a socket: refused (``OutputError``), so that no
  command ever replaces ``/dev/sda`` or a socket with a regular file.

A process killed with SIGKILL mid-write leaves its temporary file
(``.NAME.XXXX.tmp...`` next to the destination); the destination is intact.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from hare_opt.model import HareOptError

#: Spellings of standard output.
STDOUT = ("-", "/dev/stdout")


class OutputError(HareOptError, ValueError):
    """An output that cannot or must not be written (names the path and why)."""


@dataclass(frozen=True)
class Destination:
    """Where an output goes: ``kind`` is ``file`` (``path``: the real file, links
    resolved), ``stdout``, ``discard`` (/dev/null) or ``pipe`` (a named pipe)."""

    kind: str
    path: Path | None

    @property
    def is_file(self) -> bool:
        return self.kind == "file"


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISCHR, "a device node"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def destination(path: str | os.PathLike) -> Destination:
    """Classify ``path`` as an output (see the module's list); refuse what must not be written."""
    text = os.fspath(path)
    if text in STDOUT:
        return Destination("stdout", None)
    if not text:
        raise OutputError("an empty path is not an output")
    if text.endswith(("/", os.sep)):
        raise OutputError(f"{text}: ends with '/', which names a folder; give a file name")
    try:
        st = os.stat(text)  # follows links: what a write would reach
    except FileNotFoundError:
        return Destination("file", Path(os.path.realpath(text)))
    except OSError as exc:  # a link loop, a path through a file, no permission
        raise OutputError(f"{text}: cannot be written ({exc.strerror or exc})") from None
    if stat.S_ISREG(st.st_mode):
        return Destination("file", Path(os.path.realpath(text)))
    if stat.S_ISFIFO(st.st_mode):
        return Destination("pipe", Path(text))
    if stat.S_ISCHR(st.st_mode) and _same(text, os.devnull):
        return Destination("discard", Path(os.devnull))
    raise OutputError(
        f"{text}: is {_kind(st.st_mode)}; give a file name (or /dev/null to "
        "discard, - for standard output)"
    )


def plain_name(name: object, field: str) -> str:
    """``name`` when it is a plain file name (a non-empty string without ``/`` or ``\\``,
    not ``.`` or ``..``, no NUL): a name the program turns into a file inside an output
    folder must stay inside it. Else ``OutputError`` naming ``field``."""
    if not isinstance(name, str):
        raise OutputError(
            f"{field}: must be a string (a file name), got {type(name).__name__} {name!r}"
        )
    why = (
        "is empty"
        if not name.strip()
        else "is '.' or '..'"
        if name in (".", "..")
        else "contains a path separator ('/' or '\\')"
        if "/" in name or "\\" in name
        else "contains a NUL character"
        if "\0" in name
        else "is longer than 200 characters"
        if len(name) > 200
        else None
    )
    if why:
        raise OutputError(f"{field}: {name[:80]!r} {why}; give a plain file name")
    return name


def plain_file(path: str | os.PathLike, shown: str = "") -> None:
    """Refuse a path that exists and is not a regular file, links included (``lstat``):
    for files the program keeps for itself (the cell store), where nothing a user
    placed there is followed, read to its end or waited on."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(
            f"{shown or os.fspath(path)}: cannot be used ({exc.strerror or exc})"
        ) from None
    if stat.S_ISLNK(st.st_mode):
        raise OutputError(
            f"{shown or os.fspath(path)}: is a symbolic link; the program "
            "keeps only regular files here (remove it)"
        )
    if not stat.S_ISREG(st.st_mode):
        kind = "a named pipe" if stat.S_ISFIFO(st.st_mode) else _kind(st.st_mode)
        raise OutputError(
            f"{shown or os.fspath(path)}: is {kind}; the program keeps only "
            "regular files here (remove it)"
        )


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def writable(dest: Destination, shown: str) -> None:
    """Refuse a file output whose folder cannot be made or written, before any work."""
    if not dest.is_file:
        return
    assert dest.path is not None
    folder = dest.path.parent
    while not folder.exists():  # the nearest folder that exists (the rest is created)
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"{shown}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{shown}: cannot write in the folder {folder}")


def _mode(path: Path) -> int:
    """The destination's permissions if it exists, else what a new file gets (umask)."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(path.stat().st_mode)
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A path to write the whole output to; when the body completes it becomes ``path``
    (renamed over it, or copied into a stream). An exception or signal in the body
    leaves ``path`` as it was. The temporary name keeps the suffix (matplotlib and
    pandas choose the format by it)."""
    dest = destination(path)
    if dest.kind == "discard":
        yield Path(os.devnull)
        return
    suffix = Path(os.fspath(path)).suffix
    if dest.is_file:
        assert dest.path is not None
        dest.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            dir=dest.path.parent, prefix=f".{dest.path.name}.", suffix=f".tmp{suffix}"
        )
    else:
        fd, tmp = tempfile.mkstemp(prefix="hare-opt-out.", suffix=suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        if dest.is_file:
            assert dest.path is not None
            os.chmod(tmp, _mode(dest.path))
            os.replace(tmp, dest.path)
        else:
            _copy_to_stream(Path(tmp), dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _copy_to_stream(tmp: Path, dest: Destination) -> None:
    with open(tmp, "rb") as src:
        if dest.kind == "stdout":
            sys.stdout.flush()
            out = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
            if out is None:  # a text-only stdout (tests capture it): decode
                sys.stdout.write(src.read().decode("utf-8"))
                return
            shutil.copyfileobj(src, out)
            out.flush()
            return
        assert dest.path is not None
        with open_pipe(dest.path) as pipe:
            shutil.copyfileobj(src, pipe)


@contextlib.contextmanager
def open_pipe(path: Path) -> Iterator[IO[bytes]]:
    """A named pipe opened for writing, refused at once when nobody reads it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OutputError(f"{path}: is a named pipe that no process reads") from None
        raise
    os.set_blocking(fd, True)
    with os.fdopen(fd, "wb") as fh:
        yield fh


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator[IO[Any]]:
    """``open(path, mode)`` for writing, with ``atomic_path``'s all-or-nothing guarantee."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode 'w' or 'wb', got {mode!r}")
    encoding = None if "b" in mode else "utf-8"
    with atomic_path(path) as tmp, open(tmp, mode, encoding=encoding) as fh:
        yield fh


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, all or nothing."""
    with atomic_open(path, "w") as fh:
        fh.write(text)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path``, all or nothing."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)
