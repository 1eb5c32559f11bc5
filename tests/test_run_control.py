"""A solve's control is its ``Run``: declared phases on its clock, a sink set by ``solve``,
one owner of the compiled kernels, and signals turned into ``run.stop`` only at the
edges of the process (the command line, a portfolio child, ``on_signals``)."""

from __future__ import annotations

import ast
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hare_opt.io import load_instance
from hare_opt.model.options import Run
from hare_opt.model.phases import PHASES, Phase
from hare_opt.solvers import solve
from hare_opt.util import stopping

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hare_opt"
FIG1 = ROOT / "instances" / "fig1.json"
HARD = ROOT / "instances" / "small" / "small-07.json"
#: The process's edges and the drivers of whole commands: the only importers of the
#: signal discipline.
EDGES = {
    "hare_opt/cli/main.py",
    "hare_opt/cli/commands/falsify.py",
    "hare_opt/solvers/portfolio/solver.py",
    "hare_opt/solvers/library.py",
    "hare_opt/falsify.py",
    "hare_opt/sweeps/sweep.py",
}


def _imports_interrupt(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = {a.name for a in node.names}
            if node.module == "hare_opt.util.interrupt" or (
                node.module == "hare_opt.util" and "interrupt" in names
            ):
                return True
        if isinstance(node, ast.Import) and any(
            a.name == "hare_opt.util.interrupt" for a in node.names
        ):
            return True
    return False


def test_only_the_edges_import_the_signal_discipline():
    users = {
        str(p.relative_to(ROOT))
        for p in PACKAGE.rglob("*.py")
        if p.name != "interrupt.py" and _imports_interrupt(p)
    }
    assert users <= EDGES, sorted(users - EDGES)


def test_every_declared_phase_is_documented():
    import hare_opt.heuristics.hare_paper  # noqa: F401 - each backend declares its own
    import hare_opt.solvers.cpsat.solver  # noqa: F401
    import hare_opt.solvers.lns  # noqa: F401
    import hare_opt.solvers.portfolio.solver  # noqa: F401

    text = (ROOT / "docs" / "contributing.md").read_text()
    names = PHASES.names()
    assert len(names) >= 6
    for name in names:
        assert f"`{name}`" in text, name


def test_a_phase_gets_its_share_and_its_seconds_come_back():
    p = Phase("test.phase", 0.5, cap_s=3.0)
    run = Run(time_limit=10.0)
    with run.phase(p) as sub:
        assert sub.time_limit == pytest.approx(3.0)  # min(cap, 0.5 x ~10 s)
        assert sub.stop is run.stop
    assert run.spent["test.phase"] >= 0.0
    assert Phase("x", 0.5).limit(None, None) is None  # no limit, no cap: as long as it takes
    assert Phase("x", 0.5, cap_s=2.0).limit(None, None) == 2.0
    assert Phase("x", 0.2, of_limit=True).limit(10.0, 1.0) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="share"):
        Phase("bad", 1.5)


def test_a_solve_reports_the_seconds_of_its_phases():
    res = solve(load_instance(HARD), "cpsat", time_limit=4.0)
    phases = res.stats.phase_s
    assert phases is not None and {"exact.start-heuristic", "exact.start-rules"} <= set(phases)
    assert all(0.0 <= s <= 4.0 for s in phases.values()), phases


def test_the_sink_is_the_callers_and_silent_without_one():
    heard: list[tuple] = []
    solve(load_instance(FIG1), "hare-paper", progress=lambda *a: heard.append(a))
    assert any(a[0] == "hare-paper" for a in heard)  # it reports through its run now
    assert not Run().reporting  # built outside solve: nobody listens


def test_without_an_edge_no_search_registers_for_signals():
    from hare_opt.util import interrupt

    stop = threading.Event()
    with stopping.searching(stop):
        assert stop not in interrupt._events
    with stopping.signals_to(interrupt.watch), stopping.searching(stop):
        assert stop in interrupt._events
    assert stop not in interrupt._events


LIBRARY = """
import signal, sys, threading, os
import hare_opt
from hare_opt.util.interrupt import on_signals
inst = hare_opt.load_instance(sys.argv[1])
hare_opt.solve(inst, "hare")  # kernels loaded before the timer
threading.Timer(2.0, os.kill, args=(os.getpid(), signal.SIGINT)).start()
if sys.argv[2] == "front":
    res = hare_opt.solve(inst, "cpsat")  # no limit: only the signal ends it
else:
    with on_signals():
        res = hare_opt.solvers.solve(inst, "cpsat")
print(res.status, res.stats["stopped"])
"""


@pytest.mark.parametrize("how", ["front", "on_signals"])
def test_a_library_caller_gets_the_best_schedule_on_ctrl_c(how):
    """``hare_opt.solve`` is the library's edge; ``on_signals`` makes any code one."""
    out = subprocess.run(
        [sys.executable, "-c", LIBRARY, str(HARD), how],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-800:]
    assert out.stdout.split() == ["feasible", "interrupted"], out.stdout
