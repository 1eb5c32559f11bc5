"""The sweep engine: identical results on Dask, resume after a kill, corrupt files redone."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from hare_opt.sweeps import Cell, Store, Sweep, SweepError, run_cells, run_sweep
from hare_opt.sweeps.sweep import CellsFailed


def _sweep(**fixed) -> Sweep:
    return Sweep("t", "arith", {"n": 50, **fixed}, {"n": [10, 20, 30]}, [0, 1, 2])


def test_config_expands_grid_times_seeds(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text('fn = "arith"\nseeds = 2\n[fixed]\nsleep = 0\n[grid]\nn = [1, 2, 3]\n')
    sweep = Sweep.load(cfg)
    cells = sweep.cells()
    assert len(cells) == 6
    assert len({c.key for c in cells}) == 6
    assert {c.params["seed"] for c in cells} == {0, 1}


def test_bad_config_is_a_clear_error(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text('fn = "arith"\nbogus = 1\n')
    with pytest.raises(SweepError, match="bogus"):
        Sweep.load(cfg)


def test_dask_local_cluster_matches_local_executor(tmp_path):
    local = run_sweep(_sweep(), tmp_path / "a", executor="local", workers=2, progress=False)
    dask = run_sweep(_sweep(), tmp_path / "b", executor="dask", workers=2, progress=False)
    assert len(local) == 9
    assert local.equals(dask)


def test_rerun_skips_finished_cells(tmp_path, monkeypatch):
    from hare_opt.sweeps import executors

    store = Store(tmp_path)
    cells = _sweep().cells()
    sent: list[str] = []
    real = executors.message
    monkeypatch.setattr(executors, "message", lambda c: sent.append(c.key) or real(c))
    run_cells(cells, store, workers=1, progress=False)
    assert sorted(sent) == sorted(c.key for c in cells)
    run_cells(cells, store, workers=1, progress=False)
    assert len(sent) == 9  # nothing re-ran


def test_a_cell_listed_under_two_labels_runs_once_and_gives_both_rows(tmp_path):
    a = Cell("arith", {"seed": 1, "n": 10}, {"label": "a"})
    b = Cell("arith", {"seed": 1, "n": 10}, {"label": "b"})
    assert a.key == b.key
    df = run_cells([a, b], Store(tmp_path), workers=2, progress=False)
    assert list(df["label"]) == ["a", "b"] and df["sum"].nunique() == 1


def test_a_cell_process_that_dies_fails_its_cell_and_the_run_goes_on(tmp_path):
    from hare_opt.sweeps.cells import CELLS, register_cell

    register_cell("test-abort", "os:abort")  # the process dies (SIGABRT) inside the cell
    try:
        cells = [
            Cell("arith", {"seed": 0, "n": 10}),
            Cell("test-abort", {}),
            Cell("arith", {"seed": 2, "n": 10}),
        ]
        with pytest.raises(CellsFailed, match="1 of 3 cells failed.*process died"):
            run_cells(cells, Store(tmp_path), workers=1, progress=False)
        assert [Store(tmp_path).load(c) is not None for c in cells] == [True, False, True]
    finally:
        CELLS.remove("test-abort")


@pytest.mark.parametrize("workers", [1, 2])
def test_failed_cell_keeps_the_finished_ones(tmp_path, workers):
    store = Store(tmp_path)
    cells = _sweep(fail_seed=2).cells()
    with pytest.raises(CellsFailed, match="3 of 9 cells failed.*on purpose") as err:
        run_cells(cells, store, workers=workers, progress=False)
    done = [c for c in cells if store.load(c) is not None]
    failed = {f.cell.key for f in err.value.failures}
    # every cell but the failing ones was saved; the failing ones were not
    assert {c.key for c in done} == {c.key for c in cells} - failed
    assert all(c.params["seed"] == 2 for c in cells if c.key in failed)


def test_corrupt_and_partial_files_are_redone(tmp_path):
    store = Store(tmp_path)
    cells = _sweep().cells()
    first = run_cells(cells, store, workers=1, progress=False)
    truncated, garbage, tampered, foreign = (store.path(c) for c in cells[:4])
    truncated.write_text(truncated.read_text()[:40])
    garbage.write_text("not json at all")
    doc = json.loads(tampered.read_text())
    doc["payload"]["rows"][0]["sum"] += 1  # checksum no longer matches
    tampered.write_text(json.dumps(doc))
    foreign.write_text(store.path(cells[5]).read_text())  # another cell's result
    for c in cells[:4]:
        assert store.load(c) is None
    again = run_cells(cells, store, workers=1, progress=False)
    assert again.equals(first)


_KILL_SCRIPT = """
import sys
from hare_opt.sweeps import Sweep, run_sweep
if __name__ == "__main__":
    sweep = Sweep("t", "arith", {"n": 50, "sleep": float(sys.argv[2])}, {"n": [10, 20, 30]},
                  [0, 1, 2])
    run_sweep(sweep, sys.argv[1], executor="local", workers=1, progress=False)
