"""numba compilation with an on-disk cache that cannot go stale on a pinned dependency.

numba keys its cache on the text of the file that holds the compiled function only.
A kernel that compiles in a rule from another module (the spec's start rule, another
kernel module's helpers) would keep a stale copy after that rule is edited. So each
kernel module creates its decorator with ``PinnedJit(rules, pin)``: the pin (the first
16 hex digits of the rules' source hash) lives in the kernel's own file, so editing a
rule means editing the kernel file, and until the pin is updated caching is off (one
warning, and a test fails).

A compile (a cold cache: the first run after installing, or a new NUMBA_CACHE_DIR) takes
tens of seconds, so it is announced on stderr once per process when the first one
starts, and ``compile_seconds`` counts the time spent compiling, so that a caller can
keep it out of a time limit or report it (``stats.compile_s``). Loading from the cache
is neither announced nor counted (numba raises its compile event only on a miss).
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from numba.core import config, event, types
from numba.core.registry import CPUDispatcher

#: One line on stderr when the process first compiles (a cold cache).
ANNOUNCEMENT = (
    "hare-opt: compiling numba kernels (a first run after installing, or a "
    "new cache folder; tens of seconds, once; not counted in time limits)"
)


class _CompileClock(event.Listener):
    """Seconds spent in top-level numba compiles (a kernel's callees compile inside it)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.announced = False
        self._depth: dict[int, int] = {}
        self._t0: dict[int, float] = {}
        self._lock = threading.Lock()

    def on_start(self, ev: event.Event) -> None:
        me = threading.get_ident()
        with self._lock:
            depth = self._depth.get(me, 0)
            self._depth[me] = depth + 1
            if depth:
                return
            self._t0[me] = time.perf_counter()
            first, self.announced = not self.announced, True
        if first:
            try:
                sys.stderr.write(ANNOUNCEMENT + "\n")
                sys.stderr.flush()
            except (OSError, ValueError):  # no stderr (closed): nothing to announce on
                pass

    def on_end(self, ev: event.Event) -> None:
        me = threading.get_ident()
        with self._lock:
            self._depth[me] = self._depth.get(me, 1) - 1
            if self._depth[me] == 0:
                self.seconds += time.perf_counter() - self._t0.pop(me, time.perf_counter())


_clock = _CompileClock()
event.register("numba:compile", _clock)


def compile_seconds() -> float:
    """Seconds this process has spent compiling numba kernels so far (0 on a warm cache)."""
    with _clock._lock:
        running = sum(time.perf_counter() - t for t in _clock._t0.values())
        return _clock.seconds + running


def source_pin(*fns: Callable[..., Any]) -> str:
    """First 16 hex digits of the sha256 of the functions' sources, one after another
    ("" if one has none); a compiled function counts by its Python source."""
    try:
        text = "".join(inspect.getsource(getattr(fn, "py_func", fn)) for fn in fns)
    except OSError:  # no source: numba could not cache anyway
        return ""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class _PlainArgs(CPUDispatcher):
    """A kernel that compiles for its arguments' plain types when another kernel calls it.

    numba types a constant argument (``f(h, n, 0)``), or a variable while its first
    assignment is all the typer has seen of it, as a literal, and compiles the callee
    once for that literal type and again for ``int64`` (2.5 s for ``place_round``).
    Compiling the plain type only changes no result: the callee computes the same on
    the same ints, and the caller's constant still reaches it when LLVM inlines the call.
    """

    def get_call_template(self, args: Any, kws: Any) -> Any:
        args = tuple(types.unliteral(a) for a in args)
        return super().get_call_template(args, {k: types.unliteral(v) for k, v in kws.items()})


def _compiled(fn: Callable[..., Any], cache: bool, options: dict[str, Any]) -> Any:
    """``njit(fn, cache=cache, **options)`` with a ``_PlainArgs`` dispatcher (as numba's
    ``_jit`` builds one)."""
    if config.DISABLE_JIT:  # type: ignore[attr-defined]  # (set at run time, as numba does)
        return fn
    targetoptions = {"nopython": True, "boundscheck": None, **options}
    disp = _PlainArgs(py_func=fn, locals={}, targetoptions=targetoptions)
    if cache:
        disp.enable_caching()
    return disp


class PinnedJit:
    """``njit(cache=True)`` while the pins hold and a cache folder is writable, else ``njit``.

    numba raises at decoration when no cache folder is writable; a read-only install
    must still run, so the decorator then compiles in every process (one warning). A
    kernel that compiles in no other module's rule passes ``()`` (the pin of nothing).
    """

    def __init__(
        self, rule: Callable[..., Any] | tuple[Callable[..., Any], ...], pin: str, owner: str
    ):
        self.rules = rule if isinstance(rule, tuple) else (rule,)
        self.cache = source_pin(*self.rules) == pin
        self.pin, self.owner = pin, owner
        if not self.cache:
            names = ", ".join(getattr(r, "__qualname__", str(r)) for r in self.rules)
            warnings.warn(
                f"hare_opt: {names} differ from their pin in {owner}: "
                "numba cache off until the pin is updated",
                RuntimeWarning,
                stacklevel=2,
            )

    def __call__(self, fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        if fn is None:
            return lambda f: self(f, **options)
        if self.cache:
            try:
                return _compiled(fn, True, options)
            except RuntimeError as exc:  # "cannot cache function ...: no locator available"
                self.cache = False
                warnings.warn(
                    f"hare_opt: numba cache unavailable, compiling in every process ({exc})",
                    RuntimeWarning,
                    stacklevel=2,
                )
        return _compiled(fn, False, options)

    @property
    def pinned(self) -> bool:
        """Whether the rules' sources still match the pin (a test asserts it)."""
        return source_pin(*self.rules) == self.pin
