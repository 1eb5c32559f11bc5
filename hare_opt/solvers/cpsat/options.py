"""Options of the CP-SAT backend: model switches, phases, and CP-SAT parameters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from hare_opt.model import OptionError
from hare_opt.model.options import Options, option
from hare_opt.solvers.cpsat.model import Features

#: CP-SAT parameters that duplicate a shared option: the shared name is the one to use.
SHARED = {"num_workers": "threads", "num_search_workers": "threads", "random_seed": "seed",
          "max_time_in_seconds": "time_limit", "log_search_progress": "log"}


@dataclass(frozen=True)
class CpsatOptions(Options):
    """Any other name is taken as a CP-SAT parameter (e.g. ``linearization_level=2``)
    and checked against CP-SAT's own parameter set."""

    special: bool = option(True, doc="return the closed-form optimum of a special case "
                                     "at once (solvers/special.py)")
    warm_start: bool = option(True, doc="start from the best of the rules and hare "
                                        "(hint and upper bound) when no hint is given")
    start_heuristic: str | None = option("hare", doc="solver tried for the start besides "
                                                     "the rules (null: rules only)")
    relax_setups: float = option(0.25, lo=0.0, hi=1.0,
                                 doc="share of the time first spent on a setup relaxation")
    floor: int | None = option(None, lo=0, doc="a proved lower bound, added as a constraint")
    bounds: bool = option(True, doc="add hare_opt.bounds.lower_bound as a floor")
    symmetry: bool = option(True, doc="model switch (docs/formulations.md)")
    redundant: bool = option(True, doc="model switch")
    cumulative: bool = option(False, doc="model switch")
    set_times: bool = option(False, doc="model switch")
    setup_energy: bool = option(True, doc="model switch")
    time_indexed: int = option(0, lo=0, doc="add a time-indexed relaxation up to this size")
    params: dict[str, Any] = option(factory=dict, doc="CP-SAT parameters")
    incumbent: str | None = option(None, doc="file of the best schedule shared with other "
                                             "runs (the portfolio sets it)")

    owner = "solver 'cpsat'"

    @property
    def features(self) -> Features:
        return Features(**{f.name: getattr(self, f.name) for f in fields(Features)
                           if f.name != "setups"})

    def __post_init__(self) -> None:
        from ortools.sat.python import cp_model

        probe = cp_model.CpSolver().parameters
        for key, value in self.params.items():
            if key in SHARED:
                raise OptionError(f"is the shared option {SHARED[key]!r} here", option=key,
                                  owner=self.owner)
            try:
                set_param(probe, key, value)
            except (AttributeError, TypeError, ValueError) as exc:
                raise OptionError(f"is not a valid CP-SAT parameter or option of this "
                                  f"solver ({exc}); its options: {', '.join(self.names())}",
                                  option=key, owner=self.owner) from None

    @classmethod
    def take_extra(cls, extra: Mapping[str, Any], owner: str) -> dict[str, Any]:
        return {"params": dict(extra)}  # checked as CP-SAT parameters in __post_init__


def set_param(parameters: Any, key: str, value: Any) -> None:
    """Set one CP-SAT parameter (repeated fields such as ``subsolvers`` from a list)."""
    if isinstance(value, (list, tuple)):
        target = getattr(parameters, key)
        target.clear()
        target.extend(value)
    else:
        setattr(parameters, key, value)
