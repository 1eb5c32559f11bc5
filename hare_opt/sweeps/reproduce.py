"""``hare-opt reproduce``: regenerate every table and figure of the paper, and ours.

Each item (``hare_opt.sweeps.items``) declares its sweep cells, a table,
a plot, the paper's claim and a verdict rule. Cells run through the sweep
engine, so a rerun reuses every finished cell (a crash loses nothing) and
``--executor dask`` spreads them over a cluster. Outputs per item: ``NAME.csv``
and ``NAME.png``; then ``README.md`` puts the paper's claims and ours side by side.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from hare_opt.generators import get_regime
from hare_opt.io import atomic_path, atomic_write_text
from hare_opt.plot.style import save_figure
from hare_opt.sweeps.catalog import ITEMS, notes_for
from hare_opt.sweeps.cells import Cell
from hare_opt.sweeps.items import REGIME
from hare_opt.sweeps.preview import CostBook, Plan, make_plan
from hare_opt.sweeps.readme import write_readme
from hare_opt.sweeps.store import Store
from hare_opt.sweeps.sweep import CellsFailed, SweepError, run_cells


@dataclass
class Outcome:
    """What one item produced: its table, the paper's claim, ours, and the verdict."""

    name: str
    title: str
    claim: str
    ours: str
    verdict: str
    table: pd.DataFrame
    seconds: float = 0.0
    cells: int = 0
    cached: int = 0
    computed: int | None = None  # cells computed and saved in this run (None: cells - cached)
    failed: int = 0  # cells that raised: nothing saved, the item is FAILED
    cell_cpu_s: float = 0.0  # CPU s of the item's cells, whenever they were computed
    cell_wall_s: float = 0.0  # their wall s (each on one worker)
    shared: int = 0  # cells an earlier item of the run listed: counted there


def check_items(only: list[str] | None) -> list[str]:
    """The items to run (all, or ``only``); unknown names are refused before any work."""
    names = list(ITEMS) if only is None else list(only)
    unknown = [n for n in names if n not in ITEMS]
    if unknown or not names:
        raise SweepError(
            f"unknown item(s) {unknown or 'none given'}; choose from {', '.join(ITEMS)}"
        )
    return names


#: The committed full run's cells: a run into another folder borrows their costs.
COMMITTED = Path("paper_figs") / ".cells"


def stores_for(out_dir: str | Path, cache: str | Path | None) -> tuple[Store, list[Store]]:
    """The run's store and the stores whose costs estimate it (its own first)."""
    store = Store(Path(cache) if cache else Path(out_dir) / ".cells")
    lend = [store]
    if COMMITTED.is_dir() and COMMITTED.resolve() != store.root.resolve():
        lend.append(Store(COMMITTED))
    return store, lend


def in_regime(cells: list[Cell], regime: str | None) -> list[Cell]:
    """``cells`` with every simulation of the items' regime run in ``regime`` instead (a
    sensitivity run: the same items, seeds and policies on the other regime's workloads);
    cells of other functions, or of another regime, are kept."""
    if regime is None or regime == REGIME:
        return cells
    get_regime(regime)  # an unknown name fails here, by name
    return [
        Cell(c.fn, {**c.params, "regime": regime}, c.labels).canonical()
        if c.fn == "simulate" and c.params.get("regime", REGIME) == REGIME
        else c
        for c in cells
    ]


def plan_items(
    out_dir: str | Path,
    *,
    quick: bool = False,
    only: list[str] | None = None,
    cache: str | Path | None = None,
    regime: str | None = None,
) -> tuple[dict[str, list[Cell]], Store, Plan]:
    """Each item's cells (in ``regime``, default the items' own), the run's store and the
    plan (``sweeps.preview``): no work."""
    names = check_items(only)
    cells = {name: in_regime(ITEMS[name].cells(quick), regime) for name in names}
    store, lend = stores_for(out_dir, cache)
    return cells, store, make_plan(cells, store, CostBook(lend))


def run_items(
    out_dir: str | Path,
    *,
    quick: bool = False,
    only: list[str] | None = None,
    executor: str = "local",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
    cache: str | Path | None = None,
    announce: Any = None,
    regime: str | None = None,
) -> list[Outcome]:
    """Run the items (all, or ``only``; their simulations in ``regime``, default the
    items' own) and write their CSV, PNG and the README. ``announce``: called with the
    plan before any cell runs (the CLI prints it)."""

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    listed, store, plan = plan_items(out, quick=quick, only=only, cache=cache, regime=regime)
    if announce is not None:
        announce(plan)
    for cell in {c.key: c for cs in listed.values() for c in cs}.values():
        store.rekey(cell)  # a current cell keyed by bytes: by code from now on

    def cost(cell: Cell) -> float:
        return plan.estimates.get(cell.key, 1.0)

    outcomes = []
    counted: set[str] = set()  # cells two items share count once
    distinct: list[Cell] = []  # every cell of the run, once
    for name, cells in listed.items():
        item = ITEMS[name]
        t0 = time.perf_counter()
        unique = list({c.key: c for c in cells}.values())
        cached = sum(store.state(c).current for c in unique)
        failed = 0
        try:
            df = (
                run_cells(
                    cells,
                    store,
                    executor=executor,
                    workers=workers,
                    address=address,
                    progress=progress,
                    desc=name,
                    cost=cost,
                )
                if cells
                else pd.DataFrame()
            )
            table, ours, verdict = item.analyse(df, quick)
            atomic_write_text(out / f"{name}.csv", table.to_csv(index=False))
            with atomic_path(out / f"{name}.png") as png:  # items draw; we write once
                save_figure(item.draw(table), png)
        except Exception as exc:  # one failed item must not cost the others their results
            table, ours, verdict = pd.DataFrame(), f"{type(exc).__name__}: {exc}", "FAILED"
            failed = len(exc.failures) if isinstance(exc, CellsFailed) else 0
        saved = sum(store.state(c).current for c in unique)
        fresh = [c for c in unique if c.key not in counted]
        counted.update(c.key for c in fresh)
        distinct.extend(fresh)
        costs = [x for x in (store.cost(c) for c in fresh) if x is not None]
        outcomes.append(
            Outcome(
                name,
                item.title,
                item.claim,
                ours,
                verdict,
                table,
                time.perf_counter() - t0,
                len(unique),
                cached,
                computed=saved - cached,
                failed=failed,
                cell_cpu_s=sum(c for _, c in costs),
                cell_wall_s=sum(w for w, _ in costs),
                shared=len(unique) - len(fresh),
            )
        )
    write_readme(
        out / "README.md",
        outcomes,
        quick,
        items=ITEMS,
        notes=notes_for(regime or REGIME),
        keep=only is not None,
        version=store.versions(distinct),
        flags=f" --regime {regime}" if regime not in (None, REGIME) else "",
    )
    return outcomes
