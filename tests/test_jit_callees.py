"""Callees (``@jit(callee=True)``) are compiled without the wrappers that let Python call
them, so no Python code may name one; and a kernel function that only kernels name should
be a callee (its wrappers would be compile time spent for nothing)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [
    p
    for d in ("hare_opt", "tests", "experiments")
    for p in sorted((ROOT / d).rglob("*.py"))
    if p.name != Path(__file__).name  # the last test below names a callee on purpose
]


def _jit_options(node: ast.FunctionDef) -> dict[str, object] | None:
    """The keyword options of the function's ``@jit`` decorator; None if it has none."""
    for dec in node.decorator_list:
        call = dec if isinstance(dec, ast.Call) else None
        name = call.func if call else dec
        if isinstance(name, ast.Name) and name.id in ("jit", "_jit"):  # the kernels' decorator
            if call is None:
                return {}
            return {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
    return None


def _kernels() -> dict[tuple[str, str], bool]:
    """(module path, function name) -> callee, for every module-level ``@jit`` function."""
    out = {}
    for path in sorted((ROOT / "hare_opt").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef):
                opts = _jit_options(node)
                if opts is not None:
                    out[(str(path), node.name)] = bool(opts.get("callee", False))
    return out


def _names_in(path: Path, names: set[str]) -> tuple[set[str], set[str]]:
    """(names the file's own Python code uses outside jit function bodies, names it
    imports or reads as an attribute)."""
    tree = ast.parse(path.read_text())
    jit = {
        id(n) for n in tree.body if isinstance(n, ast.FunctionDef) and _jit_options(n) is not None
    }
    own: set[str] = set()
    other: set[str] = set()
    todo: list[tuple[ast.AST, bool]] = [(tree, False)]
    while todo:
        node, in_jit = todo.pop()
        in_jit = in_jit or id(node) in jit
        if isinstance(node, ast.Name) and node.id in names and not in_jit:
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in names:
            other.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            other.update(a.name for a in node.names if a.name in names)
        todo.extend((child, in_jit) for child in ast.iter_child_nodes(node))
    return own, other


def _named_from_python(kernels: dict[tuple[str, str], bool]) -> set[tuple[str, str]]:
    """The kernels some Python code names: by name in its own module outside the bodies
    of jit functions, or from another file by import or attribute (any attribute of that
    name counts, which errs towards "named")."""
    names = {name for _, name in kernels}
    named: set[tuple[str, str]] = set()
    for path in SOURCES:
        own, other = _names_in(path, names)
        for key in kernels:
            if key[1] in other or (key[0] == str(path) and key[1] in own):
                named.add(key)
    return named


def test_callees_are_named_by_kernels_only():
    kernels = _kernels()
    assert sum(kernels.values()) >= 40  # the analysis sees the callees
    named = _named_from_python(kernels)
    wrong = sorted(f"{Path(p).name}:{n}" for (p, n), c in kernels.items() if c and (p, n) in named)
    assert not wrong, f"callees named from Python (they cannot be called from it): {wrong}"
    wasted = [f"{Path(p).name}:{n}" for (p, n), c in kernels.items() if not (c or (p, n) in named)]
    assert not wasted, f"only kernels call these: mark them @jit(callee=True): {wasted}"


def test_a_callee_called_from_python_says_why():
    from hare_opt.heuristics import _kernels
    from hare_opt.util import jit

    jit.load()
    with pytest.raises(TypeError, match="calls from numba kernels only"):
        _kernels._tie(np.int64(3), True)
    # its Python function still runs (what an interpreted kernel calls)
    assert _kernels._tie.py_func(3, True) == -3 - _kernels._OWN
