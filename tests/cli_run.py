"""The command line run in-process, as the tests of its refusals read it."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from hare_opt.cli.main import main


def run(argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``hare-opt argv``, in-process."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def refused(argv: list[str], *, silent: bool = False) -> str:
    """The one stderr line of a refusal (exit 2, no traceback; ``silent``: nothing on
    stdout either)."""
    code, out, err = run(argv)
    lines = err.splitlines()
    assert code == 2 and (out == "" or not silent), (code, out, err)
    assert len(lines) == 1 and lines[0].startswith("hare-opt"), err
    assert "Traceback" not in err
    return lines[0]
