"""hare-paper's order statistic (``order_kendall``) without scipy.stats: importing it took
over a second after the relaxation, inside the solve's time limit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st


@given(st.lists(st.integers(0, 10**6), min_size=0, max_size=300), st.randoms())
def test_the_discordant_share_is_kendall_s_distance(values, rnd):
    """hare-paper's order statistic without scipy.stats (over a second to import, after
    the relaxation, inside the limit): the same number as (1 - Kendall's tau) / 2."""
    from scipy.stats import kendalltau

    from hare_opt.heuristics.hare_paper import discordant_share

    n = len(values)
    a = np.argsort(np.argsort(values, kind="stable"), kind="stable")  # a ranking
    b = np.array(rnd.sample(range(n), n), dtype=np.int64)
    got = discordant_share(a, b)
    if n < 2:
        assert got == 0.0
        return
    tau = kendalltau(a, b).statistic
    assert got == pytest.approx((1 - tau) / 2, abs=1e-9)
