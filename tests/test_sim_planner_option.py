"""A plan follower's planner option is ``planner``; ``solver``, its old name, still works
with one DeprecationWarning and gives the same run."""

from __future__ import annotations

import warnings

import pytest

from hare_opt.generators import random_instance
from hare_opt.model import OptionError
from hare_opt.sim import simulate
from hare_opt.sim.policy import get_policy


def test_planner_names_the_planner():
    assert get_policy("hare", planner="wspt").planner_name == "wspt"
    assert get_policy("hare:planner=eft").planner_name == "eft"
    assert get_policy("hare-paper").planner_name == "hare-paper"


def test_solver_is_read_as_planner_with_one_deprecation_warning():
    inst = random_instance(2, n_jobs=4, n_gpus=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = simulate(inst, "hare", solver="wspt")
    notes = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(notes) == 1, [str(w.message) for w in caught]
    assert "'solver' is deprecated, use 'planner'" in str(notes[0].message)
    assert "\n" not in str(notes[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the new name warns nothing
        new = simulate(inst, "hare", planner="wspt")
    assert old.metrics["objective"] == new.metrics["objective"]
    assert old.result.schedule.sorted() == new.result.schedule.sorted()
    assert old.result.stats["planner"] == new.result.stats["planner"] == "wspt"


def test_both_names_at_once_are_refused_by_name():
    with pytest.raises(OptionError, match="option 'solver'.*give planner only"):
        get_policy("hare", solver="wspt", planner="eft")
