"""The best schedule so far, shared by the portfolio's runs while they run.

The portfolio's backends run in separate interpreters; a file is the simplest channel
between them. A run that finds a better schedule offers it (``offer``) (CP-SAT from its
solution callback, bnb when its search improves); a run that can use a better upper
bound peeks at it (``peek``) (bnb between kernel chunks: it then searches only below the
shared value, and a completed search proves that value optimal for the portfolio,
which holds the schedule).

The channel is internal: no user option names its file. The portfolio makes a private
folder (``tempfile.mkdtemp``, mode 0700) and hands the path to its children on their
standard input; a child passes it to ``attach`` and the solvers ask ``board()`` for it. The
file holds JSON (``{"value": int, "rows": [[job, round, task, gpu, start], ...]}``),
which cannot run code when read; writers take an exclusive lock and replace it
atomically, so a reader never sees half a file. Nothing read from it is trusted:
anything malformed reads as empty, and the portfolio checks the schedule before using
it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from hare_opt.model import Instance, Schedule

#: Largest board file read (bytes): a schedule of the largest instance fits well within.
MAX_BYTES = 1 << 28


class SharedIncumbent:
    """A file of the best (objective, schedule rows) any run offered."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) last read
        self._value: int | None = None

    def _read(self) -> tuple[int, np.ndarray] | None:
        """The pair on the board, or None when there is none or it is malformed."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:  # missing, a link
            return None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
                return None
            data = f.read(MAX_BYTES + 1)
        try:
            doc = json.loads(data)
            value = doc["value"]
            rows = np.asarray(doc["rows"], dtype=np.int64).reshape(-1, 5)
        except (ValueError, TypeError, KeyError, OverflowError):
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        return value, rows

    def peek(self) -> int | None:
        """The shared objective (re-read only when the file changed)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        key = (st.st_mtime_ns, st.st_size)
        if key != self._seen:
            found = self._read()
            self._seen, self._value = key, None if found is None else int(found[0])
        return self._value

    def offer(self, value: int, rows: np.ndarray) -> bool:
        """Store ``rows`` (job, round, task, gpu, start indices) if ``value`` beats the file."""
        lock = self.path.with_suffix(".lock")
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            found = self._read()
            if found is not None and int(found[0]) <= value:
                return False
            tmp = self.path.with_suffix(".tmp")
            doc = {
                "value": int(value),
                "rows": np.asarray(rows, dtype=np.int64).reshape(-1, 5).tolist(),
            }
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            os.replace(tmp, self.path)
        return True

    def schedule(self, instance: Instance) -> tuple[int, Schedule] | None:
        """The shared (claimed value, schedule); the caller checks it."""
        found = self._read()
        if found is None:
            return None
        value, rows = found
        try:
            job, rnd, task, gpu, start = rows.T
            return int(value), Schedule.from_indices(instance, job, rnd, task, gpu, start)
        except (ValueError, IndexError, TypeError):  # indices outside the instance
            return None


_BOARD: SharedIncumbent | None = None


def board() -> SharedIncumbent | None:
    """The board this process shares (set by the portfolio in its children), else None."""
    return _BOARD


def attach(path: str | os.PathLike | None) -> None:
    """Share the board at ``path`` (a file in the portfolio's private folder), or none."""
    global _BOARD
    _BOARD = None if path is None else SharedIncumbent(path)


@contextlib.contextmanager
def sharing(shared: SharedIncumbent | None) -> Iterator[SharedIncumbent | None]:
    """``shared`` is this process's board for the body (tests; the children ``attach``)."""
    global _BOARD
    old, _BOARD = _BOARD, shared
    try:
        yield shared
    finally:
        _BOARD = old
