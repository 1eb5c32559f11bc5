"""Cell functions: the units of work a sweep runs (pure functions of their parameters).

A cell function takes JSON-able keyword arguments (including ``seed``) and
returns a list of flat dict rows. Register new ones in ``CELLS`` as
``"module:function"`` so Dask workers can import them by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from hare_opt.model import HareOptError

CELLS: dict[str, str] = {
    "solve-random": "hare_opt.experiments.cells:solve_random",
    "arith": "hare_opt.experiments.cells:arith",
}


def get_cell_fn(name: str) -> Callable[..., list[dict[str, Any]]]:
    target = CELLS.get(name)
    if target is None:
        raise HareOptError(f"unknown cell function {name!r}; known: {', '.join(CELLS)}")
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)


def arith(*, seed: int, n: int = 1000, fail_seed: int | None = None,
          sleep: float = 0.0) -> list[dict[str, Any]]:
    """A cheap deterministic cell used to test the sweep machinery itself."""
    if sleep:
        import time

        time.sleep(sleep)
    if fail_seed is not None and seed == fail_seed:
        raise RuntimeError(f"cell with seed {seed} fails on purpose")
    import numpy as np

    x = np.random.default_rng(seed).integers(0, 100, size=n)
    return [{"sum": int(x.sum()), "max": int(x.max())}]


def solve_random(*, seed: int, solvers: list[str], n_jobs: int = 4, n_gpus: int = 3,
                 time_limit: float | None = None, **gen: Any) -> list[dict[str, Any]]:
    """Generate a random instance and solve it with each solver: one row per solver."""
    from hare_opt.generators import random_instance
    from hare_opt.solvers import solve

    inst = random_instance(seed, n_jobs=n_jobs, n_gpus=n_gpus, **gen)
    rows = []
    for name in solvers:
        res = solve(inst, name, time_limit=time_limit)
        rows.append({"solver": name, "status": res.status, "objective": res.objective,
                     "lower_bound": res.lower_bound, "runtime_s": res.runtime_s,
                     "tasks": inst.num_tasks})
    return rows
