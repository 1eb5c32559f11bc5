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

A module is keyed on its code, not its bytes: the hash of its syntax tree with docstrings
left out (``code_hash``), so a comment, a docstring or a reformatting (``ruff format``)
stales nothing, since none of them can change what the module computes; any other edit
does. Cells stored before this keyed a module on its file's bytes: such a hash still
matches while the file is byte for byte the same (``changed``), and ``rekey`` rewrites a
current cell's byte hashes as code hashes, which is sound because the same bytes are the
same code. This module itself only decides how results are keyed, never what they are,
so it is no part of any key (``KEYING``).

Child processes a cell starts (the portfolio's backends) load modules the parent never
imports: they report them and the parent adds them with ``note_modules``. This module is
standard library only: the cell process reads it without loading anything else.
"""

from __future__ import annotations

import ast
import hashlib
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

SUFFIXES = (".py", ".csv", ".json")
ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "hare_opt"
#: Prefix of a code hash (``code_hash``); a bare hash is of a file's bytes.
CODE = "code:"
#: Modules that decide how results are keyed, never what they are: in no key, and not
#: compared where an older key names them.
KEYING = frozenset({f"{PACKAGE}.util.version"})

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


def _versioned(path: Path | None, digest: Callable[[str, int, int], str]) -> str:
    """``digest`` of the file at ``path`` by (path, mtime, size), so each version of a
    file is read once; ``"gone"`` when there is no such file."""
    try:
        st = path.stat() if path is not None else None
    except OSError:
        st = None
    if path is None or st is None:
        return "gone"
    return digest(str(path), st.st_mtime_ns, st.st_size)


def file_hash(path: Path | None) -> str:
    """16 hex digits of a file's bytes; ``"gone"`` when there is no such file."""
    return _versioned(path, _hash_of)


@cache
def _hash_of(path: str, mtime_ns: int, size: int) -> str:  # noqa: ARG001 - cache keys
    """Read once per version of the file: a plan checks thousands of cells."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def code_hash(path: Path | None) -> str:
    """``CODE`` and 16 hex digits of a module's syntax tree without its docstrings (what
    it computes: comments, docstrings and layout aside); the file's ``file_hash`` when it
    is gone or does not parse."""
    return _versioned(path, _code_of)


@cache
def _code_of(path: str, mtime_ns: int, size: int) -> str:
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (SyntaxError, ValueError):
        return _hash_of(path, mtime_ns, size)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    dump = ast.dump(tree, annotate_fields=False)
    return CODE + hashlib.sha256(dump.encode()).hexdigest()[:16]


def dependency_hashes(modules: list[str], data: list[str]) -> dict[str, str]:
    """Today's key of each module (by name: its ``code_hash``) and data file
    (``data:<name>``: its bytes): a cell is current while these equal the ones it was
    stored with (``changed``)."""
    out = {m: code_hash(module_file(m)) for m in modules if m not in KEYING}
    out.update({f"data:{d}": file_hash(data_file(d)) for d in data})
    return out


def _now(name: str, stored: str) -> str:
    """Today's hash of ``name`` in the form ``stored`` has (code or bytes)."""
    if name.startswith("data:"):
        return file_hash(data_file(name[5:]))
    path = module_file(name)
    return code_hash(path) if stored.startswith(CODE) else file_hash(path)


def changed(deps: dict[str, str]) -> tuple[str, ...]:
    """The dependencies of a stored key whose hash today differs (sorted; ``KEYING``
    modules are not compared)."""
    return tuple(sorted(k for k, h in deps.items() if k not in KEYING and _now(k, h) != h))


def rekey(deps: dict[str, str]) -> dict[str, str] | None:
    """A current key with byte hashes of modules rewritten as code hashes (the same bytes
    are the same code), ``KEYING`` modules dropped; None when there is nothing to rewrite
    or the key is not current."""
    if changed(deps) or not any(
        k in KEYING or (not k.startswith("data:") and not h.startswith(CODE))
        for k, h in deps.items()
    ):
        return None
    return {
        k: (
            h
            if k.startswith("data:") or h.startswith(CODE) or h == "gone"
            else code_hash(module_file(k))
        )
        for k, h in deps.items()
        if k not in KEYING
    }


@cache
def code_version() -> str:
    """16 hex digits of the whole package (every ``.py``, ``.csv`` and ``.json`` file):
    provenance of a run, never a cache key."""
    h = hashlib.sha256()
    for path in sorted(
        p
        for p in ROOT.rglob("*")
        if p.suffix in SUFFIXES and "__pycache__" not in p.parts and p.is_file()
    ):
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]
