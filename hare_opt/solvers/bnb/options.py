"""Options of the branch and bound."""

from __future__ import annotations

from dataclasses import dataclass

from hare_opt.model.options import Options, option


@dataclass(frozen=True)
class BnbOptions(Options):
    special: bool = option(True, doc="return the closed-form optimum of a special case "
                                     "at once (solvers/special.py)")
    memo_mb: float = option(512.0, lo=0.0, doc="memory for the dominance memo (MB); when "
                                               "full the search goes on without storing")
    node_limit: int | None = option(None, lo=1, doc="stop after about this many nodes "
                                                    "(a reproducible limit)")
    start_heuristic: str | None = option("hare", doc="solver tried for the first incumbent "
                                                     "besides the rules (null: rules only)")

    incumbent: str | None = option(None, doc="file of the best schedule shared with other "
                                             "runs (the portfolio sets it)")

    owner = "solver 'bnb'"
