"""Options of the branch and bound."""

from __future__ import annotations

from dataclasses import dataclass

from hare_opt.model.options import option
from hare_opt.solvers.exact import ExactOptions


@dataclass(frozen=True)
class BnbOptions(ExactOptions):
    memo_mb: float = option(512.0, lo=0.0, doc="memory for the dominance memo (MB); when "
                                               "full the search goes on without storing")
    incumbent: str | None = option(None, doc="file of the best schedule shared with other "
                                             "runs (the portfolio sets it)")

    owner = "solver 'bnb'"
