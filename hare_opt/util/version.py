"""The code version a cached result was computed with: a hash of the source it could run.

Why not the git commit: an installed package has none, and uncommitted edits change
results too. ``code_version()`` hashes every ``.py``, ``.csv`` and ``.json`` file under
``hare_opt/`` (code and the data tables it reads); anything else (docs) does not count.

``code_version(module)`` hashes only what ``module`` can run: the modules it imports,
transitively, read from their source (imports anywhere in a file, function-level ones
included; parent packages, whose ``__init__`` runs on import; and ``"hare_opt.x:Name"``
registry targets, which are imports by name), plus every data file. A reproduction
cell is keyed on its function's closure, so a change to the command line, the
verdicts or the plots does not make hours of simulation stale, while any change to
code a cell could execute does.

``loaded_modules()`` and ``modules_version()`` key a cell on what it really loaded
instead: a cell that never imports the CBC backend is not made stale by a change to
it. Sound because code runs only from modules that are loaded, and a cell can start
loading another module only through a change to one it already loads. The sweep
keeps those of the cell function's closure (``sweeps.sweep.keyed_modules``): a pool
worker also holds the driver's modules, which a cell never runs.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from functools import cache
from pathlib import Path

SUFFIXES = (".py", ".csv", ".json")
DATA_SUFFIXES = (".csv", ".json")
ROOT = Path(__file__).resolve().parents[1]
#: A registry target: a dotted module path, optionally ":attribute".
_TARGET = re.compile(r"^(hare_opt(?:\.[A-Za-z_]\w*)+)(?::[A-Za-z_]\w*)?$")


def _hash(paths: list[Path], extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for path in sorted(paths):
        h.update(path.relative_to(ROOT).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _files(suffixes: tuple[str, ...]) -> list[Path]:
    return [p for p in ROOT.rglob("*") if p.suffix in suffixes
            and "__pycache__" not in p.parts and p.is_file()]


def module_file(name: str) -> Path | None:
    """The source file of module ``hare_opt...`` (a package's ``__init__.py``), or None."""
    parts = name.split(".")
    if parts[0] != "hare_opt":
        return None
    base = ROOT.joinpath(*parts[1:])
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _imports(name: str, path: Path) -> set[str]:
    """Modules of the package that ``path`` (module ``name``) may import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                keep = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(keep + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # submodules
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _TARGET.match(node.value)
            if match:
                found.add(match.group(1))
    return {m for m in found if module_file(m) is not None}


def closure(module: str) -> set[str]:
    """``module`` and every module of the package it may import, transitively."""
    if module_file(module) is None:
        raise ValueError(f"no module {module!r} in hare_opt")
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        path = module_file(name)
        assert path is not None
        todo.extend(_imports(name, path))
    return seen


def loaded_modules() -> list[str]:
    """The package's modules loaded in this process, by name (sorted)."""
    return sorted(m for m in list(sys.modules) if m.split(".")[0] == "hare_opt"
                  and module_file(m) is not None)


@cache
def modules_version(modules: tuple[str, ...]) -> str:
    """16 hex digits: of these modules' source and every data file; a module whose source
    is gone hashes as its name alone, so a cell that loaded it is stale."""
    paths = [p for p in (module_file(m) for m in modules) if p is not None]
    gone = sorted(m for m in modules if module_file(m) is None)
    return _hash(paths + _files(DATA_SUFFIXES), extra="\0".join(gone))


@cache
def code_version(module: str | None = None) -> str:
    """16 hex digits: of the whole package, or of ``module``'s closure and the data files.

    ``HARE_OPT_CODE_VERSION`` overrides it (e.g. to reuse a cache on purpose after a
    change that cannot alter results)."""
    forced = os.environ.get("HARE_OPT_CODE_VERSION")
    if forced:
        return forced
    if module is None:
        return _hash(_files(SUFFIXES))
    paths = [p for p in (module_file(m) for m in closure(module)) if p is not None]
    return _hash(paths + _files(DATA_SUFFIXES))
