"""Every figure gives a policy the same colour, and the three Hare variants differ."""

from __future__ import annotations

from hare_opt.plot.style import POLICY_COLORS, policy_color
from hare_opt.sweeps.items import ALL_POLICIES, PAPER_HARE


def test_every_simulator_policy_has_its_own_fixed_colour():
    colours = [policy_color(p) for p in dict.fromkeys([*ALL_POLICIES, *PAPER_HARE])]
    assert len(set(colours)) == len(colours)
    assert all(p in POLICY_COLORS for p in ALL_POLICIES)


def test_an_unknown_policy_gets_the_same_spare_colour_every_time():
    assert policy_color("my-policy") == policy_color("my-policy")
    assert policy_color("my-policy") not in POLICY_COLORS.values()
