"""Sweep faults: every kind of reproduction cell on Dask, stale and failed cells."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from hare_opt.sweeps import Cell, Store, run_cells
from hare_opt.sweeps.cells import CELLS
from hare_opt.sweeps.items import Item

#: One small cell of each kind the reproduction runs.
KINDS = [
    Cell("simulate", {"seed": 0, "policy": "hare", "n_jobs": 6}, {"label": "t"}),
    Cell("simulate", {"seed": 0, "policy": "gavel-fifo", "n_jobs": 6}),
    Cell("fig1", {"solver": "cpsat", "time_limit": 5.0}),
    Cell(
        "quality",
        {
            "seed": 0,
            "n_jobs": 3,
            "n_gpus": 2,
            "max_tasks": 8,
            "time_limit": 2.0,
            "solver": "reference",
            "exact": "cpsat",
        },
    ),
    Cell(
        "quality",
        {"seed": 0, "n_jobs": 3, "n_gpus": 2, "max_tasks": 8, "time_limit": 2.0, "solver": "hare"},
    ),
    Cell(
        "bounds",
        {"seed": 0, "n_jobs": 3, "n_gpus": 2, "exact": True, "time_limit": 2.0, "part": "bounds"},
    ),
    Cell("runtime", {"seed": 0, "solver": "wspt", "n_jobs": 20, "n_gpus": 15}),
]
#: Wall-clock measurements: the only columns allowed to differ between runs.
CLOCKS = sorted({f for spec in CELLS for f in spec.measured})


def _item(cells: list[Cell]) -> Item:
    """A reproduction item that only runs ``cells`` (its table is their rows)."""
    return Item(
        "t", "c", lambda quick: cells, lambda df, quick: (df, "", "ok"), lambda table: Figure()
    )


def test_every_kind_of_cell_runs_on_a_dask_local_cluster_as_locally(tmp_path):
    local = run_cells(KINDS, Store(tmp_path / "a"), workers=1, progress=False)
    dask = run_cells(KINDS, Store(tmp_path / "b"), executor="dask", workers=2, progress=False)
    assert set(local["cell"]) == {c.key for c in KINDS}  # every kind produced rows
    keep = [c for c in local.columns if c not in CLOCKS]
    pd.testing.assert_frame_equal(local[keep], dask[keep])


def test_a_result_of_other_code_is_stale_and_recomputed(tmp_path):
    cell = Cell("arith", {"seed": 1, "n": 10})
    store = Store(tmp_path)
    store.save(
        cell, [{"sum": -1}], wall_s=0.0, cpu_s=0.0, deps={"hare_opt.sweeps.cells": "older-code"}
    )
    st = store.state(cell)
    assert st.status == "stale" and st.changed == ("hare_opt.sweeps.cells",)
    df = run_cells([cell], store, workers=1, progress=False)
    assert int(df["sum"].iloc[0]) != -1 and store.load(cell) is not None


def test_failed_cells_are_reported_as_failed_in_the_readme(tmp_path, monkeypatch):
    from hare_opt.sweeps import reproduce

    cells = [Cell("arith", {"seed": s, "n": 10, "fail_seed": 1}) for s in range(3)]
    monkeypatch.setattr(reproduce, "ITEMS", {"fake": _item(cells)})
    [outcome] = reproduce.run_items(tmp_path, only=["fake"], workers=1, progress=False)
    assert outcome.verdict == "FAILED" and outcome.failed == 1 and outcome.computed == 2
    text = (tmp_path / "README.md").read_text()
    assert "this run computed 2 and reused 0" in text and "1 FAILED" in text
    assert "Items FAILED: fake" in text


def test_cells_two_items_share_are_computed_and_counted_once(tmp_path, monkeypatch):
    from hare_opt.sweeps import reproduce

    a = [Cell("arith", {"seed": s, "n": 10}) for s in range(3)]
    b = [Cell("arith", {"seed": s, "n": 10}) for s in (1, 2, 3)]  # seeds 1-2 as a's

    monkeypatch.setattr(reproduce, "ITEMS", {"a": _item(a), "b": _item(b)})
    first, second = reproduce.run_items(tmp_path, workers=1, progress=False)
    assert (first.computed, second.computed, second.cached, second.shared) == (3, 1, 2, 2)
    text = (tmp_path / "README.md").read_text()
    assert "this run computed 4 and reused 0" in text
    assert "2 more listed by a second item, counted once" in text


def test_the_readme_lists_every_package_version_of_a_cell_function(tmp_path, monkeypatch):
    # two items' cells of one function, computed at two package versions: both are named
    # (a dict update per item kept only the last item's)
    from hare_opt.sweeps import reproduce
    from hare_opt.sweeps import store as store_module

    a = [Cell("arith", {"seed": 0, "n": 10})]
    b = [Cell("arith", {"seed": 1, "n": 10})]

    monkeypatch.setattr(reproduce, "ITEMS", {"a": _item(a), "b": _item(b)})
    with monkeypatch.context() as m:
        m.setattr(store_module, "code_version", lambda: "pkg-older")
        reproduce.run_items(tmp_path, only=["a"], workers=1, progress=False)
    reproduce.run_items(tmp_path, workers=1, progress=False)
    text = (tmp_path / "README.md").read_text()
    from hare_opt.util.version import code_version

    now = code_version()
    assert f"arith {'/'.join(sorted(['pkg-older', now]))}" in text
    assert f"this checkout's is {now}" in text