"""


def test_killed_run_resumes_with_every_cell_once(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(_KILL_SCRIPT)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, str(script), str(out), "0.3"])
    cells_dir = out / "cells" / "t"
    deadline = time.time() + 60
    while time.time() < deadline:
        if cells_dir.is_dir() and len(list(cells_dir.glob("*.json"))) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = len(list(cells_dir.glob("*.json")))
    assert 3 <= finished < 9, "the kill should land midway"
    before = {p.name: p.stat().st_mtime_ns for p in cells_dir.glob("*.json")}
    subprocess.run([sys.executable, str(script), str(out), "0.3"], check=True)
    after = {p.name: p.stat().st_mtime_ns for p in cells_dir.glob("*.json")}
    assert all(after[name] == t for name, t in before.items())  # finished cells not redone
    sweep = Sweep("t", "arith", {"n": 50, "sleep": 0.3}, {"n": [10, 20, 30]}, [0, 1, 2])
    store = Store(cells_dir)
    assert all(store.load(c) is not None for c in sweep.cells())
    csv = (out / "t.csv").read_text().strip().splitlines()
    assert len(csv) == 1 + 9
    keys = [line.split(",")[-1] for line in csv[1:]]
    assert len(set(keys)) == 9  # every cell exactly once


def test_sweep_command_runs_and_resumes(tmp_path, capsys):
    from hare_opt.cli.main import main

    cfg = tmp_path / "s.toml"
    cfg.write_text('name = "cli"\nfn = "arith"\nseeds = 2\n[grid]\nn = [5, 6]\n')
    out = tmp_path / "out"
    assert main(["sweep", str(cfg), "--out-dir", str(out), "--no-progress"]) == 0
    first = (out / "cli.csv").read_text()
    assert len(first.strip().splitlines()) == 1 + 4
    assert main(["sweep", str(cfg), "--out-dir", str(out), "--no-progress"]) == 0
    assert (out / "cli.csv").read_text() == first
    bad = tmp_path / "bad.toml"
    bad.write_text('fn = "arith"\nnope = 1\n')
    capsys.readouterr()
    assert main(["sweep", str(bad), "--out-dir", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope" in err[0]


def test_sweep_command_with_failed_cells_exits_1_and_keeps_the_others(tmp_path, capsys):
    # Failed cells are not a refusal (2: nothing done): the others were computed and kept.
    from hare_opt.cli.main import main

    cfg = tmp_path / "f.toml"
    cfg.write_text('name = "f"\nfn = "arith"\nseeds = 3\n[fixed]\nfail_seed = 1\n')
    out = tmp_path / "out"
    assert main(["sweep", str(cfg), "--out-dir", str(out), "--workers", "1", "--no-progress"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "1 of 3 cells failed" in err[0] and "retries" in err[0]
    assert len(list((out / "cells" / "f").glob("*.json"))) == 2


def test_committed_configs_are_valid():
    from pathlib import Path

    from hare_opt.sweeps.cells import CELLS

    configs = sorted((Path(__file__).parents[1] / "experiments" / "configs").glob("*.toml"))
    assert configs
    for path in configs:
        sweep = Sweep.load(path)
        assert sweep.fn in CELLS, path
        assert sweep.cells()


def _write(readme, outcomes, **kw):
    from hare_opt.sweeps.catalog import ITEMS, NOTES
    from hare_opt.sweeps.readme import write_readme

    write_readme(readme, outcomes, False, items=ITEMS, notes=NOTES, **kw)


def _outcome(name: str, ours: str, verdict: str = "v"):
    import pandas as pd

    from hare_opt.sweeps.reproduce import Outcome

    return Outcome(name, "t", "c", ours, verdict, pd.DataFrame(), 1.0, 1, 0)


def test_reproduce_readme_keeps_sections_of_items_not_rerun(tmp_path):
    from hare_opt.sweeps.catalog import ITEMS

    names = list(ITEMS)
    readme = tmp_path / "README.md"
    _write(readme, [_outcome(n, f"first {n}") for n in names])
    _write(readme, [_outcome(names[1], "second")], keep=True)
    text = readme.read_text()
    heads = [ln[4:] for ln in text.splitlines() if ln.startswith("### ")]
    assert heads == names  # every item, in order
    assert "**Ours.** second" in text and f"first {names[1]}" not in text
    assert all(f"first {n}" in text for n in names if n != names[1])
    assert text.count("This run:") == 1 and f"Rerun of {names[1]} only" in text
    _write(readme, [_outcome(names[2], "third")], keep=True, version={"arith": "v3"})
    text = readme.read_text()  # every earlier run's line stays: each made some sections
    assert f"Rerun of {names[1]} only" in text and f"Rerun of {names[2]} only" in text
    assert "arith v3" in text and text.count("This run:") == 1


def test_reproduce_readme_names_items_not_run(tmp_path):
    from hare_opt.sweeps.catalog import ITEMS

    first = next(iter(ITEMS))
    _write(tmp_path / "README.md", [_outcome(first, "ours")])
    text = (tmp_path / "README.md").read_text()
    for name in ITEMS:
        assert f"### {name}" in text and f"[{name}](#{name})" in text
    assert text.count("**Verdict.** not run") == len(ITEMS) - 1


def test_the_readme_summary_gives_a_word_per_hare_and_a_tally(tmp_path):
    from hare_opt.sweeps.catalog import ITEMS
    from hare_opt.sweeps.readme import words

    v = (
        "hare-paper: not reproduced (AlloX better) / hare-paper:step3=start: partly "
        "(11-53%) / hare: reproduced"
    )
    assert words(v) == {
        "hare-paper": "not reproduced",
        "hare-paper:step3=start": "partly",
        "hare": "reproduced",
    }
    assert words("paper's alpha(2+alpha) claim refuted under step 3 phi; ours holds") == {
        "": "refuted"
    }
    # an input is labelled as input, whatever words follow it
    assert words("input (the paper's measurement): not reproduced here, only used") == {"": "input"}
    names = list(ITEMS)
    _write(tmp_path / "README.md", [_outcome(names[1], "x", v), _outcome(names[2], "y", v)])
    text = (tmp_path / "README.md").read_text()
    summary = text[text.index("## Summary") : text.index("## The run")]
    assert "`hare`: **2 of 2 reproduced**" in summary
    assert "`hare-paper`: **0 of 2 reproduced**, 2 not reproduced" in summary
    row = next(ln for ln in summary.splitlines() if ln.startswith(f"| [{names[1]}]"))
    assert row.count("**") == 6 and len(row) < 400  # a line, not a page
    # the summary comes first, the details after; each percentage defined once
    assert text.index("## Summary") < text.index("## Items") < text.index(f"### {names[1]}")
    assert text.count("*Reduction* of A against B") == 1


def test_the_provenance_line_says_what_its_hashes_mean(tmp_path):
    from hare_opt.sweeps.catalog import ITEMS
    from hare_opt.util.version import code_version

    _write(tmp_path / "README.md", [_outcome(next(iter(ITEMS)), "x")], version={"fig1": "ab12"})
    text = (tmp_path / "README.md").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("This run:"))
    assert "fig1 ab12" in line and f"this checkout's is {code_version()}" in line
    assert "same code as this checkout's" in line and "--verify" in line


def test_the_plan_counts_cells_and_estimates_from_recorded_costs(tmp_path):
    from hare_opt.sweeps.preview import CostBook, make_plan

    store = Store(tmp_path)
    done = [Cell("arith", {"seed": s, "n": 10}) for s in range(2)]
    run_cells(done, store, workers=1, progress=False)
    new = Cell("arith", {"seed": 7, "n": 10})
    plan = make_plan({"a": done, "b": [done[0], new]}, store, CostBook([store]))
    a, b = plan.items
    assert (a.cells, a.current, a.compute) == (2, 2, 0)
    assert (b.cells, b.shared, b.missing, b.unknown) == (1, 1, 1, 0)
    recorded = [store.cost(c)[1] for c in done]
    assert b.estimated_cpu_s == pytest.approx(sum(recorded) / 2)  # its peers' mean
    js = plan.as_dict()
    assert {"cells", "stale", "estimated_cpu_s"} <= set(js) and js["missing"] == 1


def test_a_file_of_an_older_format_is_stale_with_its_cost(tmp_path):
    """A sound file written in an older cell format is stale (recomputed), not corrupt,
    and what it cost still estimates the run."""
    import hashlib

    from hare_opt.sweeps.preview import CostBook, make_plan

    store = Store(tmp_path)
    cell = Cell("arith", {"seed": 3, "n": 10})
    payload = {
        "key": cell.key,
        "fn": "arith",
        "params": cell.params,
        "rows": [{"sum": 1}],
        "runtime_s": 2.0,
        "cpu_s": 1.5,
        "modules": ["hare_opt"],
        "code": "x",
    }
    check = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    tmp_path.mkdir(exist_ok=True)
    store.path(cell).write_text(
        json.dumps({"format": "hare-opt/cell@1", "checksum": check, "payload": payload})
    )
    st = store.state(cell)
    assert st.status == "stale" and st.changed == ("format hare-opt/cell@1",)
    plan = make_plan({"a": [cell]}, store, CostBook([store]))
    assert plan.items[0].stale == 1 and plan.items[0].estimated_cpu_s == 1.5
    run_cells([cell], store, workers=1, progress=False)
    assert store.state(cell).current


def test_a_new_cells_estimate_scales_with_its_job_count(tmp_path):
    """Only other job counts stored: their costs scaled by (jobs / theirs)^a, a fitted to
    the stored cells (here 2); with one job count only, a = 1; the same setting stored:
    its mean, unscaled."""
    from hare_opt.sweeps.preview import CostBook

    def sim(jobs, seed, policy="p", cluster="A:1"):
        return Cell(
            "simulate", {"policy": policy, "n_jobs": jobs, "seed": seed, "cluster": cluster}
        )

    store = Store(tmp_path / "a")
    for jobs, cpu in ((40, 1.0), (80, 4.0)):
        store.save(sim(jobs, 0), [], wall_s=cpu, cpu_s=cpu, deps={})
    book = CostBook([store])
    assert book.slope("simulate", repr("p")) == pytest.approx(2.0)
    assert book.estimate(sim(160, 5)) == pytest.approx(16.0)
    assert book.estimate(sim(80, 5)) == pytest.approx(4.0)  # its own setting: unscaled
    assert book.estimate(sim(160, 5, cluster="B:9")) == pytest.approx(16.0)
    assert book.estimate(sim(40, 1, policy="q")) is None  # nothing of that policy
    alone = Store(tmp_path / "b")
    alone.save(sim(40, 0), [], wall_s=2.0, cpu_s=2.0, deps={})
    assert CostBook([alone]).estimate(sim(200, 5)) == pytest.approx(10.0)  # a = 1
    # the run's own store first: a lender's cells of a group it holds are not mixed in
    assert CostBook([alone, store]).estimate(sim(160, 5)) == pytest.approx(8.0)


def test_importing_the_reproduction_leaves_the_matplotlib_backend_alone():
    """The items draw on ``Figure`` objects, not pyplot: a user's backend is theirs."""
    import subprocess
    import sys

    code = (
        "import matplotlib; matplotlib.use('svg')\n"
        "import hare_opt.sweeps.catalog, hare_opt.sweeps.items, hare_opt.sweeps.offline_items\n"
        "print(matplotlib.get_backend())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "svg"


def test_a_sensitivity_run_simulates_every_item_in_the_other_regime(tmp_path):
    from hare_opt.sweeps.reproduce import in_regime, plan_items

    base, _, _ = plan_items(tmp_path, quick=True)
    other, _, plan = plan_items(tmp_path, quick=True, regime="paper-heavy-sync")
    assert list(base) == list(other)
    sims = 0
    for name in base:
        assert len(base[name]) == len(other[name])
        for a, b in zip(base[name], other[name]):
            if a.fn == "simulate":
                sims += 1
                assert b.params == {**a.params, "regime": "paper-heavy-sync"}
                assert a.labels == b.labels and a.key != b.key
            else:
                assert a.key == b.key  # nothing else depends on the regime
    assert sims > 100 and plan.total().cells == len({c.key for cs in other.values() for c in cs})
    assert in_regime(base["fig12"], "paper") == base["fig12"]
    with pytest.raises(ValueError, match="regime"):
        in_regime(base["fig12"], "fast")
    for regime, rc in (("paper-heavy-sync", 0), ("fast", 2)):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "hare_opt.cli.main",
                "reproduce",
                "--quick",
                "--plan",
                "--only",
                "fig18",
                "--regime",
                regime,
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert run.returncode == rc, run.stderr
        assert ("fig18" in run.stdout) if rc == 0 else run.stderr.count("\n") == 1


def test_the_plan_followers_reserved_idle_is_reported():
    import pandas as pd

    from hare_opt.sweeps.items import disclose

    df = pd.DataFrame(
        {
            "policy": ["hare", "sched-homo", "allox", "hare"],
            "reserved_idle_share": [0.01, 0.0, 0.5, 0.03],
        }
    )
    text = disclose(df)
    assert "hare 2.00% [3.00%]" in text and "sched-homo 0.00% [0.00%]" in text
    assert "allox" not in text  # a gang policy holds GPUs for leases, reported apart
    assert disclose(pd.DataFrame({"policy": ["allox"]})) == ""
