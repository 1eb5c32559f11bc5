import pytest
from hypothesis import given
from strategies import instances

from hare_opt.checker import check
from hare_opt.solvers import solve


@pytest.mark.parametrize("rule", ["fifo", "wspt", "eft"])
@given(inst=instances())
def test_rules_give_checked_schedules(rule, inst):
    res = solve(inst, rule)  # solve() already runs the checker; assert it independently too
    rep = check(inst, res.schedule)
    assert rep.feasible, rep.violations
    assert rep.objective == res.objective
    assert res.status == "feasible"
