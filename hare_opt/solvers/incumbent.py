"""The best schedule so far, shared by the portfolio's runs while they run.

The portfolio's backends run in separate interpreters; a file is the simplest channel
between them. A run that finds a better schedule ``offer``s it (CP-SAT from its
solution callback, bnb when its search improves); a run that can use a better upper
bound ``peek``s at it (bnb between kernel chunks: it then searches only below the
shared value, and a completed search proves that value optimal for the portfolio,
which holds the schedule). The file holds one pickled ``(value, rows)`` pair; writers
take an exclusive lock and replace it atomically, so a reader never sees half a file.
Nothing read from it is trusted: the portfolio checks the schedule before using it.
"""

from __future__ import annotations

import fcntl
import os
import pickle
from pathlib import Path

import numpy as np

from hare_opt.model import Instance, Schedule


class SharedIncumbent:
    """A file of the best (objective, schedule rows) any run offered."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) last read
        self._value: int | None = None

    def _read(self) -> tuple[int, np.ndarray] | None:
        try:
            with open(self.path, "rb") as f:
                return pickle.load(f)
        except (FileNotFoundError, EOFError, pickle.UnpicklingError):
            return None

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
        with open(lock, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            found = self._read()
            if found is not None and int(found[0]) <= value:
                return False
            tmp = self.path.with_suffix(".tmp")
            with open(tmp, "wb") as f:
                pickle.dump((int(value), np.asarray(rows, dtype=np.int64)), f)
            os.replace(tmp, self.path)
        return True

    def schedule(self, instance: Instance) -> tuple[int, Schedule] | None:
        """The shared (claimed value, schedule); the caller checks it."""
        found = self._read()
        if found is None:
            return None
        value, rows = found
        job, rnd, task, gpu, start = rows.T
        return int(value), Schedule.from_indices(instance, job, rnd, task, gpu, start)
