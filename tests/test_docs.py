"""The API reference builds from the docstrings with no warning, and the docs name no
work sessions or issue numbers (a reader cannot resolve them)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_api_reference_builds_without_warnings(tmp_path):
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                          "html", str(ROOT / "docs" / "api"), str(tmp_path / "html")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "html" / "solvers.html").exists()


def test_docs_do_not_refer_to_work_sessions():
    pattern = re.compile(r"\b(session|issue|stop) #?\d+\b|\(#\d+\)", re.IGNORECASE)
    texts = [*ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md"), *(ROOT / "docs").rglob("*.rst"),
             *(ROOT / "instances").rglob("*.md"), *(ROOT / "experiments").rglob("*.md"),
             *(ROOT / "hare_opt").rglob("*.md"), *(ROOT / "hare_opt").rglob("*.py"),
             *(ROOT / "experiments").glob("*.py")]
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in texts
             for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, "\n".join(found[:20])
