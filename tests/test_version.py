"""Cache keys: a cell is keyed on the modules its process loaded and the data it read.

A cell runs in a process of its own group (``sweeps.worker``); what it loaded keys it,
so a change to code it never loaded (another policy, the command line, the verdicts)
keeps it current, and a change to code it loaded makes it stale, with the module named.
"""

from __future__ import annotations

import json

import pytest

from hare_opt.sweeps import Cell, Store, run_cells
from hare_opt.util import version


def _deps(store: Store, cell: Cell) -> dict[str, str]:
    return json.loads(store.path(cell).read_text())["payload"]["deps"]


def test_a_policy_cell_is_keyed_on_its_own_policy_only(tmp_path):
    cells = [
        Cell("simulate", {"seed": 0, "policy": p, "n_jobs": 4, "regime": "compressed"})
        for p in ("gavel-fifo", "hare", "hlas", "hare-paper")
    ]
    store = Store(tmp_path)
    run_cells(cells, store, workers=1, progress=False)
    fifo, hare, hlas, paper = (set(_deps(store, c)) for c in cells)
    assert "hare_opt.sim.simulator" in fifo and "hare_opt.sim.simulator" in hare
    assert "data:gpu_profiles.csv" in fifo  # data read are keyed
    assert "hare_opt.heuristics.hare" in hare
    for other in (
        "hare_opt.heuristics.hare",
        "hare_opt.sim.policies.hlas",
        "hare_opt.sim.policies.allox",
        "hare_opt.sim.policies.tiresias",
    ):
        assert other not in fifo, other  # never loaded by it
    assert "hare_opt.heuristics.hare" not in hlas
    # the paper's Algorithm 1 runs none of our heuristic's code, nor any gang policy's
    assert "hare_opt.heuristics.relaxation" in paper
    for other in (
        "hare_opt.heuristics.hare",
        "hare_opt.heuristics.planning",
        "hare_opt.heuristics.rounds",
        "hare_opt.sim.policies.gang",
        "hare_opt.sim.policies.hlas",
    ):
        assert other not in paper, other
    assert not {
        m
        for m in fifo | hare | hlas
        if m.startswith(("hare_opt.cli", "hare_opt.sweeps.items", "hare_opt.sweeps.verdicts"))
    }


def test_a_cell_goes_stale_with_what_it_loaded_and_names_it(tmp_path, monkeypatch):
    cell = Cell("arith", {"seed": 2, "n": 5})
    store = Store(tmp_path)
    run_cells([cell], store, workers=1, progress=False)
    assert store.state(cell).current
    real = version.code_hash

    def edited(path):
        return "edited" if path is not None and path.name == "cells.py" else real(path)

    monkeypatch.setattr(version, "code_hash", edited)
    st = store.state(cell)
    assert st.status == "stale" and st.changed == ("hare_opt.sweeps.cells",)
    assert store.load(cell) is None


def test_an_edit_to_one_policy_recomputes_that_policy_only(tmp_path, monkeypatch):
    cells = [
        Cell("simulate", {"seed": 1, "policy": p, "n_jobs": 3, "regime": "compressed"})
        for p in ("gavel-fifo", "hlas")
    ]
    store = Store(tmp_path)
    run_cells(cells, store, workers=2, progress=False)
    real = version.code_hash

    def edited(path):  # as if a comment were appended to hlas.py
        return "edited" if path is not None and path.name == "hlas.py" else real(path)

    monkeypatch.setattr(version, "code_hash", edited)
    fifo, hlas = (store.state(c) for c in cells)
    assert fifo.current
    assert hlas.status == "stale" and hlas.changed == ("hare_opt.sim.policies.hlas",)


def test_modules_a_child_process_loaded_are_keyed_too():
    before = set(version.loaded_modules())
    version.note_modules(["hare_opt.solvers.bnb.solver", "numpy", "hare_opt.no_such_module"])
    try:
        got = set(version.loaded_modules()) - before
        assert got <= {"hare_opt.solvers.bnb.solver"}  # only the package's, real
        assert "hare_opt.solvers.bnb.solver" in version.loaded_modules()
    finally:
        version._USED["modules"].discard("hare_opt.solvers.bnb.solver")


