"""Solves whose result depends on nothing but their inputs, for experiment cells.

Why: a cell is cached and compared across runs and executors, so it must be a pure
function of its parameters. A wall-clock limit breaks that (a loaded machine proves
less), so cells ask for *work* instead: about ``seconds`` of work on a loaded 2-core
machine, as each exact backend's ``work_limit`` (its deterministic unit), one thread.
The wall clock stays as a safety net (``SAFETY`` x ``seconds`` + ``SAFETY_S``); when it
is what stopped a run, ``stats["wall_clock_limited"]`` says so and the cell's rows
should carry it.

Units per second of work, measured on a 2-core machine (shared, load about 7, so about
3x slower than an idle machine), on a 30-task quality instance:
CP-SAT's deterministic time ran about 12 s of wall time per unit on one worker (0.2
units a second taken); bnb about 230,000 nodes a second (250,000 taken); HiGHS spent
10-30 s at the root, then about a node a second on the time-indexed model (3 nodes a
second taken; the root is not limited by nodes, but it is deterministic with one thread).
"""

from __future__ import annotations

from typing import Any

from hare_opt.model import Instance, Result
from hare_opt.solvers import solve

CPSAT_DET_PER_S = 0.2
BNB_NODES_PER_S = 250_000
HIGHS_NODES_PER_S = 3
#: hare-paper's relaxation (a pairwise model) runs far more nodes a second than the MILP
RELAXATION_NODES_PER_S = 500
SAFETY, SAFETY_S = 12.0, 120.0


def work_options(solver: str, seconds: float) -> dict[str, Any]:
    """Options that limit ``solver`` by work (about ``seconds`` of it), not by the clock."""
    cpsat = {"work_limit": CPSAT_DET_PER_S * seconds}
    bnb = {"work_limit": max(1, int(BNB_NODES_PER_S * seconds))}
    milp = {"work_limit": max(1, int(HIGHS_NODES_PER_S * seconds))}
    if solver == "cpsat":
        return cpsat
    if solver == "bnb":
        return bnb
    if solver == "milp":
        return milp
    if solver == "portfolio":
        return {
            "deterministic": True,
            "backend_options": {"cpsat": cpsat, "bnb": bnb, "milp": milp},
        }
    if solver == "hare-paper":
        return {"node_limit": max(1, int(RELAXATION_NODES_PER_S * seconds))}
    return {}  # hare (a placement budget by default) and the rules are deterministic


def pure_solve(
    instance: Instance,
    solver: str,
    seconds: float,
    *,
    hint: Result | None = None,
    seed: int = 0,
    **options: Any,
) -> Result:
    """``solve`` with work limits, one thread and a fixed seed; see the module doc."""
    safety = SAFETY * seconds + SAFETY_S
    result = solve(
        instance,
        solver,
        time_limit=safety,
        hint=hint,
        seed=seed,
        threads=1,
        **{**work_options(solver, seconds), **options},
    )
    if result.runtime_s >= 0.95 * safety or result.stats.get("wall_clock_limited"):
        result.stats["wall_clock_limited"] = True  # a hare-paper stat too: one key
    return result
