"""Options of the MILP backend; any other name is a HiGHS option or a CBC argument."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hare_opt.model import OptionError
from hare_opt.model.options import option
from hare_opt.solvers.exact import ExactOptions
from hare_opt.solvers.milp.windows import MAX_VARS
from hare_opt.util.highs import quiet_banner

#: Names that are shared options here, whatever the backend calls them.
SHARED = {
    "msg": "log",
    "output_flag": "log",
    "log_to_console": "log",
    "time_limit": "time_limit",
    "timeLimit": "time_limit",
    "threads": "threads",
    "random_seed": "seed",
}


@dataclass(frozen=True)
class MilpOptions(ExactOptions):
    """Unknown names go to the backend: HiGHS option names (e.g. ``mip_rel_gap``) or
    arguments of PuLP's CBC command; names and values are checked before any work
    (HiGHS's own validator; for CBC, the argument's type)."""

    backend: Literal["highs", "cbc"] = option("highs", doc="MIP solver behind PuLP")
    lp_bound: bool = option(True, doc="also solve the LP relaxation (stats['lp_bound'])")
    max_vars: int = option(MAX_VARS, lo=1, doc="refuse a model with more columns")
    cuts: bool = option(True, doc="model variant (formulation.build)")
    dense: bool = option(True, doc="model variant (formulation.build)")
    backend_options: dict[str, Any] = option(factory=dict, doc="options for the backend")

    owner = "solver 'milp'"

    def __post_init__(self) -> None:
        super().__post_init__()
        for key in self.backend_options:
            if key in SHARED:
                raise OptionError(
                    f"is the shared option {SHARED[key]!r} here", option=key, owner=self.owner
                )
        if self.backend == "highs":
            _check_highs(self.backend_options, self.owner)
        else:
            _check_cbc(self.backend_options, self.owner)

    @classmethod
    def take_extra(cls, extra: Mapping[str, Any], owner: str) -> dict[str, Any]:
        return {"backend_options": dict(extra)}  # checked against the backend in __post_init__


def _check_highs(options: Mapping[str, Any], owner: str) -> None:
    """HiGHS only logs an unknown option name or a bad value and goes on (a typo or
    ``mip_rel_gap=-1`` would pass unseen): its own validator, ``setOptionValue``, says."""
    import highspy

    quiet_banner()
    probe = highspy.Highs()
    probe.setOptionValue("output_flag", False)
    for key, value in options.items():
        if probe.getOptionValue(key)[0] != highspy.HighsStatus.kOk:
            raise OptionError(
                "is not a HiGHS option or an option of this solver (HiGHS "
                "names are like 'mip_rel_gap'); its options: " + ", ".join(MilpOptions.names()),
                option=key,
                owner=owner,
            )
        current = probe.getOptionValue(key)[1]
        ok = not isinstance(value, bool) or isinstance(current, bool)
        try:
            ok = ok and probe.setOptionValue(key, value) == highspy.HighsStatus.kOk
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise OptionError(
                f"HiGHS refuses the value {value!r} (its default: {current!r})",
                option=key,
                owner=owner,
            )


#: Arguments of PuLP's CBC command that the MILP sets itself or that would leave files.
CBC_RESERVED = {"mip", "warmStart", "keepFiles", "path", "logPath", "timeMode"}
#: CBC arguments and the values they take (PuLP passes them on unchecked, and CBC reads
#: a bad one as another command and goes on).
CBC_TYPES: dict[str, str] = {
    "gapRel": "fraction",
    "gapAbs": "number",
    "maxNodes": "count",
    "presolve": "bool",
    "cuts": "bool",
    "strong": "count",
    "options": "words",
}


def _check_cbc(options: Mapping[str, Any], owner: str) -> None:
    import pulp

    known = {p for p in inspect.signature(pulp.PULP_CBC_CMD).parameters if p[0] != "_"} - {"self"}
    for key, value in options.items():
        if key in CBC_RESERVED:
            raise OptionError(
                "is set by the solver (or would leave files behind)", option=key, owner=owner
            )
        if key not in known:
            raise OptionError(
                f"is not an argument of PuLP's CBC (PULP_CBC_CMD: "
                f"{', '.join(sorted(known - CBC_RESERVED))})",
                option=key,
                owner=owner,
            )
        kind = CBC_TYPES.get(key)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok = {
            "fraction": number and 0 <= value <= 1,
            "number": number and value >= 0,
            "count": number and value >= 0 and float(value).is_integer(),
            "bool": isinstance(value, bool),
            "words": isinstance(value, list) and all(isinstance(v, str) for v in value),
            None: True,
        }[kind]
        if not ok:
            what = {
                "fraction": "a number between 0 and 1",
                "number": "a number >= 0",
                "count": "an integer >= 0",
                "bool": "true or false",
                "words": "a list of strings",
            }[kind]  # type: ignore[index]
            raise OptionError(f"must be {what} for CBC, got {value!r}", option=key, owner=owner)
