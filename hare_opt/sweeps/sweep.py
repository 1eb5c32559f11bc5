"""Declarative experiment sweeps that resume after a crash.

A sweep is a TOML file: fixed parameters, a grid of parameters whose product
is taken, the seeds, and the name of a *cell function* registered in
``hare_opt.sweeps.cells``. Each cell (one point of the product) gets a
content-hash key; its result is one JSON file written atomically by the driver
with a checksum of its payload and the code version it was computed with
(``util.version``), so a rerun skips finished cells, and a half-written, corrupt,
foreign or stale (older code) file is detected and the cell redone.

Cells run in cell processes of their own group (``sweeps.worker``), here or on Dask
distributed (an existing scheduler, or a LocalCluster started for the run); both give
identical results because every cell is a pure function of its parameters and seed.
Interrupts, killed drivers and failed cells: ``executors``; the store: ``store``.
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
import sys
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from hare_opt.io import atomic_write_text
from hare_opt.io.json_io import endless
from hare_opt.io.output import OutputError, destination, plain_name, writable
from hare_opt.sweeps import executors
from hare_opt.sweeps.cells import CELLS, Cell, get_cell_fn
from hare_opt.sweeps.store import Store
from hare_opt.util import interrupt

SweepError = executors.SweepError


class CellsFailed(SweepError):
    """Some cells raised; the others were saved. ``failures``: (cell, error text)."""

    def __init__(self, failures: list[executors.Failure], total: int):
        self.failures = failures
        first = failures[0]
        super().__init__(
            f"{len(failures)} of {total} cells failed (nothing saved for them); "
            f"first: cell {first.cell.key} {first.cell.fn} "
            f"{json.dumps(first.cell.params, default=str)[:200]}: "
            f"{first.error[:300]}"
        )


def _solver_value(value: Any) -> str | None:
    from hare_opt.solvers import solver_names

    if not isinstance(value, str):
        return f"must be a solver name, got {value!r}"
    base = value.split(":", 1)[0]
    # ``paper`` (fig1: the paper's schedules) and ``reference`` (quality: the exact
    # solver's OPT) are the cell functions' own values
    if base not in ("paper", "reference") and base not in solver_names():
        return f"unknown solver {base!r}; choose one of {', '.join(solver_names())}"
    return None


def _value_problem(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be the parameter ``name`` of any cell, or None. The names
    the cell functions share (``solver``, ``solvers``, ``policy``, ``time_limit``,
    ``cluster``) are checked here, so that a typo fails before any cell runs."""
    import math

    if name == "solver":
        return _solver_value(value)
    if name == "solvers":
        if not isinstance(value, list) or not value:
            return f"must be a non-empty list of solver names, got {value!r}"
        return next((why for v in value if (why := _solver_value(v))), None)
    if name == "policy":
        from hare_opt.sim.policy import policy_names

        if not isinstance(value, str):
            return f"must be a policy name, got {value!r}"
        base = value.split(":", 1)[0]
        if base not in policy_names():
            return f"unknown policy {base!r}; choose one of {', '.join(policy_names())}"
    if (
        name == "time_limit"
        and value is not None
        and (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value <= 0
        )
    ):
        return f"must be a number of seconds > 0, got {value!r}"
    if name == "cluster":
        from hare_opt.generators.clusters import parse_cluster
        from hare_opt.model import HareOptError

        if not isinstance(value, str):
            return f"must be a cluster spec such as 'V100:8,T4:4', got {value!r}"
        try:
            parse_cluster(value)
        except (HareOptError, ValueError) as exc:
            return str(exc).removeprefix("field 'cluster': ")
    return None


def check_values(fixed: dict[str, Any], grid: dict[str, list[Any]], owner: str) -> None:
    """Refuse, before any work, a value no cell can take (``_value_problem``)."""
    for name, values in [*((k, [v]) for k, v in fixed.items()), *grid.items()]:
        for value in values:
            why = _value_problem(name, value)
            if why:
                where = "fixed" if name in fixed else "grid"
                raise SweepError(f"{owner}: [{where}] field {name!r}: {why}")


