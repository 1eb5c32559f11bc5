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
