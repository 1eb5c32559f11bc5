"""Every output is written all or nothing, through one helper, and special files are
decided once: ``-`` and ``/dev/null`` written through, a named pipe written once complete
(refused when nobody reads it), a symbolic link followed, devices, sockets and folders
refused (docs/spec.md, "Outputs")."""

from __future__ import annotations

import io
import os
import re
import socket
import stat
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from hare_opt.cli.main import main
from hare_opt.io import (
    OutputError,
    atomic_open,
    atomic_write_text,
    destination,
    load_instance,
    load_result,
)
from hare_opt.plot import save_gantt

ROOT = Path(__file__).resolve().parents[1]
FIG1 = str(ROOT / "instances" / "fig1.json")
FIG1_C = str(ROOT / "instances" / "fig1" / "c.schedule.json")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if ".tmp" in p.name]


def test_an_interrupted_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "s.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    with pytest.raises(KeyboardInterrupt), atomic_open(path) as fh:
        fh.write("half of the new")
        raise KeyboardInterrupt
    assert path.read_text() == "old" and leftovers(tmp_path) == []
    atomic_write_text(path, "new")
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # the file's permissions are kept


def test_an_interrupted_plot_keeps_the_old_chart(tmp_path, monkeypatch):
    path = tmp_path / "chart.svg"
    path.write_text("<svg>old</svg>")
    real = Figure.savefig

    def cut_short(self, fname, *args, **kwargs):
        real(self, fname, *args, **kwargs)  # the whole chart, in the temporary file ...
        raise KeyboardInterrupt  # ... and then Ctrl-C before the rename

    monkeypatch.setattr(Figure, "savefig", cut_short)
    with pytest.raises(KeyboardInterrupt):
        save_gantt(load_instance(FIG1), load_result(FIG1_C).schedule, path)
    assert path.read_text() == "<svg>old</svg>" and leftovers(tmp_path) == []


def test_a_symlink_is_followed_and_kept(tmp_path):
    target = tmp_path / "target.json"
    link = tmp_path / "link.json"
    link.symlink_to(target.name)
    code, _, err = run(["solve", FIG1, "--solver", "wspt", "--out", str(link)])
    assert code == 0, err
    assert link.is_symlink() and load_result(target).solver == "wspt"


def test_standard_output_holds_the_output_alone():
    code, out, err = run(["solve", FIG1, "--solver", "wspt", "--out", "-"])
    assert code == 0 and out.lstrip().startswith("{")
    assert '"format": "hare-opt/schedule@1"' in out and "schedule -> standard output" in err
    code, out, err = run(["generate", "random", "--seed", "2", "--out", "-"])
    assert code == 0 and '"hare-opt/instance@1"' in out and "standard output" in err


def test_dev_null_is_written_through(tmp_path):
    assert destination(os.devnull).kind == "discard"
    for argv in (
        ["solve", FIG1, "--solver", "wspt", "--out", os.devnull],
        ["plot", FIG1, FIG1_C, "--out", os.devnull],
    ):
        code, _, err = run(argv)
        assert code == 0, err
    assert Path(os.devnull).is_char_device()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_gets_the_whole_output_or_is_refused(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    line = refused(["solve", FIG1, "--solver", "wspt", "--out", str(fifo)])
    assert "no process reads" in line and stat.S_ISFIFO(fifo.stat().st_mode)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader (the schedule < 64 KiB
    try:  # fits in the pipe's buffer)
        code, _, err = run(["solve", FIG1, "--solver", "wspt", "--out", str(fifo)])
        got = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert code == 0, err
    assert b'"hare-opt/schedule@1"' in got and got.rstrip().endswith(b"}")


def refused(argv: list[str]) -> str:
    code, out, err = run(argv)
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("hare-opt"), (code, err)
    return lines[0]


@pytest.mark.parametrize("kind", ["device", "socket", "folder", "link loop", "slash"])
def test_special_files_are_refused_before_any_work(tmp_path, kind):
    if kind == "device":
        target = "/dev/zero"
        if not stat.S_ISCHR(os.stat(target).st_mode):  # what the case assumes
            pytest.skip("/dev/zero is not a character device on this machine")
    elif kind == "link loop":
        target = str(tmp_path / "loop")
        os.symlink(target, target)
    elif kind == "slash":
        target = str(tmp_path / "new.json") + "/"
    elif kind == "socket":
        target = str(tmp_path / "s.sock")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(target)
    else:
        target = str(tmp_path)
    for argv in (
        ["solve", FIG1, "--solver", "wspt", "--out", target],
        ["plot", FIG1, FIG1_C, "--out", target],
        ["simulate", "--instance", FIG1, "--no-progress", "--out", target],
        ["generate", "random", "--out", target],
    ):
        refused(argv)
    with pytest.raises(OutputError):
        atomic_write_text(target, "x")


def test_plot_needs_a_format_it_can_name():
    assert "suffix chooses the format" in refused(["plot", FIG1, FIG1_C, "--out", "-"])


#: Where files are written without ``hare_opt.io.output``, and why that is right.
RAW_WRITERS = {
    # items draw (plot.style.save_figure) into the temporary path reproduce.run_items
    # gives them; plot.style.write_figure (charts a user names) into one from atomic_path
    ("hare_opt/plot/style.py", "savefig("): "draws into a path from atomic_path",
    ("hare_opt/cli/commands/simulate.py", "to_csv("): "writes into a path from atomic_path",
    ("hare_opt/sim/results.py", "to_csv("): "writes into a path from atomic_path",
    # the portfolio's shared incumbent, in its private mkdtemp folder (no user names it):
    # its own temporary file (O_NOFOLLOW) + rename, under a lock file
    ("hare_opt/solvers/incumbent.py", "json.dump("): "tmp + os.replace under the lock",
    ("hare_opt/solvers/incumbent.py", "os.replace("): "tmp + os.replace under the lock",
}
WRITES = re.compile(
    r"(?<!\w)(?:write_text\(|write_bytes\(|open\([^)]*['\"][wax]b?\+?['\"]|"
    r"os\.replace\(|os\.rename\(|mkstemp\(|savefig\(|to_csv\((?!index=|\))|"
    r"json\.dump\()"
)


def test_every_writer_goes_through_the_one_helper():
    found = set()
    for path in sorted((ROOT / "hare_opt").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "hare_opt/io/output.py":
            continue
        for line in path.read_text().splitlines():
            for m in WRITES.finditer(line):
                pattern = m.group(0)
                key = (
                    "open("
                    if pattern.startswith("open(")
                    else "to_csv("
                    if pattern.startswith("to_csv(")
                    else pattern
                )
                found.add((rel, key))
    assert found <= set(RAW_WRITERS), sorted(found - set(RAW_WRITERS))
    assert set(RAW_WRITERS) <= found, sorted(set(RAW_WRITERS) - found)  # no stale excuse
