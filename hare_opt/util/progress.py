"""Progress of a long search on stderr: incumbent, bound, gap, elapsed.

Why: an exact solve without a time limit may run for minutes; without a sign of life a
user cannot tell progress from a hang. Backends report through their run
(``Run.report``) whenever they learn something (a new schedule, a better bound); a
command that shows a line (``reporting``: the CLI does for a terminal, not with
``--quiet``) passes its ``Reporter.update`` to ``solve`` as the run's sink.
A line is written at most once per ``interval`` seconds, and every ``heartbeat``
seconds even without news, so the rate stays modest whatever the backend reports.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO


class Reporter:
    """Collects the best incumbent (lowest) and bound (highest) seen, prints them."""

    def __init__(
        self,
        stream: TextIO,
        *,
        interval: float = 1.0,
        heartbeat: float = 10.0,
        fmt: Callable[[float], str] = lambda x: f"{x:g}",
        overwrite: bool = True,
    ):
        self.stream, self.interval, self.heartbeat = stream, interval, heartbeat
        self.fmt, self.overwrite = fmt, overwrite
        self.started = time.perf_counter()
        self.incumbent = math.inf
        self.bound = -math.inf
        self.source = ""
        self.note = ""
        self._changed = False
        self._last = -math.inf
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="hare-opt-progress", daemon=True)
        self.lines = 0

    def update(
        self,
        source: str,
        incumbent: float | None = None,
        bound: float | None = None,
        note: str | None = None,
    ) -> None:
        with self._lock:
            if incumbent is not None and incumbent < self.incumbent:
                self.incumbent, self.source, self._changed = float(incumbent), source, True
            if bound is not None and math.isfinite(bound) and bound > self.bound:
                self.bound, self._changed = float(bound), True
            if note is not None and note != self.note:
                self.note, self._changed = note, True

    def line(self) -> str:
        parts = [f"{time.perf_counter() - self.started:7.1f} s"]
        if math.isfinite(self.incumbent):
            parts.append(
                f"incumbent {self.fmt(self.incumbent)}"
                + (f" ({self.source})" if self.source else "")
            )
        if math.isfinite(self.bound):
            parts.append(f"bound {self.fmt(min(self.bound, self.incumbent))}")
        if math.isfinite(self.incumbent) and math.isfinite(self.bound) and self.incumbent > 0:
            parts.append(f"gap {100 * max(0.0, self.incumbent - self.bound) / self.incumbent:.2f}%")
        if self.note:
            parts.append(self.note)
        return "  ".join(parts)

    def _emit(self) -> None:
        text = self.line()
        if self.overwrite:
            self.stream.write("\r\x1b[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.lines += 1

    def _loop(self) -> None:
        while not self._done.wait(self.interval):
            now = time.perf_counter()
            with self._lock:
                due = self._changed or now - self._last >= self.heartbeat
                self._changed = False
            if due:
                self._last = now
                with contextlib.suppress(Exception):  # a closed terminal must not kill a solve
                    self._emit()

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._done.set()
        self._thread.join(2.0)
        if self.overwrite and self.lines:
            with contextlib.suppress(Exception):
                self.stream.write("\r\x1b[K")
                self.stream.flush()


@contextlib.contextmanager
def reporting(stream: TextIO | None, **kwargs) -> Iterator[Reporter | None]:
    """A progress line for the body (``stream=None``: none); its ``update`` is the sink a
    command passes to ``solve(progress=...)``."""
    if stream is None:
        yield None
        return
    rep = Reporter(stream, **kwargs)
    rep.start()
    try:
        yield rep
    finally:
        rep.close()
