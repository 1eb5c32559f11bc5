"""One solve interface for every solver: exact backends and heuristics alike.

A solver is any callable ``(instance, *, time_limit, **options) -> Result``
registered under a name. ``solve`` looks it up, runs it and passes the schedule
through the independent checker, so no schedule leaves hare_opt unchecked.
"""

from __future__ import annotations

import importlib
import inspect
import time
from typing import Any, Protocol

from hare_opt.checker import check
from hare_opt.model import HareOptError, Instance, Result


class Solver(Protocol):
    def __call__(self, instance: Instance, *, time_limit: float | None = None,
                 **options: Any) -> Result: ...


class SolverError(HareOptError, RuntimeError):
    """A solver produced something wrong (a bug, never a user error)."""


class UnknownOptionError(HareOptError, ValueError):
    """An option the named solver does not take."""


class UnknownSolverError(HareOptError, ValueError):
    pass


# name -> "module:function", imported on first use so that heavy backends
# (OR-Tools, PuLP) load only when asked for.
_REGISTRY: dict[str, str] = {
    "cpsat": "hare_opt.solvers.cpsat:solve_cpsat",
    "milp": "hare_opt.solvers.milp:solve_milp",
    "portfolio": "hare_opt.solvers.portfolio:solve_portfolio",
    "bnb": "hare_opt.solvers.bnb:solve_bnb",
    "hare": "hare_opt.heuristics.hare:solve_hare",
    "hare-paper": "hare_opt.heuristics.hare_paper:solve_hare_paper",
    "geobatch": "hare_opt.heuristics.geobatch:solve_geobatch",
    "fifo": "hare_opt.heuristics.rules:solve_fifo",
    "wspt": "hare_opt.heuristics.rules:solve_wspt",
    "eft": "hare_opt.heuristics.rules:solve_eft",
}
EXACT_SOLVERS = ("cpsat", "milp", "portfolio", "bnb")


def register(name: str, target: str | Solver) -> None:
    """Add a solver: a ``"module:function"`` path or the callable itself."""
    _REGISTRY[name] = target  # type: ignore[assignment]


def solver_names() -> list[str]:
    return list(_REGISTRY)


def get_solver(name: str) -> Solver:
    target = _REGISTRY.get(name)
    if target is None:
        raise UnknownSolverError(f"solver {name!r} is unknown; choose one of "
                                 f"{', '.join(_REGISTRY)}")
    if not isinstance(target, str):
        return target
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)


def available_solvers() -> list[str]:
    """Names whose module imports here (a backend may be missing)."""
    out = []
    for name in _REGISTRY:
        try:
            get_solver(name)
        except (ImportError, AttributeError):
            continue
        out.append(name)
    return out


def solve(instance: Instance, solver: str = "hare", *, time_limit: float | None = None,
          verify: bool = True, **options: Any) -> Result:
    """Solve ``instance`` with the named solver and check the schedule it returns.

    With ``verify`` (the default; the checker is fast) a schedule that breaks a
    rule, or an objective that differs from the checker's, raises
    ``SolverError``: that is a bug in the solver, never a result.
    """
    fn = get_solver(solver)
    _check_options(solver, fn, options)
    t0 = time.perf_counter()
    result = fn(instance, time_limit=time_limit, **options)
    if not result.runtime_s:
        result.runtime_s = time.perf_counter() - t0
    result.instance = result.instance or instance.name
    result.solver = result.solver or solver
    if verify:
        verify_result(instance, result)
    return result


def _check_options(name: str, fn: Solver, options: dict[str, Any]) -> None:
    """An option the solver does not take is a named error, not a TypeError traceback
    (solvers with ``**params``, like cpsat, check theirs themselves)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a callable without a signature: let it decide
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    known = [p for p, v in params.items() if v.kind is inspect.Parameter.KEYWORD_ONLY
             and p != "time_limit"]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise UnknownOptionError(f"solver {name!r} has no option {unknown[0]!r}; its options: "
                                 f"{', '.join(known) or 'none'}")


def verify_result(instance: Instance, result: Result) -> None:
    if result.status in ("infeasible", "unknown"):
        if len(result.schedule):
            raise SolverError(f"{result.solver}: status {result.status} with a schedule")
        return
    report = check(instance, result.schedule, max_messages=5)
    if not report.feasible:
        raise SolverError(f"{result.solver} returned an infeasible schedule for "
                          f"{instance.name!r}: " + "; ".join(report.violations[:5]))
    if result.objective is None:
        result.objective = report.objective
    elif abs(result.objective - report.objective) > 1e-6 * max(1, abs(report.objective)):
        raise SolverError(f"{result.solver} claims objective {result.objective} but the "
                          f"schedule scores {report.objective}")
    if result.lower_bound is not None and result.lower_bound > result.objective + 1e-6:
        raise SolverError(f"{result.solver}: lower bound {result.lower_bound} exceeds "
                          f"objective {result.objective}")
    if result.status == "optimal" and result.lower_bound is None:
        result.lower_bound = result.objective


