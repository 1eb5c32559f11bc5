"""numba compilation with an on-disk cache that cannot go stale on a pinned dependency.

numba keys its cache on the text of the file that holds the compiled function only.
A kernel that compiles in a rule from another module (the spec's start rule, another
kernel module's helpers) would keep a stale copy after that rule is edited. So each
kernel module creates its decorator with ``PinnedJit(rules, pin)``: the pin (the first
16 hex digits of the rules' source hash) lives in the kernel's own file, so editing a
rule means editing the kernel file, and until the pin is updated caching is off (one
warning, and a test fails).
"""

from __future__ import annotations

import hashlib
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from numba import njit


def source_pin(*fns: Callable[..., Any]) -> str:
    """First 16 hex digits of the sha256 of the functions' sources, one after another
    ("" if one has none); a compiled function counts by its Python source."""
    try:
        text = "".join(inspect.getsource(getattr(fn, "py_func", fn)) for fn in fns)
    except OSError:  # no source: numba could not cache anyway
        return ""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class PinnedJit:
    """``njit(cache=True)`` while the pins hold and a cache folder is writable, else ``njit``.

    numba raises at decoration when no cache folder is writable; a read-only install
    must still run, so the decorator then compiles in every process (one warning).
    """

    def __init__(self, rule: Callable[..., Any] | tuple[Callable[..., Any], ...], pin: str,
                 owner: str):
        self.rules = rule if isinstance(rule, tuple) else (rule,)
        self.cache = source_pin(*self.rules) == pin
        self.rule, self.pin, self.owner = self.rules[0], pin, owner
        if not self.cache:
            names = ", ".join(getattr(r, "__qualname__", str(r)) for r in self.rules)
            warnings.warn(f"hare_opt: {names} differ from their pin in {owner}: "
                          "numba cache off until the pin is updated", RuntimeWarning,
                          stacklevel=2)

    def __call__(self, fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        if fn is None:
            return lambda f: self(f, **options)
        if self.cache:
            try:
                return njit(cache=True, **options)(fn)
            except RuntimeError as exc:  # "cannot cache function ...: no locator available"
                self.cache = False
                warnings.warn(f"hare_opt: numba cache unavailable, compiling in every process "
                              f"({exc})", RuntimeWarning, stacklevel=2)
        return njit(fn, **options)

    @property
    def pinned(self) -> bool:
        """Whether the rules' sources still match the pin (a test asserts it)."""
        return source_pin(*self.rules) == self.pin