def check_params(fn: str, params: dict[str, Any], owner: str = "sweep") -> None:
    """Refuse, before any work, parameters the cell function cannot take."""
    target = get_cell_fn(fn)
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    known = {
        n for n, p in sig.parameters.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }
    missing = [
        n
        for n, p in sig.parameters.items()
        if n in known and p.default is p.empty and n not in params
    ]
    if missing:
        raise SweepError(
            f"{owner}: cell function {fn!r} needs parameter(s) "
            f"{', '.join(missing)} (give them in [fixed] or [grid])"
        )
    unknown = sorted(set(params) - known)
    if unknown and not takes_any:
        raise SweepError(
            f"{owner}: cell function {fn!r} takes no parameter(s) "
            f"{', '.join(unknown)}; it takes {', '.join(sorted(known))}"
        )


@dataclass
class Sweep:
    """A parsed sweep config: ``fn`` over ``grid`` x ``seeds`` with ``fixed`` parameters."""

    name: str
    fn: str
    fixed: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=lambda: [0])
    #: The config file it was loaded from (``load``): never overwritten by its results.
    source: Path | None = field(default=None, compare=False)

    def cells(self) -> list[Cell]:
        keys = list(self.grid)
        out = []
        for combo in itertools.product(*(self.grid[k] for k in keys)):
            for seed in self.seeds:
                params = {**self.fixed, **dict(zip(keys, combo)), "seed": seed}
                out.append(Cell(self.fn, params))
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], name: str = "sweep") -> Sweep:
        unknown = set(data) - {"name", "fn", "fixed", "grid", "seeds"}
        if unknown:
            raise SweepError(f"sweep {name!r}: unknown key(s) {sorted(unknown)}")
        if "fn" not in data:
            raise SweepError(f"sweep {name!r}: field 'fn' is missing")
        if not isinstance(data["fn"], str) or data["fn"] not in CELLS:
            raise SweepError(
                f"sweep {name!r}: field 'fn': unknown cell function "
                f"{data['fn']!r}; choose one of {', '.join(CELLS.names())}"
            )
        for key in ("fixed", "grid"):
            if not isinstance(data.get(key, {}), dict):
                raise SweepError(f"sweep {name!r}: [{key}] must be a table")
        grid = data.get("grid", {})
        for k, v in grid.items():
            if not isinstance(v, list) or not v:
                raise SweepError(f"sweep {name!r}: grid field {k!r} must be a non-empty list")
        seeds = data.get("seeds", [0])
        if isinstance(seeds, bool) or not isinstance(seeds, (int, list)):
            raise SweepError(
                f"sweep {name!r}: field 'seeds' must be a count or a list of seeds, got {seeds!r}"
            )
        if isinstance(seeds, int):
            if not 1 <= seeds <= 10**6:
                raise SweepError(
                    f"sweep {name!r}: field 'seeds' must count 1 to 1000000 seeds, got {seeds}"
                )
            seeds = list(range(seeds))
        if not seeds or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds
        ):
            raise SweepError(
                f"sweep {name!r}: field 'seeds' must list integers >= 0, got {seeds!r}"
            )
        try:  # it names the CSV and the cell folder inside --out-dir: a plain file name
            own = plain_name(data.get("name", name), f"sweep {name!r}: field 'name'")
        except OutputError as exc:
            raise SweepError(str(exc)) from None
        sweep = cls(own, data["fn"], dict(data.get("fixed", {})), dict(grid), list(seeds))
        if "seed" in sweep.fixed or "seed" in sweep.grid:
            raise SweepError(f"sweep {name!r}: 'seed' is set by field 'seeds'")
        check_params(sweep.fn, {**sweep.fixed, **sweep.grid, "seed": 0}, f"sweep {name!r}")
        check_values(sweep.fixed, sweep.grid, f"sweep {name!r}")
        return sweep

    @classmethod
    def load(cls, path: str | Path) -> Sweep:
        why = endless(path)
        if why:
            raise SweepError(f"{path}: {why}")
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SweepError(f"{path}: {exc}") from None
        sweep = cls.from_dict(data, Path(path).stem)
        sweep.source = Path(path)
        return sweep


# --- execution ------------------------------------------------------------------


def _progress(total: float, desc: str, enabled: bool) -> Any:
    """A bar in estimated CPU seconds (its ETA then weighs cells by their cost)."""
    from tqdm import tqdm

    return tqdm(
        total=round(total, 1),
        desc=desc,
        unit="s",
        disable=not enabled,
        dynamic_ncols=True,
        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} estimated "
        "CPU s [{elapsed}<{remaining}]{postfix}",
    )


