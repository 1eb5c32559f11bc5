"""The cell store: one JSON file per finished cell, reused while its code is unchanged.

A file holds the cell's rows, what it cost (wall and CPU seconds), the libraries it ran
with, and the hash of every module it loaded and data file it read (``deps``,
``util.version``). It is *current* while each of those hashes equals today's; a file
whose code changed is *stale* (``State.changed`` names what changed), one that is
half-written, tampered with (the checksum), made for another cell or not a regular file
is *corrupt*; stale, corrupt and missing cells are computed again. The store only ever
holds regular files it wrote: a symbolic link, named pipe or device at a cell's path is
refused with its name (``io.output.plain_file``), never followed, waited on or read.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hare_opt.io import OutputError, atomic_write_text
from hare_opt.io.output import plain_file
from hare_opt.sweeps.cells import Cell
from hare_opt.sweeps.executors import SweepError
from hare_opt.util.version import changed as changed_deps
from hare_opt.util.version import code_version, rekey

FORMAT = "hare-opt/cell@2"
#: Earlier formats still read: their files are sound, from older code, so stale (their
#: recorded costs still estimate a run); @1 keyed a cell on the static import closure.
OLDER = ("hare-opt/cell@1",)
#: The largest cell file read (a cell's rows are kilobytes; a per-job CDF a few hundred).
MAX_BYTES = 64 * 2**20


class StoreError(SweepError):
    """Something at a cell's path the store must not use (names the path)."""


@dataclass(frozen=True)
class State:
    """A cell in the store: ``status`` is ``current``, ``stale``, ``corrupt`` or
    ``missing``; ``changed``: for a stale cell, what changed (modules by name, data files
    as ``data:NAME``); ``payload``: the stored document's payload (not for missing or
    corrupt)."""

    status: str
    changed: tuple[str, ...] = ()
    payload: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def current(self) -> bool:
        return self.status == "current"


def _checksum(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class Store:
    """Finished cells under ``root``, one file each (``KEY.json``)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)  # made when the first cell is saved

    def path(self, cell: Cell) -> Path:
        return self.root / f"{cell.key}.json"

    def _read(self, path: Path) -> tuple[str, dict[str, Any]] | None:
        """(format, payload) of a sound file at ``path`` (this format or an ``OLDER``
        one), None when absent or corrupt."""
        try:
            plain_file(path, f"cell store {path}")
        except OutputError as exc:
            raise StoreError(str(exc)) from None
        try:
            if path.stat().st_size > MAX_BYTES:
                return None
            doc = json.loads(path.read_text(encoding="utf-8"))
            payload, fmt = doc["payload"], doc.get("format")
            if (
                fmt not in (FORMAT, *OLDER)
                or doc.get("checksum") != _checksum(payload)
                or not isinstance(payload, dict)
            ):
                return None
            return fmt, payload
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def state(self, cell: Cell) -> State:
        path = self.path(cell)
        if not os.path.lexists(path):
            return State("missing")
        read = self._read(path)
        if read is None or read[1].get("key") != cell.key:
            return State("corrupt")
        fmt, payload = read
        if fmt != FORMAT:  # sound, but keyed the old way: recomputed, its cost still known
            return State("stale", (f"format {fmt}",), payload)
        if not isinstance(payload.get("deps"), dict) or not isinstance(payload.get("rows"), list):
            return State("corrupt")
        changed = changed_deps(payload["deps"])
        return State("stale" if changed else "current", changed, payload)

    def load(self, cell: Cell) -> list[dict[str, Any]] | None:
        """The cell's rows if it is current, else None."""
        st = self.state(cell)
        return st.payload["rows"] if st.current and st.payload is not None else None

    def save(
        self,
        cell: Cell,
        rows: list[dict[str, Any]],
        *,
        wall_s: float,
        cpu_s: float,
        deps: dict[str, str],
        env: dict[str, str] | None = None,
    ) -> None:
        """Store a finished cell with what it depended on (``sweeps.worker``'s report)."""
        payload: dict[str, Any] = {
            "key": cell.key,
            "fn": cell.fn,
            "params": cell.params,
            "rows": rows,
            "runtime_s": wall_s,
            "cpu_s": cpu_s,
            "deps": deps,
            "env": env or {},
            "package": code_version(),
        }
        doc = {"format": FORMAT, "checksum": _checksum(payload), "payload": payload}
        path = self.path(cell)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            plain_file(path, f"cell store {path}")
            atomic_write_text(path, json.dumps(doc, sort_keys=True, default=str))
        except OutputError as exc:
            raise StoreError(str(exc)) from None
        except OSError as exc:
            raise StoreError(
                f"cell store {path}: cannot be written ({exc.strerror or exc})"
            ) from None

    def rekey(self, cell: Cell) -> bool:
        """Rewrite a current cell's key in today's form (``util.version.rekey``: byte
        hashes as code hashes, the same code); its rows untouched. Returns whether it did."""
        st = self.state(cell)
        deps = rekey(st.payload["deps"]) if st.current and st.payload is not None else None
        if deps is None or st.payload is None:
            return False
        payload = {**st.payload, "deps": deps}
        doc = {"format": FORMAT, "checksum": _checksum(payload), "payload": payload}
        path = self.path(cell)
        try:
            atomic_write_text(path, json.dumps(doc, sort_keys=True, default=str))
        except OutputError as exc:
            raise StoreError(str(exc)) from None
        return True

    def cost(self, cell: Cell) -> tuple[float, float] | None:
        """(wall s, CPU s) the stored cell took, current or stale (CPU: nan if unknown)."""
        st = self.state(cell)
        if st.payload is None:
            return None
        return float(st.payload["runtime_s"]), float(st.payload.get("cpu_s", math.nan))

    def versions(self, cells: Iterable[Cell]) -> dict[str, str]:
        """By cell function, the package versions (``code_version()``) its stored cells
        were computed at, '/'-joined (provenance: each cell is keyed on its own code)."""
        found: dict[str, set[str]] = {}
        for c in cells:
            st = self.state(c)
            if st.payload is not None:
                found.setdefault(c.fn, set()).add(str(st.payload.get("package")))
        return {fn: "/".join(sorted(v)) for fn, v in found.items()}

    def payloads(self) -> Iterator[dict[str, Any]]:
        """Every sound cell file's payload, older formats too (for cost estimates), in
        name order."""
        for path in sorted(self.root.glob("*.json")):
            try:
                read = self._read(path)
            except StoreError:
                continue
            if read is not None:
                yield read[1]

    def prune(self, keep: Iterable[Cell]) -> int:
        """Remove the cell files not in ``keep``; returns how many."""
        wanted = {f"{c.key}.json" for c in keep}
        gone = 0
        for path in self.root.glob("*.json"):
            if path.name not in wanted and path.is_file() and not path.is_symlink():
                path.unlink()
                gone += 1
        return gone
