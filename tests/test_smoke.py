from hypothesis import given
from strategies import instances, serial_schedule

from hare_opt.checker import check


@given(instances())
def test_serial_schedule_is_feasible(inst):
    rep = check(inst, serial_schedule(inst))
    assert rep.feasible, rep.violations