def run_cells(
    cells: Iterable[Cell],
    store: Store,
    *,
    executor: str = "local",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
    desc: str = "sweep",
    cost: Callable[[Cell], float] | None = None,
) -> pd.DataFrame:
    """Run every cell not current in ``store``; return the rows of all of them (old and
    new, each listed cell with its own labels) as a DataFrame.

    Results are written by this process as each cell finishes, so an interrupt or a
    crashed cell process loses only the cells still running. Ctrl-C or SIGTERM stops
    the run (``KeyboardInterrupt`` after the cell processes are gone); cells that raise
    are reported together in ``CellsFailed`` once the others are done. ``cost``: a
    cell's estimated CPU seconds (``sweeps.preview``), for the order and the progress bar.
    """
    if executor not in ("local", "dask"):
        raise SweepError(f"executor must be 'local' or 'dask', got {executor!r}")
    if workers is not None and not (isinstance(workers, int) and workers >= 1):
        raise SweepError(f"workers must be an integer >= 1, got {workers!r}")
    executors.check_address(executor, address, reach=False)  # the CLI also probes it
    cells = list(cells)
    unique = list({c.key: c for c in cells}.values())  # a cell listed twice runs once
    for fn, params in {(c.fn, tuple(sorted(c.params))): c.params for c in unique}.items():
        check_params(fn[0], params)
    todo = [c for c in unique if not store.state(c).current]
    estimate = cost or (lambda c: 1.0)
    bar = _progress(sum(estimate(c) for c in todo), desc, progress and bool(todo))
    collect = executors.Collect(store, bar, estimate)
    try:
        with interrupt.library_edge(collect.stop):
            if todo and executor == "dask":
                executors.run_dask(todo, collect, workers, address)
            elif todo:
                executors.run_local(todo, collect, workers)
    except KeyboardInterrupt:
        bar.close()
        saved = sum(store.state(c).current for c in unique)
        print(
            f"{desc}: stopped; {saved} of {len(unique)} cells saved in {store.root}; run "
            "the same command again to resume",
            file=sys.stderr,
        )
        raise
    finally:
        bar.close()
    if collect.failures:
        raise CellsFailed(collect.failures, len(unique))
    rows: list[dict[str, Any]] = []
    for c in cells:
        got = store.load(c)
        if got is None:
            raise SweepError(f"cell {c.key} ({c.params}) has no result after the run")
        rows.extend({**c.params, **c.labels, **r, "cell": c.key} for r in got)
    return pd.DataFrame(rows)


def results_path(sweep: Sweep, out_dir: str | Path) -> Path:
    """``out_dir/<name>.csv``, refused (``SweepError``) before any work when it is not a
    writable output (``hare_opt.io.output``) or is the sweep's own config file."""
    csv = Path(out_dir) / f"{plain_name(sweep.name, 'sweep field name')}.csv"
    try:
        dest = destination(csv)
        writable(dest, str(csv))
    except OutputError as exc:
        raise SweepError(f"sweep {sweep.name!r}: results file {exc}") from None
    src = sweep.source
    if src is not None and (
        os.path.realpath(csv) == os.path.realpath(src)
        or (csv.exists() and os.path.samefile(csv, src))
    ):
        raise SweepError(
            f"sweep {sweep.name!r}: field 'name' makes the results file {csv} "
            "the config file itself; rename the sweep or use another --out-dir"
        )
    return csv


def run_sweep(sweep: Sweep, out_dir: str | Path, **kwargs: Any) -> pd.DataFrame:
    """Run a sweep into ``out_dir/cells`` and write ``out_dir/<name>.csv``."""
    out = Path(out_dir)
    csv = results_path(sweep, out)
    df = run_cells(sweep.cells(), Store(out / "cells" / sweep.name), desc=sweep.name, **kwargs)
    atomic_write_text(csv, csv_text(df))
    return df


def csv_text(df: pd.DataFrame) -> str:
    """``df`` as CSV, a list or mapping in a cell (a parameter such as ``solvers``) as JSON
    (``["hare", "wspt"]``, which ``json.loads`` reads back), not as Python's repr."""

    def cell(value: Any) -> Any:
        return json.dumps(value) if isinstance(value, (list, tuple, dict)) else value

    out = df.copy()
    for col in [c for c in out.columns if out[c].dtype == object]:  # (a str column holds none)
        out[col] = out[col].map(cell)
    return out.to_csv(index=False)
