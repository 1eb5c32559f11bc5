"""Options of the portfolio: which backends run, and each backend's own options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hare_opt.model import Instance, OptionError
from hare_opt.model.limits import CapacityError
from hare_opt.model.options import option
from hare_opt.solvers.base import SOLVERS, solver_names
from hare_opt.solvers.exact import ExactOptions
from hare_opt.util.registry import resolve


def takes(name: str, instance: Instance) -> bool:
    """Whether the member's own size check (``SolverSpec.fits``) accepts ``instance``."""
    spec = SOLVERS.spec(name)
    try:
        if spec.fits is not None:
            resolve(spec.fits)(instance)
    except CapacityError:
        return False
    return True


def fits(instance: Instance, backends: tuple[str, ...] | None = None) -> None:
    """Refuse an instance that none of ``backends`` (default: every member) takes."""
    names = list(backends or members())
    if not any(takes(n, instance) for n in names):
        raise CapacityError(
            f"solver 'portfolio': no member ({', '.join(names)}) takes instance {instance.name!r}"
        )


def members() -> tuple[str, ...]:
    """The registered solvers marked as portfolio members, in registration order."""
    return tuple(solver_names(portfolio=True))


@dataclass(frozen=True)
class PortfolioOptions(ExactOptions):
    """``backend_options`` maps a backend's name to its options, e.g.
    ``{"milp": {"max_vars": 10000}, "cpsat": {"linearization_level": 2}}``."""

    backends: tuple[str, ...] = option(
        factory=members, doc="backends to run (default: every registered portfolio member)"
    )
    quick: bool = option(
        True,
        doc="first try the quick members (registered with "
        "portfolio_quick: CP-SAT, then bnb) in-process for a few "
        "seconds",
    )
    backend_options: dict[str, dict[str, Any]] = option(factory=dict, doc="options per backend")
    deterministic: bool = option(
        False,
        doc="no quick phases, every backend runs to its own "
        "limit (give each a work_limit in "
        "backend_options); the result then depends on "
        "nothing but the inputs",
    )

    owner = "solver 'portfolio'"

    def __post_init__(self) -> None:
        super().__post_init__()
        known = members()
        if not self.backends or set(self.backends) - set(known):
            raise OptionError(
                f"must be some of {', '.join(known)}, got {self.backends!r}",
                option="backends",
                owner=self.owner,
            )
        for name, opts in self.backend_options.items():
            if name not in known or not isinstance(opts, dict):
                raise OptionError(
                    f"must map backends ({', '.join(known)}) to option "
                    f"mappings, got {name!r}: {opts!r}",
                    option="backend_options",
                    owner=self.owner,
                )
            SOLVERS.spec(name).parse_options(opts)  # a bad option fails before any run
