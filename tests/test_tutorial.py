"""docs/tutorial.md runs as written: every code block, in order, in a fresh folder.

``bash`` blocks run in bash (``set -e``) with this environment's ``hare-opt`` and
``python`` first on the PATH; a ``python file=NAME`` block is written to NAME for the
blocks after it. The folder sees the repository's ``instances/`` and nothing else.
Each block has a time bound (a hung block fails, it does not hang CI).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"
BLOCK = re.compile(r"^```(bash|python)(?: file=(\S+))?\n(.*?)^```$", re.M | re.S)
#: Seconds one block may take before it counts as hung (the whole page takes about two
#: CPU-minutes on an idle machine).
BOUND_S = 900


def blocks() -> list[tuple[str, str | None, str]]:
    return [(m.group(1), m.group(2), m.group(3)) for m in BLOCK.finditer(TUTORIAL.read_text())]


def test_the_tutorial_runs_as_written(tmp_path):
    (tmp_path / "instances").symlink_to(ROOT / "instances")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(tmp_path),
    }
    ran = 0
    for lang, name, code in blocks():
        if lang == "python":
            assert name, f"a python block without file=NAME:\n{code}"
            (tmp_path / name).write_text(code)
            continue
        done = subprocess.run(
            ["bash", "-e", "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=BOUND_S,
        )
        assert done.returncode == 0, f"{code}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        ran += 1
    assert ran >= 8
    made = {p.name for p in tmp_path.iterdir()}
    assert {
        "fig1.hare.png",
        "cdf.png",
        "hare.png",
        "hunt.json",
        "hunt.schedule.json",
        "jobs.csv",
    } <= made, made


def test_the_tutorial_is_linked_from_the_readmes():
    assert "docs/tutorial.md" in (ROOT / "README.md").read_text()
    assert "tutorial.md" in (ROOT / "docs" / "README.md").read_text()
    kinds = [lang for lang, _, _ in blocks()]
    assert kinds.count("python") >= 4 and kinds.count("bash") >= 8
