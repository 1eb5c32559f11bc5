"""What a run would do before it does it: per item, cells current and to compute, why,
and the CPU it would cost (``hare-opt reproduce --plan``).

A cell's cost is estimated from what cells cost when they were computed (``cpu_s`` in
their files): the cell's own file when it is stale (same parameters, older code), else
the mean of stored cells of the same function and group (``Cell.group``: the same
policy or solver) whose parameters differ from it in the fewest values (the same
setting on other seeds, when there is one). Stores other than the run's own can lend
their costs (a quick run into an empty folder reads the committed full run's).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hare_opt.sweeps.cells import CELLS, Cell
from hare_opt.sweeps.store import State, Store


def _group_value(fn: str, params: dict[str, Any]) -> Any:
    spec = CELLS.spec(fn) if fn in CELLS else None
    return None if spec is None or spec.group is None else params.get(spec.group)


class CostBook:
    """Recorded CPU seconds of stored cells, by function and group, for estimates."""

    def __init__(self, stores: Iterable[Store]):
        self._by: dict[tuple[str, str], list[tuple[dict[str, Any], float]]] = {}
        seen: set[str] = set()
        for store in stores:
            for p in store.payloads():
                cpu = p.get("cpu_s")
                if p.get("key") in seen or not isinstance(cpu, (int, float)) \
                        or not math.isfinite(cpu):
                    continue
                seen.add(p["key"])
                params = p.get("params") or {}
                key = (str(p.get("fn")), repr(_group_value(str(p.get("fn")), params)))
                self._by.setdefault(key, []).append((params, float(cpu)))

    def estimate(self, cell: Cell, state: State | None = None) -> float | None:
        """CPU seconds ``cell`` would take (None: nothing like it was ever stored)."""
        if state is not None and state.payload is not None:
            cpu = state.payload.get("cpu_s")
            if isinstance(cpu, (int, float)) and math.isfinite(cpu):
                return float(cpu)
        peers = self._by.get((cell.fn, repr(_group_value(cell.fn, cell.params))))
        if not peers:
            return None

        def distance(params: dict[str, Any]) -> int:
            keys = (set(params) | set(cell.params)) - {"seed"}
            return sum(params.get(k) != cell.params.get(k) for k in keys)

        best = min(distance(p) for p, _ in peers)
        near = [c for p, c in peers if distance(p) == best]
        return sum(near) / len(near)


@dataclass
class ItemPlan:
    """One item's cells: counts by state, what made the stale ones stale, the estimate."""

    name: str
    cells: int = 0
    current: int = 0
    stale: int = 0
    corrupt: int = 0
    missing: int = 0
    shared: int = 0          # listed by an earlier item of the run: counted there
    estimated_cpu_s: float = 0.0
    unknown: int = 0         # cells to compute with no cost to go by
    changed: Counter = field(default_factory=Counter)

    @property
    def compute(self) -> int:
        return self.stale + self.corrupt + self.missing

    def as_dict(self) -> dict[str, Any]:
        return {"cells": self.cells, "current": self.current, "stale": self.stale,
                "corrupt": self.corrupt, "missing": self.missing, "compute": self.compute,
                "shared": self.shared, "estimated_cpu_s": round(self.estimated_cpu_s, 1),
                "unknown_cost": self.unknown, "changed": dict(self.changed.most_common())}


@dataclass
class Plan:
    items: list[ItemPlan]
    estimates: dict[str, float]  # by cell key, for every cell to compute

    def total(self) -> ItemPlan:
        out = ItemPlan("all")
        for it in self.items:
            for f in ("cells", "current", "stale", "corrupt", "missing", "unknown"):
                setattr(out, f, getattr(out, f) + getattr(it, f))
            out.estimated_cpu_s += it.estimated_cpu_s
            out.changed.update(it.changed)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {**self.total().as_dict(), "items": {it.name: it.as_dict() for it in self.items}}

    def text(self) -> str:
        width = max([len(it.name) for it in self.items] + [4])
        lines = [f"{'item':{width}s}  cells  current  compute  est. CPU   why"]
        for it in [*self.items, self.total()]:
            why = ", ".join(f"{m} ({n})" for m, n in it.changed.most_common(3))
            why = "; ".join(x for x in (f"{it.missing} new" if it.missing else "",
                                        f"{it.corrupt} corrupt" if it.corrupt else "",
                                        f"changed: {why}" if why else "") if x)
            lines.append(f"{it.name:{width}s}  {it.cells:5d}  {it.current:7d}  {it.compute:7d}  "
                         f"{fmt_cpu(it.estimated_cpu_s):>9s}  {why}"
                         + (f" ({it.unknown} of unknown cost)" if it.unknown else ""))
        return "\n".join(lines)


def fmt_cpu(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.2f} h"


def make_plan(items: dict[str, list[Cell]], store: Store, book: CostBook) -> Plan:
    """The plan of a run of ``items`` (name -> its cells) against ``store``; a cell two
    items list is counted under the first."""
    seen: set[str] = set()
    plans, estimates = [], {}
    for name, cells in items.items():
        it = ItemPlan(name)
        for cell in {c.key: c for c in cells}.values():
            it.cells += 1
            if cell.key in seen:
                it.shared += 1
                it.cells -= 1
                continue
            seen.add(cell.key)
            st = store.state(cell)
            setattr(it, st.status, getattr(it, st.status) + 1)
            if st.current:
                continue
            it.changed.update(st.changed)
            est = book.estimate(cell, st)
            if est is None:
                it.unknown += 1
            estimates[cell.key] = est or 0.0
            it.estimated_cpu_s += est or 0.0
        plans.append(it)
    return Plan(plans, estimates)
