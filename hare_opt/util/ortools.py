"""OR-Tools' CP-SAT module without the pandas import it does not need here.

Why: ``ortools.sat.python.cp_model`` imports pandas at its top only for its
pandas-based helpers (``new_int_var_series`` and the like) and for annotations, and
pandas costs about 0.5-0.7 s of CPU to import: more than a small CP-SAT solve. While
``cp_model`` imports, ``pandas`` is a stand-in whose attributes are placeholder classes
(the annotations read ``pd.Index``, ``pd.Series``); afterwards ``cp_model.pd`` is a
proxy that imports the real pandas on first use, so its pandas helpers still work. If
pandas is already loaded, other threads run (one could import pandas meanwhile; the
command line's own listener threads import nothing and do not count), or anything in
this goes wrong, ``cp_model`` is imported as usual.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from typing import TYPE_CHECKING, Any

from hare_opt.util import stopping


class _Placeholders(types.ModuleType):
    """``pandas`` while ``cp_model`` imports: any attribute is an inert class."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = type(name, (), {"__module__": "pandas (not loaded)"})
        setattr(self, name, value)
        return value


class _LazyModule(types.ModuleType):
    """A module imported on first attribute access."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module(self.__name__), name)


#: hare-opt's own threads that import nothing (the signal listener, the progress line,
#: a child's lifeline): they cannot import pandas while the stand-in is in place.
QUIET_THREADS = ("hare-opt-signals", "hare-opt-progress", "hare-opt-lifeline")


def _import_cp_model() -> types.ModuleType:
    name = "ortools.sat.python.cp_model"
    others = [
        t
        for t in threading.enumerate()
        if t is not threading.current_thread() and t.name not in QUIET_THREADS
    ]
    if name in sys.modules or "pandas" in sys.modules or others:
        # Another thread could import pandas while the stand-in is in place: not here.
        return importlib.import_module(name)
    stand_in = _Placeholders("pandas")
    sys.modules["pandas"] = stand_in
    try:
        module: types.ModuleType | None = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - an OR-Tools that needs more: import it as usual
        module = None
    finally:
        if sys.modules.get("pandas") is stand_in:
            del sys.modules["pandas"]
    if module is None:
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    if getattr(module, "pd", None) is stand_in:
        module.pd = _LazyModule("pandas")  # type: ignore[attr-defined]
    return module


if TYPE_CHECKING:
    from ortools.sat.python import cp_model
else:
    cp_model = _import_cp_model()


def solve_stoppable(
    solver: Any, model: Any, stop: threading.Event | None, callback: Any = None
) -> Any:
    """``solver.solve(model, callback)``, ended by ``stop``. ``CpSolver.stop_search`` does
    nothing until ``solve`` has begun, so a stop that lands just before the search (a
    signal early in start-up) is repeated every 50 ms until the solve returns, not sent
    once and lost."""
    finished = threading.Event()

    def keep_stopping() -> None:
        while True:
            solver.stop_search()
            if finished.wait(0.05):
                return

    with stopping.on_stop(stop, keep_stopping, "stop-search"):
        try:
            return solver.solve(model, callback)
        finally:
            finished.set()


__all__ = ["cp_model", "solve_stoppable"]
