"""The package's layers only point down, and no import cycle hides anywhere.

Read with ``ast`` (nothing is imported): every ``import`` of a hare_opt module,
at module level or inside a function, counts; imports under ``if TYPE_CHECKING:``
are annotations only and do not between the package's parts. A module may import
from its own part and from lower layers; the registries name higher layers by string
(``"module:attr"``), which is how a lower layer may point at an implementation above
it. Inside the simulator (``hare_opt.sim``) annotations count too: its modules have
layers of their own (``SIM_LAYERS``) and form no cycle even for the type checker.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hare_opt"

#: Rank of each top-level part of the package; equal ranks may not import each other.
LAYERS = {
    "util": 0,
    "model": 1,
    "io": 2,
    "checker": 2,
    "generators": 3,
    "bounds": 3,
    "examples": 3,
    "analysis": 3,
    "heuristics": 4,
    "solvers": 5,
    "plot": 5,
    "sim": 6,
    "falsify": 7,
    "sweeps": 7,
    "cli": 8,
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(path: Path, typing: bool = False) -> set[str]:
    """hare_opt modules the file imports at run time (``typing``: under TYPE_CHECKING too)."""
    return imports_in(path.read_text(), module_name(path), path.name == "__init__.py", typing)


def imports_in(source: str, me: str, is_package: bool = False, typing: bool = False) -> set[str]:
    """hare_opt modules that ``source`` (module ``me``) imports at run time (``typing``:
    and for annotations, under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(source)
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not typing:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("hare_opt"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import: from the module's package upwards
                pkg = me.split(".")
                pkg = pkg[: len(pkg) - node.level + (1 if is_package else 0)]
                base = ".".join([*pkg, base] if base else pkg)
            if base.startswith("hare_opt"):
                for alias in node.names:  # "from pkg import module" imports the module
                    candidate = f"{base}.{alias.name}"
                    found.add(candidate if module_path(candidate) else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def module_path(name: str) -> Path | None:
    base = PACKAGE.parent.joinpath(*name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.exists():
            return p
    return None


def part(name: str) -> str | None:
    """The top-level part of ``hare_opt.x.y`` (None for the package root)."""
    bits = name.split(".")
    return bits[1] if len(bits) > 1 else None


def graph(under: Path = PACKAGE, typing: bool = False) -> dict[str, set[str]]:
    """Module -> the hare_opt modules it imports (the modules under ``under``)."""
    g: dict[str, set[str]] = {}
    for path in under.rglob("*.py"):
        g[module_name(path)] = {dst for dst in imports(path, typing) if module_path(dst)}
    return g


def edges(g: dict[str, set[str]]) -> list[tuple[str, str]]:
    return [(s, d) for s, ds in g.items() for d in ds]


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_every_part_has_a_layer():
    parts = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    }
    assert parts <= set(LAYERS), f"give these a layer in LAYERS: {sorted(parts - set(LAYERS))}"


def test_layers_only_point_down():
    wrong = []
    for src, dst in edges(graph()):
        a, b = part(src), part(dst)
        if a is None or b is None or a == b:
            continue  # the package root is the facade; a part may use itself
        if LAYERS[b] >= LAYERS[a]:
            wrong.append(f"{src} -> {dst} ({a}: layer {LAYERS[a]}, {b}: layer {LAYERS[b]})")
    assert not wrong, "imports pointing up or sideways:\n" + "\n".join(sorted(wrong))


def test_no_import_cycle():
    # A package's __init__ re-exports its modules: an edge back to it from one of its own
    # modules is how Python packages work, not a cycle between concepts.
    g = {s: {d for d in ds if not s.startswith(d + ".")} for s, ds in graph().items()}
    found = cycles(g)
    assert not found, f"import cycles: {found[:5]}"


#: Layers inside the simulator, lowest first: the terms a run is under (a policy's mode,
#: what a gang start holds) and its events, what a run records (in those terms), the
#: engines (the reference loop and the compiled cores, which import no policy and no
#: registry), the registry (which names policies by string and imports no compiled core),
#: the policies, the entry point that picks an engine, and what builds workloads for it or
#: runs it once to load its compiled engines (``warm``). The package's ``__init__`` is its
#: facade.
SIM_LAYERS = {
    "events": 0,
    "semantics": 0,
    "results": 1,
    "engine": 2,
    "policy": 3,
    "policies": 4,
    "simulator": 5,
    "workload": 6,
    "warm": 6,
}
SIM = PACKAGE / "sim"


def sim_part(name: str) -> str | None:
    """``hare_opt.sim.x...``'s ``x`` (None: the package itself or outside it)."""
    bits = name.split(".")
    return bits[2] if len(bits) > 2 and bits[1] == "sim" else None


def sim_graph() -> nx.DiGraph:
    """The simulator's modules and their imports among each other: at module level,
    inside functions and under ``TYPE_CHECKING`` (the facade ``__init__`` left out)."""
    g = nx.DiGraph()
    for src, dsts in graph(SIM, typing=True).items():
        if sim_part(src) is None:
            continue
        g.add_node(src)
        g.add_edges_from((src, d) for d in dsts if sim_part(d) is not None)
    return g


def test_every_sim_module_has_a_layer():
    parts = {sim_part(n) for n in sim_graph()}
    assert parts <= set(SIM_LAYERS), f"give these a layer: {sorted(parts - set(SIM_LAYERS))}"


def test_sim_layers_only_point_down():
    """Inside the package too: an engine never imports a policy or the registry, the
    registry never a compiled core, a policy never the entry point."""
    wrong = [
        f"{src} -> hare_opt.sim (the facade imports every layer)"
        for src, dsts in graph(SIM, typing=True).items()
        if sim_part(src) is not None and "hare_opt.sim" in dsts
    ]
    for src, dst in sim_graph().edges:
        a, b = sim_part(src), sim_part(dst)
        assert a is not None and b is not None
        if a != b and SIM_LAYERS[b] >= SIM_LAYERS[a]:
            wrong.append(f"{src} -> {dst} ({a}: layer {SIM_LAYERS[a]}, {b}: layer {SIM_LAYERS[b]})")
    assert not wrong, "imports pointing up or sideways:\n" + "\n".join(sorted(wrong))


def test_only_the_policies_import_policies_and_the_registry_no_compiled_core():
    """An engine takes a policy's state object, and the entry point resolves the engine
    through the registry: neither imports a policy module; the registry names policies
    by string and its one engine import is the Protocol's home, the reference loop."""
    g = sim_graph()
    into_policies = sorted(
        src for src, dst in g.edges if sim_part(dst) == "policies" and sim_part(src) != "policies"
    )
    assert not into_policies, into_policies
    assert {d for d in g.successors("hare_opt.sim.policy") if sim_part(d) == "engine"} == {
        "hare_opt.sim.engine.reference"
    }


def test_no_import_cycle_in_the_simulator_counting_annotations():
    g = sim_graph()
    assert len(g) > 20 and g.number_of_edges() > 40  # the scan sees the package
    found = sorted(sorted(c) for c in nx.simple_cycles(g))
    assert nx.is_directed_acyclic_graph(g), f"import cycles: {found[:5]}"


def test_the_sim_scan_counts_function_and_annotation_imports():
    g = sim_graph()
    # an annotation-only import (TYPE_CHECKING) and a top-level one are both edges
    assert g.has_edge("hare_opt.sim.engine.compiled", "hare_opt.sim.engine.reference")
    assert g.has_edge("hare_opt.sim.simulator", "hare_opt.sim.engine.compiled")
    cyclic = nx.DiGraph([("a", "b"), ("b", "a")])
    assert not nx.is_directed_acyclic_graph(cyclic)


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import hare_opt.model\n", {"hare_opt.model"}),
        ("from hare_opt.model import errors\n", {"hare_opt.model.errors"}),
        ("from hare_opt.model import Instance\n", {"hare_opt.model"}),
        ("from . import options\n", {"hare_opt.model.options"}),
        ("from ..checker import check\n", {"hare_opt.checker.check"}),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import hare_opt.sim\n", set()),
        ("def f():\n    from hare_opt import checker\n", {"hare_opt.checker"}),
    ],
)
def test_the_scanner_sees_what_python_imports(source, expected):
    assert imports_in(source, "hare_opt.model.result") == expected


def test_the_scanner_sees_annotation_imports_when_asked():
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import hare_opt.sim\n"
    assert imports_in(source, "hare_opt.model.result", typing=True) == {"hare_opt.sim"}


def test_an_upward_import_would_fail():
    # The rule the test enforces, on an edge that must never appear.
    a, b = part("hare_opt.model.result"), part("hare_opt.solvers.base")
    assert LAYERS[b] > LAYERS[a]
