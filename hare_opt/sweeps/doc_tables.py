"""The docs' tables of solvers, bounds and policies, generated from the registries.

Why: a hand-written table drifts (a solver added, a description changed, the
portfolio's order moved). Each table lives in a Markdown file between two markers,
``<!-- table:NAME -->`` and ``<!-- /table:NAME -->``; ``write()`` (or
``python -m hare_opt.sweeps.doc_tables``) rewrites them from the registries, and
tests/test_docs.py fails when a committed table differs from what they give.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from hare_opt.bounds import BOUNDS
from hare_opt.io.output import atomic_write_text
from hare_opt.sim import POLICIES
from hare_opt.solvers import SOLVERS

ROOT = Path(__file__).resolve().parents[2]


def solvers_table() -> str:
    rows = ["| solver | kind | portfolio | options | description |", "|---|---|---|---|---|"]
    for s in SOLVERS:
        role = ("quick, then child" if s.portfolio_quick else "child") if s.portfolio else ""
        options = ", ".join(f"`{n}`" for n in s.options_class().names()) or "none"
        rows.append(f"| `{s.name}` | {s.kind} | {role} | {options} | {s.description} |")
    return "\n".join(rows)


def bounds_table() -> str:
    rows = ["| bound | value | on every solve | description |", "|---|---|---|---|"]
    for b in BOUNDS:
        rows.append(
            f"| `{b.name}` | {'exact' if b.exact else 'float (LP)'} | "
            f"{'yes' if b.cheap else 'no (lp=True)'} | {b.description} |"
        )
    return "\n".join(rows)


def policies_table() -> str:
    rows = ["| policy | mode | knows remaining work | description |", "|---|---|---|---|"]
    for p in POLICIES:
        rows.append(
            f"| `{p.name}` | {p.mode} | {'yes' if p.clairvoyant else 'no'} | {p.description} |"
        )
    return "\n".join(rows)


#: table name -> (file under the repository root, generator)
TABLES: dict[str, tuple[str, Callable[[], str]]] = {
    "solvers": ("docs/formulations.md", solvers_table),
    "bounds": ("docs/formulations.md", bounds_table),
    "policies": ("docs/contributing.md", policies_table),
}


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- table:{name} -->\n)(.*?)(\n<!-- /table:{name} -->)", re.DOTALL)


def committed(name: str, root: Path = ROOT) -> str | None:
    """The table as the docs hold it (None: its markers are missing)."""
    path, _ = TABLES[name]
    found = _pattern(name).search((root / path).read_text())
    return None if found is None else found.group(2)


def _filler(table: str) -> Callable[[re.Match[str]], str]:
    return lambda m: m.group(1) + table + m.group(3)


def write(root: Path = ROOT) -> list[str]:
    """Rewrite every table from the registries; returns the names that changed."""
    changed = []
    for name, (path, make) in TABLES.items():
        file = root / path
        text = file.read_text()
        new = _pattern(name).sub(_filler(make()), text)
        if new != text:
            atomic_write_text(file, new)
            changed.append(name)
    return changed


if __name__ == "__main__":
    print("rewrote:", ", ".join(write()) or "nothing (the tables match the registries)")
