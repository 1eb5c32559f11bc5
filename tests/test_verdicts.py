"""Reproduction verdicts are computed from the paper's numbers: each claim kind says
"reproduced" only inside its tolerance, "partly" when only the direction holds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hare_opt.sweeps.verdicts import (
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    Best,
    Change,
    ReductionRange,
    SmallEffect,
    Values,
    combine,
    mean_ci,
    paired_reductions,
    reduction_table,
)


def runs(ratio: dict[str, list[float]], label: str = "s") -> pd.DataFrame:
    """hare at 100 on every seed, each other policy at 100 / (1 - reduction)."""
    rows = []
    for policy, reds in ratio.items():
        for seed, r in enumerate(reds):
            rows.append({"label": label, "seed": seed, "policy": "hare", "jct": 100.0})
            rows.append({"label": label, "seed": seed, "policy": policy,
                         "jct": 100.0 / (1 - r / 100)})
    return pd.DataFrame(rows).drop_duplicates(["label", "seed", "policy"])


def test_mean_ci_matches_students_t():
    m, lo, hi = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert m == 2.5 and lo == pytest.approx(2.5 - 3.182446 * np.std([1, 2, 3, 4], ddof=1) / 2,
                                            rel=1e-5) and hi - m == pytest.approx(m - lo)
    assert mean_ci([5.0]) == (5.0, 5.0, 5.0)


def test_paired_reductions_are_per_seed():
    df = runs({"allox": [50.0, 60.0]})
    red = paired_reductions(df, "hare", "allox", metric="jct")
    assert red["reduction_pct"].round(6).tolist() == [50.0, 60.0]


@pytest.mark.parametrize("reds, status", [
    ({"a": [55, 60, 58], "b": [70, 72, 69]}, REPRODUCED),       # inside 47.6-75.3
    ({"a": [5, 6, 7], "b": [10, 12, 11]}, PARTLY),              # better, far below the range
    ({"a": [-5, -6, -7], "b": [60, 60, 61]}, NOT_REPRODUCED),   # a baseline beats ours
    ({"a": [3, -3, 2], "b": [60, 61, 62]}, NOT_REPRODUCED),     # not significant
])
def test_reduction_range(reds, status):
    table = reduction_table(runs(reds), "hare", metric="jct")
    assert ReductionRange(47.6, 75.3, ("a", "b")).judge(table).status == status


def test_best_needs_significance():
    assert Best().judge(reduction_table(runs({"a": [10, 11, 12]}), "hare",
                                        metric="jct")).status == REPRODUCED
    assert Best().judge(reduction_table(runs({"a": [10, -11, 1]}), "hare",
                                        metric="jct")).status == PARTLY


def test_values_changes_and_effects():
    claim = Values({"hare": 90.5, "allox": 66.7, "homo": 56.5})
    close = {"hare": (88.0, 85, 91), "allox": (70.0, 65, 75), "homo": (50.0, 45, 55)}
    assert claim.judge(close).status == REPRODUCED
    far = {"hare": (98.0, 97, 99), "allox": (97.0, 96, 98), "homo": (95.0, 94, 96)}
    assert claim.judge(far).status == PARTLY            # same order, numbers off
    flipped = {"hare": (90.0, 89, 91), "allox": (50.0, 45, 55), "homo": (66.0, 60, 70)}
    assert claim.judge(flipped).status == NOT_REPRODUCED
    assert Change(31.2).judge((25.0, 20.0, 30.0)).status == REPRODUCED
    assert Change(31.2).judge((1.3, 0.5, 2.0)).status == PARTLY
    assert Change(31.2).judge((1.3, -0.5, 2.0)).status == NOT_REPRODUCED
    assert SmallEffect(10).judge({"B0/2": (3.0, 1, 5)}).status == REPRODUCED
    assert SmallEffect(10).judge({"2B0": (-30.0, -35, -25)}).status == NOT_REPRODUCED


def test_combine_takes_the_weakest():
    v = combine(Best().judge(pd.DataFrame()), Change(31.2).judge((25.0, 20, 30)))
    assert v.status == NOT_REPRODUCED and "no measurement" in v.reason
