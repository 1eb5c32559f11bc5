"""Options of the MILP backend; any other name is a HiGHS option or a CBC argument."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import highspy
import pulp

from hare_opt.model import OptionError
from hare_opt.model.options import Options, option
from hare_opt.solvers.milp.formulation import MAX_VARS
from hare_opt.util.highs import quiet_banner

#: Names that are shared options here, whatever the backend calls them.
SHARED = {"msg": "log", "output_flag": "log", "log_to_console": "log", "time_limit": "time_limit",
          "timeLimit": "time_limit", "threads": "threads", "random_seed": "seed"}


@dataclass(frozen=True)
class MilpOptions(Options):
    """Unknown names go to the backend: HiGHS option names (e.g. ``mip_rel_gap``) or
    arguments of PuLP's CBC command, checked against the backend's own list."""

    special: bool = option(True, doc="return the closed-form optimum of a special case "
                                     "at once (solvers/special.py)")
    backend: Literal["highs", "cbc"] = option("highs", doc="MIP solver behind PuLP")
    lp_bound: bool = option(True, doc="also solve the LP relaxation (stats['lp_bound'])")
    max_vars: int = option(MAX_VARS, lo=1, doc="refuse a model with more columns")
    start_heuristic: str | None = option("hare", doc="solver tried for the start besides "
                                                     "the rules (null: rules only)")
    cuts: bool = option(True, doc="model variant (formulation.build)")
    dense: bool = option(True, doc="model variant (formulation.build)")
    backend_options: dict[str, Any] = option(factory=dict, doc="options for the backend")

    owner = "solver 'milp'"

    def __post_init__(self) -> None:
        for key in self.backend_options:
            if key in SHARED:
                raise OptionError(f"is the shared option {SHARED[key]!r} here", option=key,
                                  owner=self.owner)
        if self.backend == "highs":
            _check_highs(self.backend_options, self.owner)
        else:
            _check_cbc(self.backend_options, self.owner)

    @classmethod
    def take_extra(cls, extra: Mapping[str, Any], owner: str) -> dict[str, Any]:
        return {"backend_options": dict(extra)}  # checked against the backend in __post_init__


def _check_highs(options: Mapping[str, Any], owner: str) -> None:
    """HiGHS only logs an unknown option name and goes on: a typo would pass unseen."""
    quiet_banner()
    probe = highspy.Highs()
    probe.setOptionValue("output_flag", False)
    for key in options:
        if probe.getOptionValue(key)[0] != highspy.HighsStatus.kOk:
            raise OptionError("is not a HiGHS option or an option of this solver (HiGHS "
                              "names are like 'mip_rel_gap'); its options: "
                              + ", ".join(MilpOptions.names()), option=key, owner=owner)


def _check_cbc(options: Mapping[str, Any], owner: str) -> None:
    known = {p for p in inspect.signature(pulp.PULP_CBC_CMD).parameters if p[0] != "_"} - {"self"}
    for key in options:
        if key not in known:
            raise OptionError(f"is not an argument of PuLP's CBC (PULP_CBC_CMD: "
                              f"{', '.join(sorted(known))})", option=key, owner=owner)
