"""The API reference builds from the docstrings with no warning and covers every public
module, and the docs name no work sessions, issue numbers or other traces of how the
project was made (a reader cannot resolve them)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_api_reference_builds_without_warnings(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(ROOT / "docs" / "api"),
            str(tmp_path / "html"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "html" / "solvers.html").exists()


def test_docs_do_not_refer_to_work_sessions():
    pattern = re.compile(r"\b(session|issue|stop) #?\d+\b|\(#\d+\)", re.IGNORECASE)
    texts = [
        *ROOT.glob("*.md"),
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "docs").rglob("*.rst"),
        *(ROOT / "instances").rglob("*.md"),
        *(ROOT / "experiments").rglob("*.md"),
        *(ROOT / "hare_opt").rglob("*.md"),
        *(ROOT / "hare_opt").rglob("*.py"),
        *(ROOT / "experiments").glob("*.py"),
    ]
    found = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in texts
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "\n".join(found[:20])


#: Words that tell the project's history rather than the code: a reader cannot resolve
#: them (whose brief? which machine?), and a merge note is a task, not documentation.
HISTORY = re.compile(
    r"\bthe brief\b|\bdevelopment machine\b|\bdev machine\b|(?-i:\bTODO\b)|"
    r"\bwork session\b|\bmerge note\b",
    re.IGNORECASE,
)


def test_docs_and_code_carry_no_history_words():
    texts = [
        *ROOT.glob("*.md"),
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "docs").rglob("*.rst"),
        *(ROOT / "hare_opt").rglob("*.py"),
        *(ROOT / "hare_opt").rglob("*.md"),
        *(ROOT / "experiments").glob("*.py"),
        *(ROOT / "experiments").rglob("*.md"),
    ]
    found = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in texts
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert not found, "\n".join(found[:20])


def public_modules() -> list[str]:
    """Every module of the package that is not private (no part starts with ``_``);
    packages count through their modules."""
    out = []
    for path in (ROOT / "hare_opt").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if path.name == "__init__.py" or any(p.startswith("_") for p in parts):
            continue
        out.append(".".join(parts))
    return sorted(out)


def test_the_api_reference_covers_every_public_module():
    documented = set()
    for page in (ROOT / "docs" / "api").glob("*.rst"):
        documented |= set(re.findall(r"automodule:: (\S+)", page.read_text()))
    missing = [m for m in public_modules() if m not in documented]
    assert not missing, f"add these to docs/api/*.rst: {missing}"


def test_generated_tables_match_the_registries():
    from hare_opt.sweeps.doc_tables import TABLES, committed

    for name, (path, make) in TABLES.items():
        held = committed(name)
        assert held is not None, f"{path}: markers of table {name!r} missing"
        assert held == make(), (
            f"{path}: table {name!r} differs from the registry; run "
            "python -m hare_opt.sweeps.doc_tables"
        )


#: ``hare_opt.x.y`` or ``hare_opt.x:y`` as the docs name code (a trailing ``(`` allowed).
CODE_NAME = re.compile(r"\bhare_opt(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)?")
#: "`name` in `path.py`" and "`tests/file.py::test_name`".
NAME_IN_FILE = re.compile(
    r"`([A-Za-z_][\w.]*)(?:\([^`]*\))?` in `((?:hare_opt|experiments|"
    r"tests)/[\w/]+\.py)`"
)
TEST_NAME = re.compile(r"(tests/[\w/]+\.py)::(\w+)")


def _doc_pages() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "instances").rglob("*.md")),
        *sorted((ROOT / "experiments").rglob("*.md")),
    ]


def _resolves(name: str) -> bool:
    """Whether ``hare_opt.a.b[:c.d]`` names a module, or an attribute chain of one."""
    import importlib

    parts = name.replace(":", ".").split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def test_every_function_the_docs_name_exists_where_they_say():
    """A doc that names ``hare_opt.x.y`` (or "`f` in `hare_opt/x.py`", or a test by its
    node id) names something that exists there; the contributing guide's placeholder
    module ``x`` is the one exception."""
    missing = []
    for page in _doc_pages():
        text = page.read_text()
        where = page.relative_to(ROOT)
        for m in CODE_NAME.finditer(text):
            name = m.group(0).rstrip(".")
            if ".x." in name or name.endswith(".x") or ".x:" in name:
                continue  # docs/contributing.md's example of a new module
            if not _resolves(name):
                missing.append(f"{where}: {name}")
        for m in NAME_IN_FILE.finditer(text):
            name, path = m.groups()
            src = (ROOT / path).read_text() if (ROOT / path).exists() else ""
            last = name.split(".")[-1]
            if not re.search(
                rf"^\s*(?:def|class) {re.escape(last)}\b|^{re.escape(last)}\s*[:=]", src, re.M
            ):
                missing.append(f"{where}: {name} in {path}")
        for m in TEST_NAME.finditer(text):
            path, test = m.groups()
            src = (ROOT / path).read_text() if (ROOT / path).exists() else ""
            if not re.search(rf"def {test}\b", src):
                missing.append(f"{where}: {path}::{test}")
    assert not missing, missing


def test_the_name_check_catches_a_wrong_name():
    assert _resolves("hare_opt.examples.smith_counterexample")
    assert _resolves("hare_opt.bounds:paper_claim")
    assert not _resolves("hare_opt.examples.no_such_function")
    assert not _resolves("hare_opt.falsify.Space.no_such_field")
