"""The drift check: a reused cell is one today's code reproduces.

CI recomputes the cheapest committed cell of each cell function and of each policy or
solver (``drift.sample``) and fails on any difference from the stored rows; a row edited
by hand, even with its checksum made good again, is caught.
"""

from __future__ import annotations

import json
from pathlib import Path

from hare_opt.sweeps import Cell, Store, drift, run_cells
from hare_opt.sweeps.reproduce import plan_items
from hare_opt.sweeps.store import _checksum

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_cells_sample_reproduces():
    """The committed sample recomputes to the stored rows (measured fields aside)."""
    cells, store, _ = plan_items(ROOT / "paper_figs", quick=False, only=None, cache=None)
    every = [c for cs in cells.values() for c in cs]
    chosen = drift.sample(every, store)
    fns = {c.fn for c in chosen}
    assert {"simulate", "bounds"} <= fns, fns  # something to check, every kind
    drifts, skipped = drift.check(chosen, store, workers=2)
    assert not skipped
    assert not drifts, "\n".join(map(str, drifts))


def _edit(path: Path, field: str, factor: float) -> None:
    """A careful hand edit: a stored number changed and the checksum made good again."""
    doc = json.loads(path.read_text())
    doc["payload"]["rows"][0][field] *= factor
    doc["checksum"] = _checksum(doc["payload"])
    path.write_text(json.dumps(doc))


def test_a_hand_edited_row_fails_the_drift_check(tmp_path):
    cell = Cell(
        "simulate", {"seed": 0, "policy": "gavel-fifo", "n_jobs": 4, "regime": "compressed"}
    )
    store = Store(tmp_path / "cells")
    run_cells([cell], store, workers=1, progress=False)
    assert store.state(cell).current
    drifts, _ = drift.check([cell], store, workers=1)
    assert not drifts  # as computed: reproduces
    _edit(store.path(cell), "total_weighted_jct_s", 0.9)
    assert store.state(cell).current  # the keys cannot see it ...
    drifts, _ = drift.check([cell], store, workers=1)
    assert len(drifts) == 1 and "total_weighted_jct_s" in drifts[0].where  # ... this does
