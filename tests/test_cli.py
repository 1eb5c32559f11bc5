"""The command line: ``check`` and ``plot`` outputs, exit codes, one-line errors."""

from __future__ import annotations

import io
import json
import random
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.figure import Figure
from strategies import broken_instance_docs, broken_schedule_docs, instances, list_schedule

from hare_opt.cli.main import _import_command, main
from hare_opt.io import dumps_instance, dumps_result, load_instance, save_result
from hare_opt.model import GPU, Instance, Job, Result, Schedule
from hare_opt.plot import gantt
from hare_opt.plot.gantt import MAX_LABELS

ROOT = Path(__file__).resolve().parents[1]
FIG1 = ROOT / "instances" / "fig1.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def fig1_schedule(name: str) -> str:
    return str(ROOT / "instances" / "fig1" / f"{name}.schedule.json")


def _write(text: str, name: str) -> str:
    path = Path(tempfile.mkdtemp(prefix="hare-cli-")) / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def run(argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``hare-opt argv``, in-process."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def one_line_error(argv: list[str], command: str = "check") -> str:
    """Run ``argv``; it must exit 2 with exactly one line on stderr and nothing on stdout."""
    code, out, err = run(argv)
    assert code == 2, (out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hare-opt {command}: error: "), err
    assert "Traceback" not in err
    return lines[0]


# --- check --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, total, seconds", [("a", 21, "10.5"), ("b", 18, "9"), ("c", 17, "8.5")]
)
def test_check_fig1(name, total, seconds):
    code, out, _ = run(["check", str(FIG1), fig1_schedule(name), "--json"])
    rep = json.loads(out)
    assert code == 0 and rep["feasible"] is True and rep["violations"] == []
    assert rep["objective"] == total
    code, out, _ = run(["check", str(FIG1), fig1_schedule(name)])
    assert code == 0
    assert "feasible" in out and f"{total} 0.5s (= {seconds} s)" in out


def test_check_reports_violations_and_exits_1():
    inst = load_instance(FIG1)
    sched = list_schedule(inst)
    rows = list(sched.tasks())
    rows[0] = rows[0]._replace(end=rows[0].end - 1)  # a duration defect
    bad = _write(dumps_result(Result("t", "feasible", Schedule.from_tasks(rows[:-1]))), "bad.json")
    code, out, _ = run(["check", str(FIG1), bad, "--json"])
    assert code == 1
    rep = json.loads(out)
    assert rep["feasible"] is False
    assert rep["counts"] == {"duration": 1, "missing": 1}
    assert rep["objective"] is None or isinstance(rep["objective"], int)
    code, out, _ = run(["check", str(FIG1), bad])
    assert code == 1
    assert "INFEASIBLE (2 violations)" in out and "  duration: job" in out


@given(broken_instance_docs())
def test_check_with_broken_instance_prints_one_line(case):
    doc, field, _ = case
    path = _write(json.dumps(doc), "inst.json")
    line = one_line_error(["check", path, fig1_schedule("a")])
    assert path in line and field in line


@given(broken_schedule_docs())
def test_check_with_broken_schedule_prints_one_line(case):
    doc, field = case
    path = _write(json.dumps(doc), "sched.json")
    line = one_line_error(["check", str(FIG1), path])
    assert path in line and field in line


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", "null", '"x"', '{"format": 1}'])
def test_check_with_garbage_files(text):
    path = _write(text, "garbage.json")
    one_line_error(["check", path, fig1_schedule("a")])
    one_line_error(["check", str(FIG1), path])


def test_check_missing_files():
    line = one_line_error(["check", "/nonexistent/i.json", fig1_schedule("a")])
    assert "/nonexistent/i.json" in line and "no such file" in line


# --- plot ---------------------------------------------------------------------------


def test_plot_writes_a_png():
    out = Path(tempfile.mkdtemp()) / "sub" / "fig1c.png"
    code, stdout, _ = run(
        ["plot", str(FIG1), fig1_schedule("c"), "--out", str(out), "--title", "Fig. 1 (c)"]
    )
    assert code == 0 and stdout.strip() == str(out)
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 5000


def test_plot_errors_are_one_line():
    out = str(Path(tempfile.mkdtemp()) / "x.png")
    one_line_error(["plot", "/nonexistent.json", fig1_schedule("c"), "--out", out], "plot")
    inst = load_instance(FIG1)
    res = Result("t", "feasible", Schedule.from_tasks([("J9", 0, 0, "GPU1", 0, 1)]))
    path = Path(tempfile.mkdtemp()) / "s.json"
    save_result(res, path)
    line = one_line_error(["plot", str(FIG1), str(path), "--out", out], "plot")
    assert "J9" in line and inst.name in line
    line = one_line_error(
        ["plot", str(FIG1), fig1_schedule("a"), "--out", out[:-4] + ".notaformat"], "plot"
    )
    assert "notaformat" in line


@given(instances(max_gpus=2, max_jobs=2), st.integers(0, 9))
def test_plot_any_small_schedule(inst, seed):
    sched = list_schedule(inst, random.Random(seed))
    fig = gantt(inst, sched, title="t")
    assert fig.axes[0].get_title() == "t"
    assert len(fig.axes[0].collections) >= 1


# --- the command registry ------------------------------------------------------------


def test_plot_one_task_and_a_dense_schedule():
    one = Instance((GPU("g", "A"),), (Job("j", {"A": 3}, switch_overhead=1),))
    fig = gantt(one, Schedule.from_tasks([("j", 0, 0, "g", 1, 4)]))
    ax = fig.axes[0]
    assert len(ax.collections) == 2  # the task and its setup
    assert [t.get_text() for t in ax.texts if " r" in t.get_text()] == ["j r0"]
    assert ax.get_xlabel() == "time (s)"
    host = Figure()
    _, right = host.subplots(1, 2)
    assert gantt(one, Schedule.empty(), ax=right) is host and right.get_title() == one.name
    # 120 GPUs, one job of long tasks among 30 of unit tasks: only long bars get a label.
    types = ("A", "B", "C")
    big = Instance(
        tuple(GPU(f"g{i}", types[i % 3]) for i in range(120)),
        (
            Job("long", dict.fromkeys(types, 60), tasks_per_round=120),
            *(
                Job(
                    f"t{i}",
                    dict.fromkeys(types, 1),
                    rounds=2,
                    tasks_per_round=20,
                    switch_overhead=1,
                )
                for i in range(30)
            ),
        ),
    )
    sched = list_schedule(big, random.Random(0))
    fig = gantt(big, sched)
    ax = fig.axes[0]
    assert fig.get_figheight() > 3 * gantt(one, Schedule.empty()).get_figheight()
    labels = [t.get_text() for t in ax.texts if " r" in t.get_text()]
    assert labels and set(labels) == {"long r0"} and len(labels) <= MAX_LABELS
    assert ax.get_legend() is None  # too many jobs for a legend
    assert {t.get_text() for t in ax.texts} - {"long r0"} == {"A (40)", "B (40)", "C (40)"}
    path = Path(tempfile.mkdtemp()) / "big.png"
    fig.savefig(path)
    assert path.read_bytes().startswith(PNG_MAGIC)


def test_broken_command_module_does_not_take_the_others_down():
    stub = _import_command("hare_opt.cli.commands._no_such_module", "ghost")
    assert stub.NAME == "ghost" and "unavailable" in stub.HELP
    with pytest.raises(Exception, match="command unavailable"):
        stub.run(None)


def test_no_command_prints_help():
    code, out, _ = run([])
    assert code == 2 and "check" in out and "plot" in out


def test_instance_file_written_by_the_library_loads():
    # The files the CLI reads are the ones the library writes: one format, one reader.
    path = _write(dumps_instance(load_instance(FIG1)), "fig1.json")
    code, out, _ = run(["check", path, fig1_schedule("b"), "--json"])
    assert code == 0 and json.loads(out)["objective"] == 18


@pytest.mark.parametrize(
    "solver, option, says",
    [
        ("bnb", "foo=1", "has no option 'foo'"),
        ("bnb", "memo_mb=-1", "option 'memo_mb': must be >= 0"),
        ("bnb", "work_limit=-1", "option 'work_limit': must be >= 0"),
        ("bnb", "work_limit=abc", "option 'work_limit': must be a number or null"),
        ("cpsat", "num_workers=2", "the shared option 'threads'"),
        ("wspt", "foo=1", "has no option 'foo'"),
        ("milp", "foo=1", "not a HiGHS option"),
        ("portfolio", "backends=bnb,cplex", "option 'backends': must be some of"),
    ],
)
def test_solve_rejects_an_unknown_or_bad_option_by_name(solver, option, says):
    line = one_line_error(
        ["solve", str(FIG1), "--solver", solver, "--option", option], command="solve"
    )
    assert says in line


def test_solve_shows_hare_papers_relaxation():
    code, out, _ = run(["solve", str(FIG1), "--solver", "hare-paper", "--json"])
    stats = json.loads(out)["stats"]
    assert code == 0 and stats["relaxation_optimal"] is True
    assert stats["relaxation_bound"] <= stats["relaxation_objective"] + 1e-6
    code, out, _ = run(["solve", str(FIG1), "--solver", "hare-paper"])
    assert code == 0 and "relaxation  objective" in out and "(optimal)" in out


def _starters() -> list[str]:
    from hare_opt.cli.commands.solve import STARTS_FROM
    from hare_opt.solvers import SOLVERS

    return SOLVERS.names(lambda s: s.kind in STARTS_FROM)


@pytest.mark.parametrize("solver", _starters())
def test_solve_continues_from_a_schedule_file(solver):
    # fig1's schedule (a) totals 21: every solver that takes a start says it began
    # from the file's schedule and returns one at least as good
    code, out, err = run(
        ["solve", str(FIG1), "--solver", solver, "--start", fig1_schedule("a")]
        + ["--time-limit", "20", "--json"]
    )
    assert code == 0, err
    got = json.loads(out)
    assert got["stats"]["start"] == "given" and got["stats"]["start_objective"] == 21
    assert got["objective"] <= 21 and (got["lower_bound"] or 0) <= got["objective"]
    code, out, err = run(["solve", str(FIG1), "--solver", solver, "--start", fig1_schedule("c")])
    assert code == 0 and "start       17 0.5s (= 8.5 s) (from " in out, err


def test_solve_start_refusals_name_the_option_and_the_file(tmp_path):
    a_file = fig1_schedule("a")
    line = one_line_error(["solve", str(FIG1), "--start", a_file], command="solve")
    assert "option '--start': solver 'hare' builds its own schedule" in line
    assert all(name in line for name in _starters())
    # a schedule of another instance: checked before any work, the file named
    other = tmp_path / "other.json"
    other.write_text(dumps_instance(Instance((GPU("g", "A"),), (Job("j", {"A": 3}),))))
    line = one_line_error(["solve", str(other), "--solver", "cpsat", "--start", a_file], "solve")
    assert f"option '--start': {a_file}: not a feasible schedule for this instance" in line
    line = one_line_error(["solve", str(FIG1), "--solver", "lns", "--start", str(FIG1)], "solve")
    assert "expected 'hare-opt/schedule@1'" in line
    line = one_line_error(
        ["solve", str(FIG1), "--solver", "lns", "--start", a_file, "--out", a_file], "solve"
    )
    assert "'--out'" in line and "also an input" in line
    line = one_line_error(["solve", str(FIG1), "--option", "hint=x"], "solve")
    assert "option 'hint': is set with --start" in line


@pytest.mark.parametrize("name", ["fig1.json", "tiny/tiny-00.json", "small/small-03.json"])
def test_bound_text_output_prints_every_line(name):
    path = Path(__file__).parents[1] / "instances" / name
    code, out, err = run(["bound", str(path), "--no-lp"])
    assert code == 0 and not err, err
    assert "approx_factor" in out and "approx_terms          theta" in out


# --- one vocabulary across commands -----------------------------------------------------


def test_the_option_example_in_solve_help_runs():
    import re

    buf = io.StringIO()
    with redirect_stdout(buf), pytest.raises(SystemExit):
        main(["solve", "--help"])
    text = " ".join(buf.getvalue().split())
    example = re.search(r"e\.g\. ((?:--solver \S+ )?--option \S+(?: --option \S+)*)", text)
    assert example, "solve --help has no --option example"
    code, out, err = run(["solve", str(FIG1), *example.group(1).split()])
    assert code == 0, err


def test_generate_paper_takes_a_named_cluster_and_the_reproductions_regime(tmp_path):
    from hare_opt.generators import TESTBED, get_regime, paper_instance

    out = tmp_path / "p.json"
    code, _, err = run(
        [
            "generate",
            "paper",
            "--cluster",
            "testbed",
            "--regime",
            "paper",
            "--jobs",
            "3",
            "--seed",
            "4",
            "--out",
            str(out),
        ]
    )
    assert code == 0, err
    reg = get_regime("paper")
    expected = paper_instance(
        4, 3, TESTBED, regime="paper", mean_interarrival=reg.mean_interarrival(15)
    )
    assert load_instance(out).jobs == expected.jobs


def test_simulate_runs_the_regime_reproduce_uses():
    # reproduce's simulate cells (sweeps.simulate) and simulate --regime paper see the
    # same workload, so their figures agree.
    from hare_opt.sweeps.simulate import simulate_cell

    code, out, err = run(
        [
            "simulate",
            "--workload",
            "paper",
            "--regime",
            "paper",
            "--jobs",
            "4",
            "--seed",
            "3",
            "--policies",
            "gavel-fifo",
            "--json",
            "--no-progress",
        ]
    )
    assert code == 0, err
    row = simulate_cell(seed=3, policy="gavel-fifo", n_jobs=4)[0]
    assert json.loads(out)["gavel-fifo"]["total_weighted_jct"] / 1000 == pytest.approx(
        row["total_weighted_jct_s"]
    )


def test_solve_json_stats_nest_as_json_not_python_reprs():
    import numpy as np

    from hare_opt.cli.commands.solve import _plain

    got = _plain(
        {
            "a": {"status": "x", "n": np.int64(3), "v": [1.5, float("inf")]},
            "arr": np.arange(3),
            "f": np.float64(2.5),
            "o": object,
        }
    )
    assert got["a"] == {"status": "x", "n": 3, "v": [1.5, None]}
    assert got["arr"] == [0, 1, 2] and got["f"] == 2.5 and isinstance(got["o"], str)
