"""Declarative experiment sweeps that resume after a crash.

A sweep is a TOML file: fixed parameters, a grid of parameters whose product
is taken, the seeds, and the name of a *cell function* registered in
``hare_opt.sweeps.cells``. Each cell (one point of the product) gets a
content-hash key; its result is one JSON file written atomically by the driver
with a checksum of its payload and the code version it was computed with
(``util.version``), so a rerun skips finished cells, and a half-written, corrupt,
foreign or stale (older code) file is detected and the cell redone.

Cells run in a local process pool (default) or on Dask distributed (an existing
scheduler, or a LocalCluster started for the run); both give identical results
because every cell is a pure function of its parameters and seed. Interrupts,
killed drivers and failed cells: ``executors``.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import os
import sys
import time
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from hare_opt.io import atomic_write_text
from hare_opt.io.json_io import endless
from hare_opt.sweeps import executors
from hare_opt.sweeps.cells import CELLS, get_cell_fn
from hare_opt.util import interrupt
from hare_opt.util.version import closure, code_version, loaded_modules, modules_version

FORMAT = "hare-opt/cell@1"


SweepError = executors.SweepError


class CellsFailed(SweepError):
    """Some cells raised; the others were saved. ``failures``: (cell, error text)."""

    def __init__(self, failures: list[executors.Failure], total: int):
        self.failures = failures
        first = failures[0]
        super().__init__(f"{len(failures)} of {total} cells failed (nothing saved for them); "
                         f"first: cell {first.cell.key} {first.cell.fn} "
                         f"{json.dumps(first.cell.params, default=str)[:200]}: "
                         f"{first.error[:300]}")


def check_params(fn: str, params: dict[str, Any], owner: str = "sweep") -> None:
    """Refuse, before any work, parameters the cell function cannot take."""
    target = get_cell_fn(fn)
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    known = {n for n, p in sig.parameters.items()
             if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    missing = [n for n, p in sig.parameters.items() if n in known
               and p.default is p.empty and n not in params]
    if missing:
        raise SweepError(f"{owner}: cell function {fn!r} needs parameter(s) "
                         f"{', '.join(missing)} (give them in [fixed] or [grid])")
    unknown = sorted(set(params) - known)
    if unknown and not takes_any:
        raise SweepError(f"{owner}: cell function {fn!r} takes no parameter(s) "
                         f"{', '.join(unknown)}; it takes {', '.join(sorted(known))}")


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
        if not isinstance(data["fn"], str) or data["fn"] not in CELLS:
            raise SweepError(f"sweep {name!r}: field 'fn': unknown cell function "
                             f"{data['fn']!r}; choose one of {', '.join(CELLS.names())}")
        for key in ("fixed", "grid"):
            if not isinstance(data.get(key, {}), dict):
                raise SweepError(f"sweep {name!r}: [{key}] must be a table")
        grid = data.get("grid", {})
        for k, v in grid.items():
            if not isinstance(v, list) or not v:
                raise SweepError(f"sweep {name!r}: grid field {k!r} must be a non-empty list")
        seeds = data.get("seeds", [0])
        if isinstance(seeds, bool) or not isinstance(seeds, (int, list)):
            raise SweepError(f"sweep {name!r}: field 'seeds' must be a count or a list of "
                             f"seeds, got {seeds!r}")
        if isinstance(seeds, int):
            if not 1 <= seeds <= 10**6:
                raise SweepError(f"sweep {name!r}: field 'seeds' must count 1 to 1000000 "
                                 f"seeds, got {seeds}")
            seeds = list(range(seeds))
        if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                for s in seeds):
            raise SweepError(f"sweep {name!r}: field 'seeds' must list integers >= 0, "
                             f"got {seeds!r}")
        sweep = cls(data.get("name", name), data["fn"], dict(data.get("fixed", {})),
                    dict(grid), list(seeds))
        if "seed" in sweep.fixed or "seed" in sweep.grid:
            raise SweepError(f"sweep {name!r}: 'seed' is set by field 'seeds'")
        check_params(sweep.fn, {**sweep.fixed, **sweep.grid, "seed": 0}, f"sweep {name!r}")
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
        return cls.from_dict(data, Path(path).stem)


# --- the result store ---------------------------------------------------------

def _checksum(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _forced() -> str | None:
    """``HARE_OPT_CODE_VERSION``: a version forced on purpose (``util.version``)."""
    return os.environ.get("HARE_OPT_CODE_VERSION") or None


def _cell_module(fn: str) -> str | None:
    """The package module that defines cell function ``fn``, or None (outside it)."""
    target = CELLS.spec(fn).target
    module = target.partition(":")[0] if isinstance(target, str) else \
        getattr(target, "__module__", "")
    return module if module.startswith("hare_opt.") else None


def cell_version(fn: str) -> str:
    """The code version of cells of ``fn``: the closure of the module that defines it
    (``util.version``), so changes to code it cannot run do not make it stale; a cell
    function outside the package is keyed on the whole package."""
    return code_version(_cell_module(fn))


@cache
def _cell_closure(fn: str) -> frozenset[str] | None:
    module = _cell_module(fn)
    return None if module is None else frozenset(closure(module))


def keyed_modules(fn: str, loaded: Iterable[str]) -> list[str]:
    """What a cell of ``fn`` is keyed on: the modules it had loaded that its function's
    closure contains. Both bound the code it ran: the closure holds all it can import
    (a pool worker also holds the driver's command line and reports, which it never
    runs), and the loaded ones exclude what it never imported (say the CBC backend)."""
    reach = _cell_closure(fn)
    return sorted(m for m in loaded if reach is None or m in reach)


class Store:
    """One JSON file per finished cell under ``root``; the file is the proof it finished.

    ``version``: the code version results must carry (default: per cell function, its
    ``cell_version``); a file made by other code is stale and its cell is redone."""

    def __init__(self, root: str | Path, version: str | None = None):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.fixed_version = version

    def version(self, cell: Cell) -> str:
        return self.fixed_version or _forced() or cell_version(cell.fn)

    def versions(self, cells: Iterable[Cell]) -> dict[str, str]:
        """By cell function, the package versions (``code_version()``, the hash of all the
        package's source) its stored cells were computed at, or its closure's version
        for cells stored without one: one value when a run came from one code version."""
        found: dict[str, set[str]] = {}
        for c in cells:
            try:
                payload = json.loads(self.path(c).read_text(encoding="utf-8"))["payload"]
                found.setdefault(c.fn, set()).add(str(payload["package"]))
            except (OSError, ValueError, KeyError, TypeError):
                found.setdefault(c.fn, set()).add(self.version(c))
        return {fn: "/".join(sorted(v)) for fn, v in found.items()}

    def path(self, cell: Cell) -> Path:
        return self.root / f"{cell.key}.json"

    def load(self, cell: Cell) -> list[dict[str, Any]] | None:
        """The cell's rows, or None when absent, partial, corrupt or for another cell."""
        p = self.path(cell)
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
            payload = doc["payload"]
            if (doc.get("format") != FORMAT or doc.get("checksum") != _checksum(payload)
                    or payload.get("key") != cell.key
                    or payload.get("code") != self._expected(cell, payload)):
                return None
            return payload["rows"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def _expected(self, cell: Cell, payload: dict[str, Any]) -> str:
        """The code version a stored cell must carry to be fresh: of the modules it
        loaded when it has their list, else of its function's closure."""
        modules = payload.get("modules")
        if self.fixed_version or not isinstance(modules, list) or _forced():
            return self.version(cell)
        return modules_version(tuple(str(m) for m in modules))

    def save(self, cell: Cell, rows: list[dict[str, Any]], runtime_s: float,
             cpu_s: float | None = None, modules: list[str] | None = None) -> None:
        """Store a finished cell; ``modules``: what its process had loaded (``run_cell``),
        which then keys it instead of its function's closure (``util.version``)."""
        payload: dict[str, Any] = {"key": cell.key, "fn": cell.fn, "params": cell.params,
                                   "rows": rows, "runtime_s": runtime_s,
                                   "package": code_version()}
        if modules and not self.fixed_version and not _forced():
            payload["modules"] = keyed_modules(cell.fn, modules)
            payload["code"] = modules_version(tuple(payload["modules"]))
        else:
            payload["code"] = self.version(cell)
        if cpu_s is not None:
            payload["cpu_s"] = cpu_s
        doc = {"format": FORMAT, "checksum": _checksum(payload), "payload": payload}
        atomic_write_text(self.path(cell), json.dumps(doc, sort_keys=True, default=str))

    def cost(self, cell: Cell) -> tuple[float, float] | None:
        """(wall s, CPU s) the stored cell took to compute (CPU: nan if not recorded)."""
        try:
            payload = json.loads(self.path(cell).read_text(encoding="utf-8"))["payload"]
            return float(payload["runtime_s"]), float(payload.get("cpu_s", math.nan))
        except (OSError, ValueError, KeyError, TypeError):
            return None


# --- execution ------------------------------------------------------------------

def run_cell(cell: Cell) -> tuple[list[dict[str, Any]], float, float, list[str]]:
    """Run one cell (in a worker); returns its rows, wall time, CPU time (this process's:
    a cell runs in one process and starts none that compute) and the package's modules
    loaded by then (the cell's code key)."""
    t0, c0 = time.perf_counter(), time.process_time()
    rows = get_cell_fn(cell.fn)(**cell.params)
    return rows, time.perf_counter() - t0, time.process_time() - c0, loaded_modules()


def _progress(total: int, initial: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit="cell", disable=not enabled,
                dynamic_ncols=True)


def run_cells(cells: Iterable[Cell], store: Store, *, executor: str = "local",
              workers: int | None = None, address: str | None = None, progress: bool = True,
              desc: str = "sweep", runner: Callable[[Cell], Any] = run_cell) -> pd.DataFrame:
    """Run every cell not already in ``store``; return all rows (old and new) as a DataFrame.

    Results are written by this process as each cell finishes, so an interrupt
    or a crashed worker loses only the cells still running. Ctrl-C or SIGTERM stops
    the run (``KeyboardInterrupt`` after the workers are gone); cells that raise are
    reported together in ``CellsFailed`` once the others are done.
    """
    if executor not in ("local", "dask"):
        raise SweepError(f"executor must be 'local' or 'dask', got {executor!r}")
    if workers is not None and not (isinstance(workers, int) and workers >= 1):
        raise SweepError(f"workers must be an integer >= 1, got {workers!r}")
    executors.check_address(executor, address, reach=False)  # the CLI also probes it
    cells = list({c.key: c for c in cells}.values())  # a cell listed twice runs once
    for fn, params in {(c.fn, tuple(sorted(c.params))): c.params for c in cells}.items():
        check_params(fn[0], params)
    todo = [c for c in cells if store.load(c) is None]
    bar = _progress(len(cells), len(cells) - len(todo), desc, progress)
    collect = executors.Collect(store, bar)
    try:
        with interrupt.watch(collect.stop):
            if not todo:
                pass
            elif executor == "dask":
                executors.run_dask(todo, collect, runner, workers, address)
            elif workers == 1:
                executors.run_inline(todo, collect, runner)
            else:
                executors.run_pool(todo, collect, runner, workers)
    except KeyboardInterrupt:
        bar.close()
        saved = sum(store.load(c) is not None for c in cells)
        print(f"{desc}: stopped; {saved} of {len(cells)} cells saved in {store.root}; run "
              "the same command again to resume", file=sys.stderr)
        raise
    finally:
        bar.close()
    if collect.failures:
        raise CellsFailed(collect.failures, len(cells))
    rows: list[dict[str, Any]] = []
    for c in cells:
        got = store.load(c)
        if got is None:
            raise SweepError(f"cell {c.key} ({c.params}) has no result after the run")
        rows.extend({**c.params, **r, "cell": c.key} for r in got)
    return pd.DataFrame(rows)


def run_sweep(sweep: Sweep, out_dir: str | Path, **kwargs: Any) -> pd.DataFrame:
    """Run a sweep into ``out_dir/cells`` and write ``out_dir/<name>.csv``."""
    out = Path(out_dir)
    df = run_cells(sweep.cells(), Store(out / "cells" / sweep.name), desc=sweep.name, **kwargs)
    atomic_write_text(out / f"{sweep.name}.csv", df.to_csv(index=False))
    return df
