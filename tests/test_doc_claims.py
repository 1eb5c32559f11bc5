"""The numbers the docs quote about the committed instances are recomputed here, so that
they cannot drift from the code (or from the results file they cite).

A claim is marked in the Markdown source, invisible once rendered:

    <!-- claim: KIND ARG... -->TEXT<!-- /claim -->

and TEXT must be exactly what ``KINDS[KIND](*ARGS)`` gives today: a bound or objective
computed with the current code (``strong-bound``, ``bound``, ``hare-objective``,
``certified-gap``, ``bnb-proved``, ``bnb-open``: deterministic, node limits rather than
clocks), or a count from a committed results CSV that the text cites (``csv-*``). When a
change moves a number, this test names the file, the claim and both values; update the
text (or rerun the experiment the CSV comes from).
"""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from hare_opt.bounds import all_bounds, lower_bound
from hare_opt.io import load_instance
from hare_opt.model import ceil_bound
from hare_opt.solvers import solve

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
CLAIM = re.compile(r"<!-- claim: ([\w-]+)((?: [^ >]+)*) -->(.*?)<!-- /claim -->", re.S)
DOCS = [*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md"), *(ROOT / "instances").rglob("*.md")]


def _instance(name: str):
    folder = name.split("-")[0]
    return load_instance(ROOT / "instances" / folder / f"{name}.json")


def _set(name: str) -> list[Path]:
    return sorted(
        p
        for p in (ROOT / "instances" / name).glob(f"{name}-*.json")
        if not p.name.endswith(".schedule.json")
    )


@functools.cache
def _strong(name: str) -> float:
    from hare_opt.cli.commands.bound import strong

    value = strong(_instance(name))
    assert value is not None, f"the strong LP gave no value on {name}"
    return value


@functools.cache
def _hare(name: str) -> int:
    return int(solve(_instance(name), "hare").objective)


@functools.cache
def _bnb(set_name: str, nodes: str) -> tuple[list[str], int]:
    """The instances of a set bnb leaves open within ``nodes`` nodes, and the set's size."""
    files = _set(set_name)
    open_ = [
        p.stem
        for p in files
        if solve(load_instance(p), "bnb", work_limit=int(nodes)).status != "optimal"
    ]
    return open_, len(files)


def strong_bound(name: str) -> str:
    return f"{ceil_bound(_strong(name)):,}"


def bound(name: str, which: str) -> str:
    inst = _instance(name)
    bounds = all_bounds(inst)
    value = lower_bound(inst, bounds=bounds) if which == "lower_bound" else bounds[which]
    return f"{ceil_bound(value):,}"


def hare_objective(name: str) -> str:
    return f"{_hare(name):,}"


def certified_gap(name: str) -> str:
    return f"{100 * (_hare(name) / ceil_bound(_strong(name)) - 1):.1f} %"


def bnb_proved(set_name: str, nodes: str) -> str:
    open_, n = _bnb(set_name, nodes)
    return f"{n - len(open_)}/{n}"


def bnb_open(set_name: str, nodes: str) -> str:
    open_, _ = _bnb(set_name, nodes)
    return ", ".join(name if i == 0 else name.split("-")[-1] for i, name in enumerate(open_))


def csv_proved(file: str, set_name: str, solver: str) -> str:
    df = pd.read_csv(RESULTS / f"{file}.csv")
    rows = df[df.instance.str.startswith(f"{set_name}-") & (df.solver == solver)]
    return f"{int((rows.status == 'optimal').sum())}/{len(rows)}"


def csv_opt(file: str, set_name: str) -> str:
    df = pd.read_csv(RESULTS / f"{file}.csv")
    rows = df[(df.set == set_name)].drop_duplicates("instance")
    return f"{int((rows.reference_kind == 'opt').sum())} of {len(rows)}"


KINDS = {
    "strong-bound": strong_bound,
    "bound": bound,
    "hare-objective": hare_objective,
    "certified-gap": certified_gap,
    "bnb-proved": bnb_proved,
    "bnb-open": bnb_open,
    "csv-proved": csv_proved,
    "csv-opt": csv_opt,
}
#: Claims that take more than a few seconds: run in the slow sample (and `-m slow`).
FAST = {
    ("strong-bound", "paper-01"),
    ("certified-gap", "paper-01"),
    ("bound", "paper-01"),
    ("bound", "paper-04"),
}


def claims() -> list:
    out = []
    for path in DOCS:
        for m in CLAIM.finditer(path.read_text()):
            kind, args, text = m.group(1), tuple(m.group(2).split()), m.group(3)
            line = path.read_text()[: m.start()].count("\n") + 1
            cheap = (
                kind.startswith("csv-")
                or (kind, *args[:1]) in FAST
                or kind == "hare-objective"
                or (kind.startswith("bnb") and args[0] != "small")
            )
            out.append(
                pytest.param(
                    kind,
                    args,
                    text,
                    id=f"{path.name}:{line}:{kind} " + " ".join(args),
                    marks=() if cheap else pytest.mark.slow,
                )
            )
    return out


def test_the_docs_mark_their_claims():
    kinds = {p.values[0] for p in claims()}
    assert kinds == set(KINDS), f"unknown or unused claim kinds: {kinds ^ set(KINDS)}"


@pytest.mark.parametrize("kind, args, text", claims())
def test_a_claim_in_the_docs_is_what_the_code_computes(kind, args, text):
    shown = text.replace("**", "").strip()
    assert shown == KINDS[kind](*args), (kind, args)


def test_no_claim_quotes_a_bound_a_schedule_beats():
    # A consistency check between claims: a bound is never above a schedule's objective.
    for name in ("paper-01",):
        assert ceil_bound(_strong(name)) <= _hare(name) and math.isfinite(_strong(name))


def test_readme_names_every_tool_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    tools = [t for t in ("pytest", "ruff", "mypy") if re.search(rf"\b{t}\b", ci)]
    para = next(p for p in (ROOT / "README.md").read_text().split("\n\n") if ".ci/run" in p)
    assert [t for t in tools if t not in para] == []


def test_an_import_claim_in_contributing_holds():
    # contributing.md may say the command line imports lazily only while it does.
    import subprocess
    import sys

    text = (ROOT / "docs" / "contributing.md").read_text()
    if not re.search(r"imports? lazily|lazy import|on first use", text):
        return
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "hare_opt.cli.main", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    heavy = [
        m
        for m in ("scipy", "pandas", "ortools", "numba", "matplotlib")
        if re.search(rf"\|\s+{m}$", out.stderr, re.M)
    ]
    assert heavy == [], f"contributing.md says lazily, but --version imports {heavy}"
