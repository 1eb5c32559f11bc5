"""Package attributes imported on first use (PEP 562), so that importing a package costs
only what its caller touches.

Why: ``hare-opt --version`` or a 20-task solve must not pay for pandas, SciPy, numba or
a MILP library they never use (about a second of CPU together). A package lists its
public names and the submodule each lives in; ``import hare_opt`` then loads nothing
heavy, and ``hare_opt.solve`` loads the solver layer when first read. Type checkers see
the same names through an ``if TYPE_CHECKING:`` import block beside the table.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` whose names live in the submodules
    ``table[name]`` (absolute module names); a name read once is cached on the package."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
