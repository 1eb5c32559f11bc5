"""One lazy registry for every extension point: solvers, planners, policies, sweep cells.

A registry maps a name to a *spec*: a small frozen dataclass with at least ``name``
and ``target``. The target is the object itself or a ``"module:attribute"`` path that
is imported on first use, so heavy backends (OR-Tools, PuLP, numba kernels) load only
when asked for, and a registry can name code in layers above the one that owns it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any, Generic, Protocol, TypeVar


class Spec(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def target(self) -> Any: ...


S = TypeVar("S", bound=Spec)


def resolve(target: Any) -> Any:
    """The object a target names (``"module:attribute"``), or the target itself."""
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[S]):
    """Specs by name, in registration order; ``error`` is raised for an unknown name."""

    def __init__(self, kind: str, error: Callable[[str], Exception]):
        self.kind = kind
        self._error = error
        self._specs: dict[str, S] = {}
        self._loaded: dict[str, Any] = {}

    def add(self, spec: S) -> S:
        """Register (or replace) a spec; returns it."""
        if not isinstance(spec.name, str) or not spec.name:
            raise ValueError(f"{self.kind} name must be a non-empty string, got {spec.name!r}")
        self._specs[spec.name] = spec
        self._loaded.pop(spec.name, None)
        return spec

    def remove(self, name: str) -> None:
        self._specs.pop(name, None)
        self._loaded.pop(name, None)

    def spec(self, name: str) -> S:
        try:
            return self._specs[name]
        except KeyError:
            raise self._error(
                f"{self.kind} {name!r} is unknown; choose one of {', '.join(self._specs)}"
            ) from None

    def load(self, name: str) -> Any:
        """The spec's target, imported on first use (an ImportError propagates)."""
        if name not in self._loaded:
            self._loaded[name] = resolve(self.spec(name).target)
        return self._loaded[name]

    def names(self, where: Callable[[S], bool] | None = None) -> list[str]:
        return [n for n, s in self._specs.items() if where is None or where(s)]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[S]:
        return iter(list(self._specs.values()))

    def __len__(self) -> int:
        return len(self._specs)
