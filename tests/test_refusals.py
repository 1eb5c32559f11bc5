"""Every bad option, argument and file is refused before any work, in one line.

The cases are the ones found by fuzzing the command line (experiments/fuzz_cli.py runs
many more, out of process); each must exit 2 with exactly one line on stderr naming
what to fix, and no traceback. Importers must raise ``HareOptError`` naming the file.
Hypothesis strategies drive malformed traces and instance files.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import stat
import zipfile
from pathlib import Path

import pytest
from cli_run import refused as _refused
from cli_run import run
from hypothesis import given
from hypothesis import strategies as st

from hare_opt.io.gavel import load_gavel_throughputs
from hare_opt.io.philly import TraceError, load_philly_jobs
from hare_opt.model import HareOptError

ROOT = Path(__file__).resolve().parents[1]
FIG1 = str(ROOT / "instances" / "fig1.json")
FIG1_C = str(ROOT / "instances" / "fig1" / "c.schedule.json")
TRACE = "duration,num_gpus,submit_time\n" + "".join(
    f"{100 + i},{1 + i % 4},{10 * i}\n" for i in range(50)
)


def refused(argv: list[str]) -> str:
    return _refused(argv, silent=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("refusals")
    raw = TRACE.encode()
    for name, data in (
        ("gz", gzip.compress(raw)),
        ("bz2", bz2.compress(raw)),
        ("xz", lzma.compress(raw)),
    ):
        (d / f"t.csv.{name}").write_bytes(data[: len(data) // 2])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("t.csv", TRACE)
    (d / "t.csv.zip").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    (d / "inf.csv").write_text("duration,num_gpus\n100,1\ninf,2\n")
    (d / "frac.csv").write_text("duration,num_gpus\n100,1.5\n")
    (d / "ok.csv").write_text(TRACE)
    (d / "missing.toml").write_text('fn = "solve-random"\nseeds = 1\n')
    (d / "unknown.toml").write_text('fn = "arith"\nseeds = 1\n[fixed]\nbogus = 1\n')
    (d / "negative.toml").write_text('fn = "arith"\nseeds = -3\n')
    (d / "gavel-deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "gavel-bigint.json").write_text('{"v100": {"(\'A\', 1)": {"null": ' + "9" * 5000 + "}}}")
    (d / "gavel-dir").mkdir()
    os.symlink(d / "loop", d / "loop")
    (d / "inst.json").write_text(Path(FIG1).read_text())
    huge = {
        "format": "hare-opt/instance@1",
        "name": "huge",
        "time_unit": "s",
        "gpus": [{"id": "g0", "type": "A"}, {"id": "g1", "type": "B"}],
        "jobs": [
            {"id": "j0", "rounds": 10**7, "tasks_per_round": 10**6, "task_time": {"A": 1, "B": 2}}
        ],
    }
    (d / "huge.json").write_text(json.dumps(huge))
    return {p.name: str(p) for p in d.iterdir()} | {"dir": str(d)}


# The fuzz list: tracebacks, hangs and wrong acceptances found before these checks.
CASES = [
    ["solve", FIG1, "--solver", "cpsat", "--option", "num_workers=abc"],
    ["solve", FIG1, "--solver", "cpsat", "--option", "time_limit=5"],
    ["solve", FIG1, "--solver", "milp", "--option", "time_limit=5"],
    ["solve", FIG1, "--option", "=3"],
    ["solve", FIG1, "--option", "budget"],
    ["solve", FIG1, "--solver", "bnb", "--option", "memo_mb=NaN"],
    *[
        ["solve", FIG1, "--solver", s, "--time-limit", v]
        for s in ("milp", "bnb", "portfolio")
        for v in ("nan", "inf", "-1", "0", "abc", "1e309")
    ],
    ["solve"],  # argparse: one line, not a usage block
    ["solve", FIG1, "--bogus"],
    ["frobnicate"],
    ["generate", "random", "--jobs", "10**30", "--out", "x.json"],
    ["generate", "random", "--jobs", "1" + "0" * 30, "--out", "x.json"],
    ["generate", "paper", "--batch-scale", "inf", "--out", "x.json"],
    ["generate", "random", "--eligibility", "1.5", "--out", "x.json"],
    ["plot", FIG1, FIG1_C, "--out", "x.png", "--dpi", "100000"],
    ["plot", FIG1, FIG1_C, "--out", "x.png", "--dpi", "nan"],
    ["simulate", "--workload", "paper", "--jobs", "1" + "0" * 30],
    ["simulate", "--workload", "paper", "--jobs", "10**30"],
    ["demo", "--time-limit", "-1"],
    ["demo", "--time-limit", "nan"],
    ["reproduce", "--only", ""],
    ["reproduce", "--only", "nosuch"],
    ["reproduce", "--only", "fig1", "--workers", "0"],
    ["falsify", "--solver", "hare", "--budget", "nan"],
]


# Options that used to be ignored or checked only after the work: refused before it.
LATE = [
    ["bound", FIG1, "--strong", "--strong-time-limit", "0"],
    ["bound", FIG1, "--strong", "--strong-time-limit", "nan"],
    ["bound", FIG1, "--strong-time-limit", "5"],  # without --strong: ignored before
    ["reproduce", "--only", "fig1", "--executor", "local", "--address", "tcp://127.0.0.1:8786"],
    ["reproduce", "--only", "fig1", "--executor", "dask", "--address", "not-a-url"],
    ["reproduce", "--only", "fig1", "--executor", "dask", "--address", "tcp://127.0.0.1:1"],
    ["falsify", "--solver", "hare", "--exact", "wspt"],  # proves nothing: burnt the budget
    ["falsify", "--solver", "hare", "--against", "bound", "--exact", "milp"],
    ["falsify", "--solver", "hare", "--types", "4"],
    ["simulate", "--workload", "paper", "--cluster", "V100:1000000000"],  # hung before
    ["simulate", "--workload", "paper", "--cluster", "V100:60000,T4:60000"],
    ["generate", "paper", "--cluster", "V100:1000000000", "--out", "x.json"],
    ["simulate", "--instance", FIG1, "--jobs", "5"],  # the file fixes the jobs
    ["simulate", "--instance", FIG1, "--regime", "paper"],
    ["simulate", "--workload", "random", "--regime", "paper"],
    ["solve", FIG1, "--out", "/dev/zero"],
    ["plot", FIG1, FIG1_C, "--out", "-"],
]


@pytest.mark.parametrize("argv", CASES + LATE, ids=lambda a: " ".join(a)[:60])
def test_bad_arguments_are_refused_in_one_line(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written; if it were, not in the repo
    if "/dev/zero" in argv and not stat.S_ISCHR(os.stat("/dev/zero").st_mode):
        pytest.skip("/dev/zero is not a character device on this machine")  # assumed
    refused(argv)
    assert not any(tmp_path.iterdir())


def test_falsify_refuses_its_outputs_before_the_search(tmp_path, monkeypatch):
    import hare_opt.cli.commands.falsify as cmd

    def search(*args, **kwargs):
        raise AssertionError("the search started")

    monkeypatch.setattr(cmd, "falsify", search)
    (tmp_path / "worst.schedule.json").mkdir()  # a file the command would write is a folder
    for out in (str(tmp_path), str(tmp_path / "worst.json"), "/dev/null", "-"):
        refused(["falsify", "--solver", "hare", "--budget", "600", "--no-progress", "--out", out])


def test_bare_command_says_why_it_exits_2():
    code, out, err = run([])
    assert code == 2 and "usage: hare-opt" in out
    assert err.splitlines() == ["hare-opt: error: a command is required (see 'hare-opt --help')"]


@pytest.mark.parametrize(
    "old, new, argv",
    [
        ("--quiet", "--no-progress", ["solve", FIG1, "--solver", "wspt"]),
        ("--summary-json", "--json", ["simulate", "--instance", FIG1, "--no-progress"]),
    ],
)
def test_old_spellings_work_for_one_release_with_a_notice(old, new, argv):
    code, out, err = run([*argv, old])
    # a cold numba cache adds its one-off compile notice; that line is not the point here
    notices = [ln for ln in err.splitlines() if "compiling numba kernels" not in ln]
    assert code == 0 and notices == [
        f"hare-opt {argv[0]}: warning: {old} is deprecated, use {new} (the old spelling goes "
        "in the next release)"
    ]

    def steady(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if "runtime" not in ln]

    assert steady(run([*argv, new])[1]) == steady(out)  # the same under the new spelling


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_the_old_folder_spelling_is_the_new_one_with_a_notice(command, tmp_path, monkeypatch):
    # ``--out FOLDER`` became ``--out-dir``: for one release the old spelling fills the new
    # option (the same folder is used), after one line saying so.
    folder = tmp_path / "o"
    if command == "sweep":
        cfg = tmp_path / "tiny.toml"
        cfg.write_text('name = "tiny"\nfn = "arith"\nseeds = 1\n[fixed]\nn = 10\n')
        argv = ["sweep", str(cfg), "--workers", "1", "--no-progress"]
    else:  # the items themselves take minutes: record where they would have gone
        import types

        import hare_opt.sweeps.reproduce as repro

        seen: list[str] = []

        def run_items(out, **kwargs):
            seen.append(str(out))
            return [types.SimpleNamespace(name="fig1", verdict="ok", seconds=0.0, ours="-")]

        monkeypatch.setattr(repro, "run_items", run_items)
        argv = ["reproduce", "--only", "fig1", "--no-progress"]
    code, out, err = run([*argv, "--out", str(folder)])
    assert code == 0, err
    assert err.splitlines() == [
        f"hare-opt {command}: warning: --out is deprecated, use "
        "--out-dir (the old spelling goes in the next release)"
    ]
    if command == "sweep":
        assert (folder / "tiny.csv").is_file()
    else:
        assert seen == [str(folder)]


@pytest.mark.parametrize(
    "name", ["t.csv.gz", "t.csv.bz2", "t.csv.xz", "t.csv.zip", "inf.csv", "frac.csv"]
)
def test_bad_traces_are_refused(files, name):
    line = refused(
        ["simulate", "--workload", "philly", "--trace", files[name], "--jobs", "3", "--no-progress"]
    )
    assert name in line
    with pytest.raises(TraceError, match=name):
        load_philly_jobs(files[name])


@pytest.mark.parametrize("name", ["gavel-deep.json", "gavel-bigint.json", "gavel-dir", "loop"])
def test_gavel_importer_errors_name_the_file(files, name):
    with pytest.raises(HareOptError, match=name):
        load_gavel_throughputs(files[name])


def test_trace_with_a_generated_workload_is_refused(files):
    line = refused(["simulate", "--workload", "paper", "--trace", files["ok.csv"], "--no-progress"])
    assert "--trace" in line and "philly" in line


@pytest.mark.parametrize(
    "name, word",
    [("missing.toml", "solver"), ("unknown.toml", "bogus"), ("negative.toml", "seeds")],
)
def test_bad_sweep_configs_are_refused_before_any_cell(files, name, word, tmp_path):
    line = refused(["sweep", files[name], "--out-dir", str(tmp_path / "o"), "--no-progress"])
    assert word in line
    assert not (tmp_path / "o").exists()


def test_an_output_never_replaces_an_input(files):
    before = Path(files["inst.json"]).read_bytes()
    for out in (files["inst.json"], str(Path(files["dir"]) / "." / "inst.json")):
        refused(["solve", files["inst.json"], "--out", out])
        refused(["plot", files["inst.json"], FIG1_C, "--out", out])
    assert Path(files["inst.json"]).read_bytes() == before


@pytest.mark.parametrize("out", ["chart", "folder"])
def test_plot_refuses_an_output_it_could_not_write(files, out):
    target = files["dir"] if out == "folder" else str(Path(files["dir"]) / "chart")
    refused(["plot", FIG1, FIG1_C, "--out", target])
    assert not Path(target).is_file()


@pytest.mark.parametrize(
    "solver", ["hare", "hare-paper", "cpsat", "milp", "bnb", "portfolio", "wspt", "fifo", "eft"]
)
def test_instances_beyond_a_solver_are_refused_up_front(files, solver):
    line = refused(["solve", files["huge.json"], "--solver", solver, "--time-limit", "5"])
    assert "1e+13 tasks" in line and "10,000,000" in line  # the size and the limit


def test_simulating_or_checking_a_huge_instance_is_refused_or_counted(files):
    line = refused(["simulate", "--instance", files["huge.json"], "--no-progress"])
    assert "1e+13 tasks" in line
    code, out, err = run(["check", files["huge.json"], FIG1_C, "--all"])
    assert code == 1 and err == "" and "missing" in out  # counted, not listed one by one


def test_solve_labels_its_lower_bound():
    code, out, _ = run(["solve", FIG1, "--solver", "hare"])
    assert code == 0
    line = next(ln for ln in out.splitlines() if "lower bound" in ln)
    assert "combinatorial bounds (no LP)" in line and "hare-opt bound" in line
    code, out, _ = run(["check", FIG1, FIG1_C])
    assert "average JCT                     5.667 0.5s (= 2.833 s)" in out  # rounded, in units
    numbers = [
        tok
        for ln in out.splitlines()
        for tok in ln.split()
        if "." in tok and tok.replace(".", "").isdigit()
    ]
    assert numbers and all(len(tok.split(".")[1]) <= 3 for tok in numbers)


# --- hypothesis: malformed traces and instance files ----------------------------------

CELLS = st.one_of(
    st.integers(-5, 10**6).map(str),
    st.sampled_from(
        ["inf", "-inf", "nan", "1.5", "", "abc", "1e400", "9" * 40, "0x10", " 7 ", "1,5"]
    ),
)


@st.composite
def broken_traces(draw) -> bytes:
    """A Philly-style CSV with hostile values, maybe compressed, maybe truncated."""
    header = draw(
        st.sampled_from(
            [
                "duration,num_gpus",
                "duration,num_gpus,submit_time",
                "runtime,gpus,timestamp",
                "a,b",
                "duration",
            ]
        )
    )
    ncol = header.count(",") + 1
    rows = draw(st.lists(st.lists(CELLS, min_size=ncol, max_size=ncol + 1), max_size=6))
    text = header + "\n" + "".join(",".join(r) + "\n" for r in rows)
    data = text.encode()
    if draw(st.booleans()):
        data = gzip.compress(data)
    cut = draw(st.integers(0, len(data)))
    return data[:cut] if draw(st.booleans()) else data


@given(broken_traces())
def test_any_trace_loads_cleanly_or_is_refused_naming_the_file(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("trace") / ("t.csv.gz" if data[:2] == b"\x1f\x8b" else "t.csv")
    path.write_bytes(data)
    try:
        df = load_philly_jobs(path)
    except TraceError as exc:
        assert path.name in str(exc) and "\n" not in str(exc)
        return
    import numpy as np

    assert np.isfinite(df["duration_s"]).all() and (df["duration_s"] >= 0).all()
    assert (df["num_gpus"] >= 1).all()


@st.composite
def mangled_instance_files(draw) -> bytes:
    """A valid instance file, then bytes cut, flipped or replaced."""
    data = bytearray(Path(FIG1).read_bytes())
    how = draw(st.sampled_from(["cut", "flip", "number", "nest"]))
    if how == "cut":
        return bytes(data[: draw(st.integers(0, len(data) - 1))])
    if how == "flip":
        for _ in range(draw(st.integers(1, 5))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)
    if how == "number":
        return bytes(data).replace(
            b'"rounds": 2',
            b'"rounds": '
            + draw(
                st.sampled_from([b"1e400", b"-0", b"2.0", b"9" * 5000, b"NaN", b"true", b"[2]"])
            ),
        )
    return b'{"format": "hare-opt/instance@1", "jobs": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"


@given(mangled_instance_files())
def test_any_instance_file_solves_or_is_refused_in_one_line(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("inst") / "i.json"
    path.write_bytes(data)
    code, out, err = run(["solve", str(path), "--solver", "wspt", "--json"])
    assert "Traceback" not in err
    if code == 0:  # the mangling left a valid instance
        assert json.loads(out)["status"] == "feasible"
    else:
        assert code == 2 and len(err.splitlines()) == 1 and str(path) in err


@pytest.mark.parametrize("answer", [b"", b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 100000])
def test_a_dask_address_that_is_not_dask_is_refused_in_time(answer, tmp_path, monkeypatch):
    """Something that accepts TCP at --address but is not a Dask scheduler (silent, or
    talking another protocol) is refused in one line naming --address, within the
    handshake's timeout (the handshake's own bound: the test would hang without it),
    before any work."""
    import socket
    import threading
    import time

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            if answer:
                conn.sendall(answer)
            time.sleep(30)  # keep the connection open and silent

    threading.Thread(target=serve, daemon=True).start()
    monkeypatch.chdir(tmp_path)
    try:
        line = refused(
            [
                "reproduce",
                "--only",
                "fig1",
                "--executor",
                "dask",
                "--address",
                f"tcp://127.0.0.1:{port}",
                "--out-dir",
                str(tmp_path / "out"),
            ]
        )
    finally:
        server.close()
    assert "--address" in line
    assert not (tmp_path / "out").exists()
