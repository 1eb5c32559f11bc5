"""Declarative experiment sweeps that resume after a crash.

A sweep is a TOML file: fixed parameters, a grid of parameters whose product
is taken, the seeds, and the name of a *cell function* registered in
``hare_opt.sweeps.cells``. Each cell (one point of the product) gets a
content-hash key; its result is one JSON file written atomically by the driver
with a checksum of its payload, so a rerun skips finished cells, and a
half-written, corrupt or foreign file is detected and the cell redone.

Cells run in a local process pool (default) or on Dask distributed (an existing
scheduler, or a LocalCluster started for the run); both give identical results
because every cell is a pure function of its parameters and seed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
import tomllib
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from hare_opt.io import atomic_write_text
from hare_opt.model import HareOptError
from hare_opt.sweeps.cells import get_cell_fn

FORMAT = "hare-opt/cell@1"


class SweepError(HareOptError, ValueError):
    pass


@dataclass(frozen=True, eq=False)
class Cell:
    """One unit of work: a cell function name and its JSON-able parameters."""

    fn: str
    params: dict[str, Any]

    @property
    def key(self) -> str:
        blob = json.dumps({"fn": self.fn, "params": self.params}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]


@dataclass
class Sweep:
    """A parsed sweep config: ``fn`` over ``grid`` x ``seeds`` with ``fixed`` parameters."""

    name: str
    fn: str
    fixed: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=lambda: [0])

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
        grid = data.get("grid", {})
        for k, v in grid.items():
            if not isinstance(v, list) or not v:
                raise SweepError(f"sweep {name!r}: grid field {k!r} must be a non-empty list")
        seeds = data.get("seeds", [0])
        if isinstance(seeds, int):
            seeds = list(range(seeds))
        return cls(data.get("name", name), data["fn"], dict(data.get("fixed", {})), dict(grid),
                   list(seeds))

    @classmethod
    def load(cls, path: str | Path) -> Sweep:
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SweepError(f"{path}: {exc}") from None
        return cls.from_dict(data, Path(path).stem)


# --- the result store ---------------------------------------------------------

def _checksum(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class Store:
    """One JSON file per finished cell under ``root``; the file is the proof it finished."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, cell: Cell) -> Path:
        return self.root / f"{cell.key}.json"

    def load(self, cell: Cell) -> list[dict[str, Any]] | None:
        """The cell's rows, or None when absent, partial, corrupt or for another cell."""
        p = self.path(cell)
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
            payload = doc["payload"]
            if (doc.get("format") != FORMAT or doc.get("checksum") != _checksum(payload)
                    or payload.get("key") != cell.key):
                return None
            return payload["rows"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def save(self, cell: Cell, rows: list[dict[str, Any]], runtime_s: float) -> None:
        payload = {"key": cell.key, "fn": cell.fn, "params": cell.params, "rows": rows,
                   "runtime_s": runtime_s}
        doc = {"format": FORMAT, "checksum": _checksum(payload), "payload": payload}
        atomic_write_text(self.path(cell), json.dumps(doc, sort_keys=True, default=str))


# --- execution ------------------------------------------------------------------

def run_cell(cell: Cell) -> tuple[list[dict[str, Any]], float]:
    """Run one cell (in a worker); returns its rows and wall time."""
    t0 = time.perf_counter()
    rows = get_cell_fn(cell.fn)(**cell.params)
    return rows, time.perf_counter() - t0


def _progress(total: int, initial: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit="cell", disable=not enabled,
                dynamic_ncols=True)


def run_cells(cells: Iterable[Cell], store: Store, *, executor: str = "local",
              workers: int | None = None, address: str | None = None, progress: bool = True,
              desc: str = "sweep", runner: Callable[[Cell], Any] = run_cell) -> pd.DataFrame:
    """Run every cell not already in ``store``; return all rows (old and new) as a DataFrame.

    Results are written by this process as each cell finishes, so an interrupt
    or a crashed worker loses only the cells still running.
    """
    cells = list({c.key: c for c in cells}.values())  # a cell listed twice runs once
    todo = [c for c in cells if store.load(c) is None]
    bar = _progress(len(cells), len(cells) - len(todo), desc, progress)
    try:
        if todo:
            if executor == "local":
                _run_local(todo, store, workers, bar, runner)
            elif executor == "dask":
                _run_dask(todo, store, workers, address, bar, runner)
            else:
                raise SweepError(f"executor must be 'local' or 'dask', got {executor!r}")
    finally:
        bar.close()
    rows = []
    for c in cells:
        got = store.load(c)
        if got is None:
            raise SweepError(f"cell {c.key} ({c.params}) has no result after the run")
        rows.extend({**c.params, **r, "cell": c.key} for r in got)
    return pd.DataFrame(rows)


def _run_local(todo: list[Cell], store: Store, workers: int | None, bar, runner) -> None:
    if workers == 1:
        for c in todo:
            rows, dt = runner(c)
            store.save(c, rows, dt)
            bar.update()
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(runner, c): c for c in todo}
        for fut in as_completed(futures):
            rows, dt = fut.result()
            store.save(futures[fut], rows, dt)
            bar.update()


def _run_dask(todo: list[Cell], store: Store, workers: int | None, address: str | None, bar,
              runner) -> None:
    try:
        from dask.distributed import Client, LocalCluster
        from dask.distributed import as_completed as dask_completed
    except ImportError:
        raise SweepError("the dask executor needs `pip install hare-opt[dask]`") from None
    cluster = None
    if address:
        client = Client(address)
    else:
        cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
    try:
        futures = {client.submit(runner, c, pure=False): c for c in todo}
        for fut in dask_completed(list(futures)):
            rows, dt = fut.result()
            store.save(futures[fut], rows, dt)
            bar.update()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_sweep(sweep: Sweep, out_dir: str | Path, **kwargs: Any) -> pd.DataFrame:
    """Run a sweep into ``out_dir/cells`` and write ``out_dir/<name>.csv``."""
    out = Path(out_dir)
    df = run_cells(sweep.cells(), Store(out / "cells" / sweep.name), desc=sweep.name, **kwargs)
    atomic_write_text(out / f"{sweep.name}.csv", df.to_csv(index=False))
    return df
