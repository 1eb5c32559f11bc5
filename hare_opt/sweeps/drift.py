"""The drift check: recompute stored cells and compare their rows with the stored ones.

A reused cell must be one today's code would reproduce. The keys make that so for the
package's own code (``util.version``); this check proves it, and catches what keys
cannot see: a library release that changes results, a cell function that is not pure,
a file edited by hand. Fields a cell function declares ``measured`` (wall times) are
left out; floats are compared to a relative 1e-9.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hare_opt.sweeps.cells import CELLS, Cell
from hare_opt.sweeps.store import Store

REL_TOL = 1e-9


@dataclass
class Drift:
    """A recomputed cell whose rows differ from its stored ones (``where``: the first
    difference), with the library versions of both runs."""

    cell: Cell
    where: str
    stored_env: dict[str, str]
    env: dict[str, str]

    def __str__(self) -> str:
        libs = {k: (v, self.env.get(k)) for k, v in self.stored_env.items() if self.env.get(k) != v}
        return f"cell {self.cell.key} ({self.cell.fn} {self.cell.params}): {self.where}" + (
            f"; libraries differ: {libs}" if libs else ""
        )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            x, y = float(a), float(b)
        except (TypeError, ValueError):
            return False
        return (math.isnan(x) and math.isnan(y)) or math.isclose(
            x, y, rel_tol=REL_TOL, abs_tol=1e-12
        )
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def difference(fn: str, stored: list[dict[str, Any]], fresh: list[dict[str, Any]]) -> str | None:
    """Where two row lists of a ``fn`` cell differ (measured fields aside), or None."""
    skip = set(CELLS.spec(fn).measured)
    if len(stored) != len(fresh):
        return f"{len(stored)} rows stored, {len(fresh)} recomputed"
    for i, (a, b) in enumerate(zip(stored, fresh)):
        for k in sorted((set(a) | set(b)) - skip):
            if not _same(a.get(k), b.get(k)):
                return f"row {i} field {k!r}: stored {a.get(k)!r}, recomputed {b.get(k)!r}"
    return None


def sample(cells: Iterable[Cell], store: Store) -> list[Cell]:
    """The cheapest current cell of each cell function and of each group (policy,
    solver): what CI recomputes."""
    best: dict[str, tuple[float, Cell]] = {}
    for c in {c.key: c for c in cells}.values():
        st = store.state(c)
        if not st.current or st.payload is None:
            continue
        cpu = float(st.payload.get("cpu_s", math.inf))
        for key in (c.fn, c.group):
            if key not in best or cpu < best[key][0]:
                best[key] = (cpu, c)
    return list({c.key: c for _, c in best.values()}.values())


def check(
    cells: Iterable[Cell], store: Store, *, workers: int | None = None, progress: bool = False
) -> tuple[list[Drift], list[Cell]]:
    """Recompute ``cells`` (current in ``store``) in a scratch store and compare; returns
    the drifts and the cells that were not current (not checked)."""
    from hare_opt.sweeps.sweep import run_cells

    cells = list({c.key: c for c in cells}.values())
    current = [c for c in cells if store.state(c).current]
    skipped = [c for c in cells if not store.state(c).current]
    drifts = []
    with tempfile.TemporaryDirectory(prefix="hare-opt-drift-") as tmp:
        scratch = Store(tmp)
        run_cells(current, scratch, workers=workers, progress=progress, desc="drift check")
        for c in current:
            old, new = store.state(c).payload, scratch.state(c).payload
            assert old is not None and new is not None
            where = difference(c.fn, old["rows"], new["rows"])
            if where is not None:
                drifts.append(Drift(c, where, old.get("env", {}), new.get("env", {})))
    return drifts, skipped
