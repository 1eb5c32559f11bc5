"""Options of the CP-SAT backend: model switches, phases, and CP-SAT parameters."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from hare_opt.model import Instance, OptionError
from hare_opt.model.options import option
from hare_opt.solvers.cpsat.model import Features
from hare_opt.solvers.exact import ExactOptions

#: CP-SAT parameters that duplicate a shared option: the shared name is the one to use.
SHARED = {
    "num_workers": "threads",
    "num_search_workers": "threads",
    "random_seed": "seed",
    "max_time_in_seconds": "time_limit",
    "log_search_progress": "log",
}


#: Values of the ``pool`` option.
POOLS = ("auto", "types", "gpus")


@dataclass(frozen=True)
class CpsatOptions(ExactOptions):
    """Any other name is taken as a CP-SAT parameter (e.g. ``linearization_level=2``)
    and checked by CP-SAT's own parameter validator."""

    relax_setups: float = option(
        0.25, lo=0.0, hi=1.0, doc="share of the time first spent on a setup relaxation"
    )
    floor: int | None = option(None, lo=0, doc="a proved lower bound, added as a constraint")
    lp_floor: bool = option(
        False, doc="add the LP bound (hare_opt.bounds, up to 200 tasks) to the floor"
    )
    symmetry: bool = option(True, doc="model switch (docs/formulations.md)")
    redundant: bool = option(True, doc="model switch")
    cumulative: bool = option(False, doc="model switch")
    set_times: bool = option(False, doc="model switch")
    setup_energy: bool = option(True, doc="model switch")
    time_indexed: int = option(
        0, lo=0, doc="add a time-indexed relaxation of up to this many (literal, time) entries"
    )
    pool: str = option(
        "auto",
        doc="'types': a GPU type per task, one cumulative per type (no setups only); "
        "'gpus': a GPU per task; 'auto': types when no job has a setup",
    )
    params: dict[str, Any] = option(factory=dict, doc="CP-SAT parameters")

    owner = "solver 'cpsat'"

    @property
    def features(self) -> Features:
        return Features(
            **{
                f.name: getattr(self, f.name)
                for f in fields(Features)
                if f.name not in ("setups", "pooled")
            }
        )

    def pools(self, instance: Instance) -> bool:
        """Whether the model chooses GPU types (``pool``) for ``instance``."""
        setups = bool((instance.overhead > 0).any())
        if self.pool == "types" and setups:
            raise OptionError(
                "'types' needs every switching overhead 0; the instance has setups",
                option="pool",
                owner=self.owner,
            )
        return self.pool == "types" or (self.pool == "auto" and not setups)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.pool not in POOLS:
            raise OptionError(
                f"must be one of {', '.join(POOLS)}, got {self.pool!r}",
                option="pool",
                owner=self.owner,
            )
        check_params(self.params, self.owner, self.names())

    @classmethod
    def take_extra(cls, extra: Mapping[str, Any], owner: str) -> dict[str, Any]:
        return {"params": dict(extra)}  # checked as CP-SAT parameters in __post_init__


def check_params(params: Mapping[str, Any], owner: str, names: list[str]) -> None:
    """Each parameter's name and type, then CP-SAT's own validator on the values (it
    refuses e.g. a negative time or 100,000 workers), each as a one-line error."""
    from hare_opt.util.ortools import cp_model

    solver = cp_model.CpSolver()
    for key, value in params.items():
        if key in SHARED:
            raise OptionError(f"is the shared option {SHARED[key]!r} here", option=key, owner=owner)
        if not hasattr(solver.parameters, key):
            raise OptionError(
                f"is not a CP-SAT parameter or an option of this solver; its "
                f"options: {', '.join(names)}",
                option=key,
                owner=owner,
            )
        try:
            set_param(solver.parameters, key, value)
        except (AttributeError, TypeError, ValueError) as exc:
            expected = re.search(r"arg[01]: ([\w.\[\]]+)\)", str(exc))
            kind = (
                "list"
                if hasattr(getattr(solver.parameters, key), "extend")
                else expected.group(1).rsplit(".", 1)[-1]
                if expected
                else "another type"
            )
            raise OptionError(
                f"must be of type {kind} (a CP-SAT parameter), got {value!r}",
                option=key,
                owner=owner,
            ) from None
    if params:
        solver.parameters.max_time_in_seconds = 0.0
        if solver.solve(cp_model.CpModel()) == cp_model.MODEL_INVALID:
            raise OptionError(" ".join(solver.solution_info().split()), option=None, owner=owner)


def set_param(parameters: Any, key: str, value: Any) -> None:
    """Set one CP-SAT parameter (repeated fields such as ``subsolvers`` from a list)."""
    if isinstance(value, (list, tuple)):
        target = getattr(parameters, key)
        target.clear()
        target.extend(value)
    else:
        setattr(parameters, key, value)
