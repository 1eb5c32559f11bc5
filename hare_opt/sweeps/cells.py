"""Cells: the units of work a sweep runs, and the registry of the functions they call.

A cell function takes JSON-able keyword arguments (including ``seed``) and returns a
list of flat dict rows; it must be a pure function of them (the store reuses its rows
while the code it loaded is unchanged: ``util.version``). Register one with
``register_cell(name, "module:function")``: cells run in their own processes
(``sweeps.worker``), which import it by name.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hare_opt.model import HareOptError
from hare_opt.util.registry import Registry, resolve


class UnknownCellError(HareOptError, ValueError):
    pass


@dataclass(frozen=True)
class CellSpec:
    """A cell function: ``target`` is ``"module:function"``. ``group``: the parameter
    whose value gets a process of its own (``simulate``: ``policy``), so that a cell is
    keyed on its own code only; ``measured``: row fields that are measurements of the
    machine (wall times), left out when a cell is recomputed and compared; ``size``: the
    parameter its cost grows with as a power (``sweeps.preview`` scales estimates by it;
    solves bounded by work limits have none)."""

    name: str
    target: str
    group: str | None = None
    measured: tuple[str, ...] = ()
    description: str = ""
    size: str | None = None


CELLS: Registry[CellSpec] = Registry("cell function", UnknownCellError)
for _spec in (
    CellSpec(
        "solve-random",
        "hare_opt.sweeps.cells:solve_random",
        group="solver",
        measured=("runtime_s",),
        description="a random instance, one solver",
    ),
    CellSpec(
        "arith",
        "hare_opt.sweeps.cells:arith",
        description="a cheap deterministic cell that tests the machinery itself",
    ),
    CellSpec(
        "simulate",
        "hare_opt.sweeps.simulate:simulate_cell",
        group="policy",
        measured=("wall_s", "plan_cpu_s_mean"),
        size="n_jobs",
        description="one policy on one paper-like workload",
    ),
    CellSpec(
        "fig1",
        "hare_opt.sweeps.offline:fig1_cell",
        group="solver",
        description="the Fig. 1 toy: the paper's schedules, or one exact solver",
    ),
    CellSpec(
        "quality",
        "hare_opt.sweeps.offline:quality_cell",
        group="solver",
        measured=("runtime_s",),
        description="one solver on one random instance",
    ),
    CellSpec(
        "bounds",
        "hare_opt.sweeps.offline:bounds_cell",
        group="part",
        description="one part of the bound verification on one random instance",
    ),
    CellSpec(
        "runtime",
        "hare_opt.sweeps.offline:runtime_cell",
        group="solver",
        measured=("seconds", "load_s"),
        description="one solver's wall time",
    ),
):
    CELLS.add(_spec)


def register_cell(name: str, target: str, **spec: Any) -> CellSpec:
    """Add a cell function by ``"module:function"`` (its process imports it by name)."""
    if not isinstance(target, str) or ":" not in target:
        raise UnknownCellError(
            f"cell function {name!r}: target must be 'module:function', got {target!r}"
        )
    return CELLS.add(CellSpec(name, target, **spec))


def get_cell_fn(name: str) -> Any:
    return CELLS.load(name)


def signature_defaults(fn: str) -> dict[str, Any]:
    """The cell function's keyword defaults (read from its signature)."""
    sig = inspect.signature(resolve(CELLS.spec(fn).target))
    return {
        k: p.default for k, p in sig.parameters.items() if p.default is not inspect.Parameter.empty
    }


@dataclass(frozen=True, eq=False)
class Cell:
    """One unit of work: a cell function and its JSON-able parameters (the key), plus
    ``labels`` that name it in one item's rows (not part of the key: two items that list
    the same simulation under other names share its cell)."""

    fn: str
    params: dict[str, Any]
    labels: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        blob = json.dumps({"fn": self.fn, "params": self.params}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    @property
    def group(self) -> str:
        """Cells of one group share a process (``CellSpec.group``)."""
        param = CELLS.spec(self.fn).group
        return self.fn if param is None else f"{self.fn}:{self.params.get(param)}"

    def canonical(self) -> Cell:
        """The same cell with parameters equal to the function's defaults left out, so
        that a default given or left out is one cell."""
        defaults = signature_defaults(self.fn)
        kept = {
            k: v
            for k, v in self.params.items()
            if not (k in defaults and defaults[k] == v and k != "seed")
        }
        return Cell(self.fn, kept, self.labels)


def arith(
    *, seed: int, n: int = 1000, fail_seed: int | None = None, sleep: float = 0.0
) -> list[dict[str, Any]]:
    """A cheap deterministic cell used to test the sweep machinery itself."""
    import numpy as np

    if sleep:
        time.sleep(sleep)
    if fail_seed is not None and seed == fail_seed:
        raise RuntimeError(f"cell with seed {seed} fails on purpose")
    x = np.random.default_rng(seed).integers(0, 100, size=n)
    return [{"sum": int(x.sum()), "max": int(x.max())}]


def solve_random(
    *,
    seed: int,
    solver: str,
    n_jobs: int = 4,
    n_gpus: int = 3,
    time_limit: float | None = None,
    **gen: Any,
) -> list[dict[str, Any]]:
    """Generate a random instance and solve it with ``solver``: one row."""
    from hare_opt.generators import random_instance
    from hare_opt.solvers import solve

    inst = random_instance(seed, n_jobs=n_jobs, n_gpus=n_gpus, **gen)
    res = solve(inst, solver, time_limit=time_limit)
    return [
        {
            "solver": solver,
            "status": res.status,
            "objective": res.objective,
            "lower_bound": res.lower_bound,
            "runtime_s": res.runtime_s,
            "tasks": inst.num_tasks,
        }
    ]
