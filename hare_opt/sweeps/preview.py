"""What a run would do before it does it: per item, cells current and to compute, why,
and the CPU it would cost (``hare-opt reproduce --plan``).

A cell's cost is estimated from what cells cost when they were computed (``cpu_s`` in
their files): the cell's own file when it is stale (same parameters, older code), else
from stored cells of the same function and group (``Cell.group``: the same policy or
solver) whose parameters other than the seed and the function's size parameter
(``CellSpec.size``: a simulation's job count) differ from it in the fewest values: the
mean of those of its size (the same setting on other seeds), or, when none has it, their
mean scaled by (size / their size)^a. The exponent a is fitted to the group's stored
cells (log CPU against log size), to the function's other groups when the group has one
size only, and is 1 when nothing shows it: a cell of 160 GPUs and 200 jobs is not
estimated at the cost of a 40-job testbed cell. Stores other than the run's own can lend
their costs (a quick run into an empty folder reads the committed full run's); a group's
cells are read from the first store that holds any (the run's own before a lender: its
costs are of the code at hand more likely than the lender's).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from hare_opt.sweeps.cells import CELLS, Cell, signature_defaults
from hare_opt.sweeps.store import State, Store


def _group_value(fn: str, params: dict[str, Any]) -> Any:
    spec = CELLS.spec(fn) if fn in CELLS else None
    return None if spec is None or spec.group is None else params.get(spec.group)


class CostBook:
    """Recorded CPU seconds of stored cells, by function and group, for estimates."""

    def __init__(self, stores: Iterable[Store]):
        self._by: dict[tuple[str, str], list[tuple[dict[str, Any], float]]] = {}
        self._slopes: dict[tuple[str, str], float] = {}
        for store in stores:
            mine: dict[tuple[str, str], list[tuple[dict[str, Any], float]]] = {}
            for p in store.payloads():
                cpu = p.get("cpu_s")
                if not isinstance(cpu, (int, float)) or not math.isfinite(cpu) or cpu <= 0:
                    continue
                params = p.get("params") or {}
                key = (str(p.get("fn")), repr(_group_value(str(p.get("fn")), params)))
                mine.setdefault(key, []).append((params, float(cpu)))
            for key, peers in mine.items():  # a group from the first store holding it
                self._by.setdefault(key, peers)

    def _size(self, fn: str, params: dict[str, Any]) -> float | None:
        """The cell's size parameter's value (``CellSpec.size``), None without one."""
        name = CELLS.spec(fn).size if fn in CELLS else None
        value = None if name is None else params.get(name, _defaults(fn).get(name))
        return float(value) if isinstance(value, (int, float)) and value > 0 else None

    def slope(self, fn: str, group: str) -> float:
        """a in CPU ~ size^a: least squares on log-log, centred per group (the group's own
        cells, else the function's groups), 1 when no group has two sizes."""
        if (fn, group) not in self._slopes:

            def fit(keys: list[tuple[str, str]]) -> float | None:
                sxy = sxx = 0.0
                for k in keys:
                    pts = [
                        (math.log(s), math.log(c))
                        for p, c in self._by.get(k, [])
                        if (s := self._size(fn, p)) is not None
                    ]
                    if len({x for x, _ in pts}) < 2:
                        continue
                    mx = sum(x for x, _ in pts) / len(pts)
                    my = sum(y for _, y in pts) / len(pts)
                    sxy += sum((x - mx) * (y - my) for x, y in pts)
                    sxx += sum((x - mx) ** 2 for x, _ in pts)
                return sxy / sxx if sxx > 0 else None

            own = fit([(fn, group)])
            pooled = fit([k for k in self._by if k[0] == fn]) if own is None else own
            self._slopes[(fn, group)] = 1.0 if pooled is None else pooled
        return self._slopes[(fn, group)]

    def estimate(self, cell: Cell, state: State | None = None) -> float | None:
        """CPU seconds ``cell`` would take (None: nothing like it was ever stored)."""
        if state is not None and state.payload is not None:
            cpu = state.payload.get("cpu_s")
            if isinstance(cpu, (int, float)) and math.isfinite(cpu):
                return float(cpu)
        group = repr(_group_value(cell.fn, cell.params))
        peers = self._by.get((cell.fn, group))
        if not peers:
            return None

        skip = {"seed", CELLS.spec(cell.fn).size if cell.fn in CELLS else None}

        def distance(params: dict[str, Any]) -> int:
            keys = (set(params) | set(cell.params)) - skip
            return sum(params.get(k) != cell.params.get(k) for k in keys)

        best = min(distance(p) for p, _ in peers)
        near = [(p, c) for p, c in peers if distance(p) == best]
        size = self._size(cell.fn, cell.params)
        same = [c for p, c in near if self._size(cell.fn, p) == size]
        if same or size is None:
            return sum(same or [c for _, c in near]) / len(same or near)
        a = self.slope(cell.fn, group)
        scaled = [c * (size / s) ** a if (s := self._size(cell.fn, p)) else c for p, c in near]
        return sum(scaled) / len(scaled)


@cache
def _defaults(fn: str) -> dict[str, Any]:
    """The cell function's keyword defaults ({} for a function no longer registered)."""
    try:
        return signature_defaults(fn) if fn in CELLS else {}
    except (ImportError, AttributeError, ValueError):
        return {}


@dataclass
class ItemPlan:
    """One item's cells: counts by state, what made the stale ones stale, the estimate."""

    name: str
    cells: int = 0
    current: int = 0
    stale: int = 0
    corrupt: int = 0
    missing: int = 0
    shared: int = 0  # listed by an earlier item of the run: counted there
    estimated_cpu_s: float = 0.0
    unknown: int = 0  # cells to compute with no cost to go by
    changed: Counter = field(default_factory=Counter)

    @property
    def compute(self) -> int:
        return self.stale + self.corrupt + self.missing

    def as_dict(self) -> dict[str, Any]:
        return {
            "cells": self.cells,
            "current": self.current,
            "stale": self.stale,
            "corrupt": self.corrupt,
            "missing": self.missing,
            "compute": self.compute,
            "shared": self.shared,
            "estimated_cpu_s": round(self.estimated_cpu_s, 1),
            "unknown_cost": self.unknown,
            "changed": dict(self.changed.most_common()),
        }


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
            why = "; ".join(
                x
                for x in (
                    f"{it.missing} new" if it.missing else "",
                    f"{it.corrupt} corrupt" if it.corrupt else "",
                    f"changed: {why}" if why else "",
                )
                if x
            )
            lines.append(
                f"{it.name:{width}s}  {it.cells:5d}  {it.current:7d}  {it.compute:7d}  "
                f"{fmt_cpu(it.estimated_cpu_s):>9s}  {why}"
                + (f" ({it.unknown} of unknown cost)" if it.unknown else "")
            )
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
