"""Code versions of cached cells: what a cell can run is in its closure, nothing else.

The closure is read from the source (imports, parent packages, registry targets); the
run-time check below holds it to what a cell really imports, so a missed import
(which would let a stale cell pass as fresh) fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys

from hare_opt.sweeps import Cell, Store
from hare_opt.sweeps.sweep import cell_version
from hare_opt.util.version import closure, code_version


def test_closure_follows_imports_parents_and_registry_targets():
    c = closure("hare_opt.sim.policy")
    assert {"hare_opt", "hare_opt.sim"} <= c                      # parents run on import
    assert "hare_opt.util.registry" in c                            # a plain import
    assert "hare_opt.sim.policies.gang" in c                        # "module:Class" target
    assert "hare_opt.heuristics.listsched" in c                     # transitively


def test_the_command_line_and_the_verdicts_are_not_part_of_a_simulation_cell():
    c = closure("hare_opt.sweeps.cells")
    assert not {m for m in c if m.startswith("hare_opt.cli")}
    assert "hare_opt.sweeps.reproduce" not in c and "hare_opt.sweeps.catalog" not in c
    assert code_version("hare_opt.sweeps.cells") != code_version()


def test_cells_of_each_function_carry_their_own_version(tmp_path):
    store = Store(tmp_path)
    cell = Cell("arith", {"n": 5, "seed": 1})
    assert store.version(cell) == cell_version("arith") == code_version("hare_opt.sweeps.cells")
    store.save(cell, [{"x": 1}], 0.0)
    assert store.load(cell) == [{"x": 1}]
    assert Store(tmp_path, version="other").load(cell) is None  # other code: stale


def test_what_a_simulation_cell_imports_at_run_time_is_in_its_closure():
    code = ("import json, sys\n"
            "from hare_opt.sweeps import Cell\n"
            "from hare_opt.sweeps.sweep import run_cell\n"
            "*_, keyed = run_cell(Cell('simulate', dict(seed=0, policies=['gavel-fifo', "
            "'hare', 'hlas', 'srtf'], n_jobs=3, regime='compressed')))\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('hare_opt'))))\n"
            "print(json.dumps(keyed))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=600)
    loaded, keyed = (set(json.loads(line)) for line in out.stdout.strip().splitlines()[-2:])
    missed = loaded - closure("hare_opt.sweeps.cells")
    assert not missed, f"imported at run time but not in the static closure: {missed}"
    assert keyed == loaded                    # the cell's key lists what it loaded...
    assert "hare_opt.solvers.milp.backends" not in keyed  # ...so a CBC fix keeps it
    from hare_opt.sweeps.sweep import keyed_modules
    kept = keyed_modules("simulate", [*keyed, "hare_opt.cli.main", "hare_opt.sweeps.items"])
    assert kept == sorted(keyed & closure("hare_opt.sim.experiment"))  # the cell's own
    assert "hare_opt.sim.simulator" in kept and "hare_opt.cli.main" not in kept


def test_a_cell_records_its_wall_and_cpu_time(tmp_path):
    from hare_opt.sweeps import run_cells

    store = Store(tmp_path)
    cell = Cell("arith", {"n": 200_000, "seed": 3})
    run_cells([cell], store, workers=1, progress=False)
    wall, cpu = store.cost(cell)
    assert wall > 0 and 0 < cpu < 60


def test_a_cell_is_keyed_on_the_modules_it_loaded(tmp_path, monkeypatch):
    """Stale when a module it loaded changes or goes, not when another module does."""
    from hare_opt.util import version

    pkg = tmp_path / "hare_opt"
    (pkg / "sub").mkdir(parents=True)
    for name in ("__init__.py", "a.py", "b.py", "sub/__init__.py"):
        (pkg / name).write_text(f"# {name}\n")
    (pkg / "table.csv").write_text("x\n1\n")
    monkeypatch.setattr(version, "ROOT", pkg)
    version.modules_version.cache_clear()
    mods = ("hare_opt", "hare_opt.a", "hare_opt.sub")

    def key() -> str:
        version.modules_version.cache_clear()
        return version.modules_version(mods)

    first = key()
    (pkg / "b.py").write_text("# b changed\n")
    assert key() == first                                   # not loaded: still fresh
    (pkg / "a.py").write_text("# a changed\n")
    second = key()
    assert second != first                                  # loaded and changed: stale
    (pkg / "table.csv").write_text("x\n2\n")
    assert key() != second                                  # every data file counts
    third = key()
    (pkg / "a.py").unlink()
    assert key() != third                                   # loaded and gone: stale
    version.modules_version.cache_clear()


def test_a_stored_cell_carries_its_modules_and_goes_stale_with_them(tmp_path, monkeypatch):
    from hare_opt.sweeps import run_cells, sweep

    store = Store(tmp_path)
    cell = Cell("arith", {"n": 5, "seed": 2})
    run_cells([cell], store, workers=1, progress=False)
    payload = json.loads(store.path(cell).read_text())["payload"]
    assert "hare_opt.sweeps.cells" in payload["modules"]
    assert not [m for m in payload["modules"] if m.startswith("hare_opt.cli")]  # never run
    assert payload["package"] == code_version()
    assert store.versions([cell]) == {"arith": code_version()}
    assert store.load(cell) is not None
    monkeypatch.setattr(sweep, "modules_version", lambda modules: "changed")
    assert store.load(cell) is None                         # a loaded module changed
    monkeypatch.setenv("HARE_OPT_CODE_VERSION", payload["code"])
    assert store.load(cell) is not None                     # reused on purpose
