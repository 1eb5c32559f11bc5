"""numba compilation with an on-disk cache that cannot go stale on a pinned dependency.

numba keys its cache on the text of the file that holds the compiled function only.
A kernel that compiles in a rule from another module (the spec's start rule) would
keep a stale copy after that rule is edited. So each kernel module creates its
decorator with ``pinned_jit(rule, pin)``: the pin (the first 16 hex digits of the
rule's source hash) lives in the kernel's own file, so editing the rule means
editing the kernel file, and until the pin is updated caching is off (one warning,
and a test fails).
"""

from __future__ import annotations

import hashlib
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from numba import njit


def source_pin(fn: Callable[..., Any]) -> str:
    """First 16 hex digits of the sha256 of ``fn``'s source ("" if it has none)."""
    try:
        return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()[:16]
    except OSError:  # no source: numba could not cache anyway
        return ""


class PinnedJit:
    """``njit(cache=True)`` while the pins hold and a cache folder is writable, else ``njit``.

    numba raises at decoration when no cache folder is writable; a read-only install
    must still run, so the decorator then compiles in every process (one warning).
    """

    def __init__(self, rule: Callable[..., Any], pin: str, owner: str):
        self.cache = source_pin(rule) == pin
        self.rule, self.pin, self.owner = rule, pin, owner
        if not self.cache:
            warnings.warn(f"hare_opt: {rule.__qualname__} differs from its pin in {owner}: "
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
        """Whether the rule's source still matches the pin (a test asserts it)."""
        return source_pin(self.rule) == self.pin
