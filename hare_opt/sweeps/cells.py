"""Cell functions: the units of work a sweep runs (pure functions of their parameters).

A cell function takes JSON-able keyword arguments (including ``seed``) and
returns a list of flat dict rows. Register new ones with ``register_cell(name,
"module:function")`` so Dask workers can import them by name.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hare_opt.generators import (
    random_instance,
)
from hare_opt.model import HareOptError
from hare_opt.solvers import solve
from hare_opt.util.registry import Registry


class UnknownCellError(HareOptError, ValueError):
    pass


@dataclass(frozen=True)
class CellSpec:
    """A cell function by name; ``target`` is ``"module:function"`` so that Dask workers
    import it by name."""

    name: str
    target: str | Callable[..., list[dict[str, Any]]]


CELLS: Registry[CellSpec] = Registry("cell function", UnknownCellError)
for _name, _target in (("solve-random", "hare_opt.sweeps.cells:solve_random"),
                       ("arith", "hare_opt.sweeps.cells:arith"),
                       ("simulate", "hare_opt.sim.experiment:simulate_paper"),
                       ("fig1", "hare_opt.sweeps.offline:fig1_cell"),
                       ("quality", "hare_opt.sweeps.offline:quality_cell"),
                       ("bounds", "hare_opt.sweeps.offline:bounds_cell"),
                       ("runtime", "hare_opt.sweeps.offline:runtime_cell")):
    CELLS.add(CellSpec(_name, _target))


def register_cell(name: str, target: str | Callable[..., list[dict[str, Any]]]) -> None:
    CELLS.add(CellSpec(name, target))


def get_cell_fn(name: str) -> Callable[..., list[dict[str, Any]]]:
    return CELLS.load(name)


def arith(*, seed: int, n: int = 1000, fail_seed: int | None = None,
          sleep: float = 0.0) -> list[dict[str, Any]]:
    """A cheap deterministic cell used to test the sweep machinery itself."""
    if sleep:
        time.sleep(sleep)
    if fail_seed is not None and seed == fail_seed:
        raise RuntimeError(f"cell with seed {seed} fails on purpose")

    x = np.random.default_rng(seed).integers(0, 100, size=n)
    return [{"sum": int(x.sum()), "max": int(x.max())}]


def solve_random(*, seed: int, solvers: list[str], n_jobs: int = 4, n_gpus: int = 3,
                 time_limit: float | None = None, **gen: Any) -> list[dict[str, Any]]:
    """Generate a random instance and solve it with each solver: one row per solver."""

    inst = random_instance(seed, n_jobs=n_jobs, n_gpus=n_gpus, **gen)
    rows = []
    for name in solvers:
        res = solve(inst, name, time_limit=time_limit)
        rows.append({"solver": name, "status": res.status, "objective": res.objective,
                     "lower_bound": res.lower_bound, "runtime_s": res.runtime_s,
                     "tasks": inst.num_tasks})
    return rows


def simulate_paper(**params: Any) -> list[dict[str, Any]]:
    """``hare_opt.sim.experiment.simulate_paper`` (the ``simulate`` cell), kept here for
    callers that import it from the sweeps."""
    from hare_opt.sim.experiment import simulate_paper as run

    return run(**params)
