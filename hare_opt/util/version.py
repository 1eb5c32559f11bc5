"""What a cached result depends on: the package's modules and data files a process used.

Why not the git commit: an installed package has none, and uncommitted edits change
results too. A cell (``hare_opt.sweeps``) runs in a process of its own group
(``sweeps.worker``), which starts with no module of the package loaded; when the cell
ends, the modules of the package in ``sys.modules`` and the data files read through
``note_data`` are what it could have run and read, and their hashes key it. Sound
because code runs only from modules that are loaded, and a cell can start loading
another module or file only through a change to one it already loaded; precise because
a process runs cells of one group only (one policy, say), so a fix to one policy's code
leaves every other policy's cells valid.

Child processes a cell starts (the portfolio's backends) load modules the parent never
imports: they report them and the parent adds them with ``note_modules``. This module is
standard library only: the cell process reads it without loading anything else.
"""

from __future__ import annotations

import hashlib
import sys
from functools import cache
from pathlib import Path

SUFFIXES = (".py", ".csv", ".json")
ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "hare_opt"

#: This process's record, beside ``sys.modules``: modules its child processes loaded and
#: the package's data files it read (names relative to ``hare_opt/data``). A process
#: record like ``sys.modules`` itself, so it lives for the process.
_USED: dict[str, set[str]] = {"modules": set(), "data": set()}


def note_modules(names: list[str] | set[str]) -> None:
    """Record modules a child process of this one loaded (they count as loaded here)."""
    _USED["modules"].update(n for n in names if is_package_module(n))


def note_data(name: str) -> None:
    """Record that this process read data file ``hare_opt/data/<name>``."""
    _USED["data"].add(name)


def is_package_module(name: str) -> bool:
    return name == PACKAGE or name.startswith(PACKAGE + ".")


def loaded_modules() -> list[str]:
    """The package's modules this process (and the children it heard from) loaded, with
    source files, by name (sorted)."""
    names = {m for m in list(sys.modules) if is_package_module(m)} | _USED["modules"]
    return sorted(m for m in names if module_file(m) is not None)


def data_read() -> list[str]:
    return sorted(_USED["data"])


def module_file(name: str) -> Path | None:
    """The source file of module ``hare_opt...`` (a package's ``__init__.py``), or None."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = ROOT.joinpath(*parts[1:])
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def data_file(name: str) -> Path:
    return ROOT / "data" / name


def file_hash(path: Path | None) -> str:
    """16 hex digits of a file's bytes; ``"gone"`` when there is no such file."""
    try:
        st = path.stat() if path is not None else None
    except OSError:
        st = None
    if path is None or st is None:
        return "gone"
    return _hash_of(str(path), st.st_mtime_ns, st.st_size)


@cache
def _hash_of(path: str, mtime_ns: int, size: int) -> str:  # noqa: ARG001 - cache keys
    """Read once per version of the file: a plan checks thousands of cells."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def dependency_hashes(modules: list[str], data: list[str]) -> dict[str, str]:
    """Today's hash of each module (by name) and data file (``data:<name>``): a cell is
    current while these equal the ones it was stored with."""
    out = {m: file_hash(module_file(m)) for m in modules}
    out.update({f"data:{d}": file_hash(data_file(d)) for d in data})
    return out


@cache
def code_version() -> str:
    """16 hex digits of the whole package (every ``.py``, ``.csv`` and ``.json`` file):
    provenance of a run, never a cache key."""
    h = hashlib.sha256()
    for path in sorted(p for p in ROOT.rglob("*") if p.suffix in SUFFIXES
                       and "__pycache__" not in p.parts and p.is_file()):
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes()
                 + b"\0")
    return h.hexdigest()[:16]