def test_a_cell_records_its_wall_and_cpu_time_and_libraries(tmp_path):
    store = Store(tmp_path)
    cell = Cell("arith", {"n": 200_000, "seed": 3})
    run_cells([cell], store, workers=1, progress=False)
    wall, cpu = store.cost(cell)
    assert wall > 0 and 0 < cpu < 60
    env = json.loads(store.path(cell).read_text())["payload"]["env"]
    assert env["numpy"] != "absent" and env["python"].startswith("3.")


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_the_store_refuses_what_is_not_a_regular_file_at_a_cell_path(tmp_path, kind):
    import os

    from hare_opt.sweeps.store import StoreError

    store = Store(tmp_path / "s")
    cell = Cell("arith", {"n": 5, "seed": 1})
    (tmp_path / "s").mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    if kind == "symlink":
        store.path(cell).symlink_to(target)
    else:
        os.mkfifo(store.path(cell))
    with pytest.raises(StoreError, match=str(store.path(cell))):
        store.state(cell)  # never followed, read or waited on
    with pytest.raises(StoreError, match="regular files"):
        store.save(cell, [{"x": 1}], wall_s=0.0, cpu_s=0.0, deps={})
    assert target.read_text() == "keep me"


def test_the_package_reads_its_data_files_in_one_place():
    """``generators.profiles.read_table`` notes each read (the key); no other module may
    open hare_opt/data, or a cell reading it would not be keyed on it."""
    root = version.ROOT
    readers = [
        p.relative_to(root).as_posix()
        for p in root.rglob("*.py")
        if "resources.files" in p.read_text() or '/ "data"' in p.read_text()
    ]
    assert sorted(readers) == ["generators/profiles.py", "util/version.py"]  # and hashes


def test_the_portfolio_reports_the_modules_its_children_ran():
    """A portfolio's backends run in child processes that load modules the parent never
    imports (the MILP's); the parent keys on them (``note_modules``), so a cell that ran
    the portfolio goes stale when the MILP's code changes."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from hare_opt.generators import random_instance\n"
        "from hare_opt.solvers import solve\n"
        "from hare_opt.util import version\n"
        "inst = random_instance(3, n_jobs=8, n_gpus=3, rounds=(2, 4), tasks_per_round=(1, 3),"
        " sync=(0, 2), switch_overhead=(0, 2))\n"
        "solve(inst, 'portfolio', time_limit=20)\n"
        "own = {m for m in sys.modules if m.startswith('hare_opt')}\n"
        "print(' '.join(sorted(set(version.loaded_modules()) - own)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    assert "hare_opt.solvers.milp.formulation" in out, out


def test_a_comment_docstring_or_layout_stales_nothing_a_code_edit_does(tmp_path):
    """Keys are of code: the syntax tree without docstrings."""
    base = tmp_path / "m.py"
    base.write_text('"""Doc."""\n\nX = 1\n\n\ndef f(a, b):\n    """Doc."""\n    return a + b\n')
    h = version.code_hash(base)
    same = tmp_path / "same.py"
    same.write_text(
        "'''Other doc.'''\nX = 1  # a comment\n\n\ndef f(\n    a,\n    b,\n):\n    return (a + b)\n"
    )
    assert version.code_hash(same) == h and h.startswith(version.CODE)
    other = tmp_path / "other.py"
    other.write_text('"""Doc."""\n\nX = 1\n\n\ndef f(a, b):\n    """Doc."""\n    return a - b\n')
    assert version.code_hash(other) != h
    string = tmp_path / "string.py"  # a string that is not a docstring is code
    string.write_text('"""Doc."""\n\nX = "1"\n\n\ndef f(a, b):\n    return a + b\n')
    assert version.code_hash(string) != version.code_hash(same)


def test_a_byte_keyed_cell_still_matches_and_is_rekeyed_by_code(tmp_path):
    cell = Cell("arith", {"seed": 3, "n": 5})
    store = Store(tmp_path)
    run_cells([cell], store, workers=1, progress=False)
    deps = _deps(store, cell)
    assert all(h.startswith(version.CODE) for k, h in deps.items() if not k.startswith("data:"))
    assert not version.KEYING & set(deps)
    # as an older run stored it: byte hashes, the keying module named
    old = {k: version.file_hash(version.module_file(k)) for k in deps}
    old["hare_opt.util.version"] = "0123456789abcdef"
    path = store.path(cell)
    doc = json.loads(path.read_text())
    doc["payload"]["deps"] = old
    from hare_opt.sweeps.store import _checksum

    doc["checksum"] = _checksum(doc["payload"])
    path.write_text(json.dumps(doc))
    assert store.state(cell).current  # the same bytes: current
    assert store.rekey(cell) and _deps(store, cell) == deps and store.state(cell).current
    assert not store.rekey(cell)  # nothing left to rewrite
    old["hare_opt.sweeps.cells"] = "fedcba9876543210"  # a byte hash that no longer matches
    doc["payload"]["deps"] = old
    doc["checksum"] = _checksum(doc["payload"])
    path.write_text(json.dumps(doc))
    assert store.state(cell).changed == ("hare_opt.sweeps.cells",)
    assert not store.rekey(cell)  # a stale key is never rewritten
