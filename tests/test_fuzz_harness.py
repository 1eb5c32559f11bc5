"""The fuzz harness (experiments/fuzz_cli.py) judges a clean refusal of review case 1
instead of crashing on its empty standard output (which ended the whole run)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _fuzz():
    spec = importlib.util.spec_from_file_location("fuzz_cli", ROOT / "experiments" / "fuzz_cli.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fuzz_cli", mod)
    spec.loader.exec_module(mod)
    return mod


def test_bound_check_on_a_refusal_does_not_crash():
    fz = _fuzz()
    case = fz.Case(
        "review",
        "portfolio bound when every backend refuses",
        ["solve"],
        expect="any-clean",
        check=fz.bound_not_above(ROOT, "unused.json"),
    )
    run = fz.Run(
        case,
        2,
        "",
        "hare-opt solve: error: solver 'portfolio': no member takes instance 'big'\n",
        1.0,
    )
    fz.classify(run)
    assert (run.outcome, run.why) == ("refusal", "")


def test_bound_check_names_an_exit_0_without_json():
    fz = _fuzz()
    case = fz.Case(
        "review", "x", ["solve"], expect="any-clean", check=fz.bound_not_above(ROOT, "unused.json")
    )
    run = fz.Run(case, 0, "not json", "", 1.0)
    fz.classify(run)
    assert run.outcome == "wrong" and "JSON" in run.why
