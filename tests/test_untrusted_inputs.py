"""No input can run code, write outside its target or overflow (issue 35).

Each case is a command a user can type; each must do no harm: a crafted pickle named by
any option runs nothing, no option writes over a file that is not a declared output,
names that become paths are plain file names, and instances whose weighted sums could
leave 64 bits are refused at load naming the field.
"""

from __future__ import annotations

import io
import pickle
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from hare_opt.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "instances" / "small" / "small-00.json"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def refused(argv: list[str]) -> str:
    code, out, err = run(argv)
    lines = err.splitlines()
    assert code == 2, (code, out, err)
    assert len(lines) == 1 and lines[0].startswith("hare-opt"), err
    assert "Traceback" not in err
    return lines[0]


class _Payload:
    def __init__(self, mark: Path) -> None:
        self.mark = mark

    def __reduce__(self):
        return (Path.touch, (self.mark,))


@pytest.fixture
def evil(tmp_path) -> tuple[Path, Path]:
    mark = tmp_path / "PWNED"
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(_Payload(mark)))
    return path, mark


@pytest.mark.parametrize("solver,extra", [
    ("cpsat", "incumbent={evil}"),
    ("bnb", "incumbent={evil}"),
    ("portfolio", 'backend_options={{"bnb": {{"incumbent": "{evil}"}}}}'),
    ("portfolio", 'backend_options={{"cpsat": {{"incumbent": "{evil}"}}}}'),
])
def test_no_incumbent_option_and_a_pickle_runs_nothing(evil, solver, extra):
    path, mark = evil
    line = refused(["solve", str(SMALL), "--solver", solver, "--time-limit", "5",
                    "--option", extra.format(evil=path)])
    assert "incumbent" in line
    assert not mark.exists()


@pytest.mark.parametrize("solver", ["cpsat", "bnb"])
def test_the_instance_being_solved_is_not_overwritten(tmp_path, solver):
    inst = tmp_path / "s00.json"
    inst.write_bytes(SMALL.read_bytes())
    before = inst.read_bytes()
    refused(["solve", str(inst), "--solver", solver, "--time-limit", "5",
             "--option", f"incumbent={inst}"])
    assert inst.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s00.json"]


def test_a_pickle_given_as_any_input_path_runs_nothing(evil, tmp_path):
    # every input path is read by a format that cannot run code: a pickle is refused
    path, mark = evil
    for argv in (["solve", str(path), "--solver", "fifo"],
                 ["check", str(SMALL), str(path)],
                 ["check", str(path), str(path)]):
        refused(argv)
    assert not mark.exists()


# --- names that become paths (issue 35, 2) -----------------------------------------

SWEEP = 'fn = "arith"\nseeds = 1\n'


@pytest.mark.parametrize("name", ['"../x"', '"../../escaped"', '"/abs/x"', '"a\\\\b"',
                                  '"."', '".."', '""', "5", "[1]"])
def test_a_sweep_name_that_is_not_a_plain_file_name_is_refused(tmp_path, name):
    out = tmp_path / "out"
    config = tmp_path / "conf" / "s.toml"
    config.parent.mkdir()
    config.write_text(f"name = {name}\n{SWEEP}")
    victim = tmp_path / "x.csv"
    victim.write_text("mine\n")
    line = refused(["sweep", str(config), "--out-dir", str(out), "--no-progress"])
    assert "field 'name'" in line
    assert not out.exists() and victim.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["conf", "s.toml", "x.csv"]


def test_a_sweep_never_writes_over_its_config(tmp_path):
    config = tmp_path / "conf.csv"
    text = f'name = "conf"\n{SWEEP}'
    config.write_text(text)
    line = refused(["sweep", str(config), "--out-dir", str(tmp_path), "--no-progress"])
    assert "config file itself" in line and "field 'name'" in line
    assert config.read_text() == text and not (tmp_path / "cells").exists()
    link = tmp_path / "link.toml"  # through a link to it: the same file
    link.symlink_to(config)
    refused(["sweep", str(link), "--out-dir", str(tmp_path), "--no-progress"])
    assert config.read_text() == text


def test_a_plain_sweep_name_still_runs(tmp_path):
    config = tmp_path / "s.toml"
    config.write_text(f'name = "fine"\n{SWEEP}')
    code, _, err = run(["sweep", str(config), "--out-dir", str(tmp_path / "o"),
                        "--no-progress"])
    assert code == 0, err
    assert (tmp_path / "o" / "fine.csv").is_file()


@pytest.mark.parametrize("name", ["../x", "/abs", "a/b", "a\\b", ".", "..", ""])
def test_generate_name_must_be_a_plain_file_name(tmp_path, name):
    out = tmp_path / "d"
    line = refused(["generate", "random", "--out-dir", str(out), "--name", name])
    assert "--name" in line
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_generate_with_a_plain_name_writes_inside_the_folder(tmp_path):
    code, _, err = run(["generate", "random", "--out-dir", str(tmp_path / "d"),
                        "--name", "ok", "--count", "2"])
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["ok-0.json", "ok-1.json"]
