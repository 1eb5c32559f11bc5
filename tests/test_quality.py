"""The quality measurement (hare_opt.sweeps.quality): references and ratios."""

from __future__ import annotations

import pandas as pd
from conftest import INSTANCES

from hare_opt.bounds import lower_bound
from hare_opt.io import load_instance
from hare_opt.model import Result, Schedule
from hare_opt.solvers import solve
from hare_opt.sweeps.quality import reference, score, summarise


def test_reference_is_opt_when_proved_else_the_highest_bound():
    inst = load_instance(INSTANCES / "fig1.json")
    opt = solve(inst, "cpsat", time_limit=10)
    assert reference(inst, opt) == (opt.objective, "opt", "cpsat")
    weak = Result("cpsat", "feasible", opt.schedule, opt.objective, lower_bound=1)
    value, kind, source = reference(inst, weak)
    assert (kind, source) == ("lb", "bounds") and value == lower_bound(inst)
    paper = Result("hare-paper", "feasible", Schedule.empty(), 99, lower_bound=value + 1)
    assert reference(inst, weak, {"hare-paper": paper})[1:] == ("lb", "relaxation")


def test_score_rows_and_summary():
    inst = load_instance(INSTANCES / "fig1.json")
    rows = score(inst, heuristics=["wspt", "fifo"], exact="cpsat", time_limit=10)
    assert [r["solver"] for r in rows] == ["wspt", "fifo"]
    for r in rows:
        assert r["reference_kind"] == "opt" and r["ratio"] == r["objective"] / r["reference"]
        assert r["ratio"] >= 1
    table = summarise(pd.DataFrame(rows))
    assert list(table["solver"]) == ["wspt", "fifo"]
    assert (table["vs_opt"] == 1).all() and (table["vs_lb"] == 0).all()
