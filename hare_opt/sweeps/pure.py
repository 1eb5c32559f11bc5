"""Solves whose result depends on nothing but their inputs, for experiment cells.

Why: a cell is cached and compared across runs and executors, so it must be a pure
function of its parameters. A wall-clock limit breaks that (a loaded machine proves
less), so cells ask for *work* instead: about ``seconds`` of work on the development
machine, in each backend's deterministic unit, with one thread. The wall clock stays
as a safety net (``SAFETY`` x ``seconds`` + ``SAFETY_S``); when it is what stopped a
run, ``stats["wall_clock_limited"]`` says so and the cell's rows should carry it.

Units per second of work, measured on the development machine (2 cores, loaded):
bnb about 500,000 nodes; HiGHS 200-2,000 branch-and-bound nodes on the 20-40 task
models (500 taken); CP-SAT's deterministic time is about its wall time on one worker.
"""

from __future__ import annotations

from typing import Any

from hare_opt.model import Instance, Result
from hare_opt.solvers import solve

BNB_NODES_PER_S = 500_000
HIGHS_NODES_PER_S = 500
SAFETY, SAFETY_S = 3.0, 30.0


def work_options(solver: str, seconds: float) -> dict[str, Any]:
    """Options that limit ``solver`` by work (about ``seconds`` of it), not by the clock."""
    cpsat = {"max_deterministic_time": float(seconds)}
    bnb = {"node_limit": max(1, int(BNB_NODES_PER_S * seconds))}
    milp = {"mip_max_nodes": max(1, int(HIGHS_NODES_PER_S * seconds))}
    if solver == "cpsat":
        return cpsat
    if solver == "bnb":
        return bnb
    if solver == "milp":
        return milp
    if solver == "portfolio":
        return {"deterministic": True,
                "backend_options": {"cpsat": cpsat, "bnb": bnb, "milp": milp}}
    if solver == "hare-paper":
        return {"node_limit": max(1, int(HIGHS_NODES_PER_S * seconds))}
    return {}  # hare (a placement budget by default) and the rules are deterministic


def pure_solve(instance: Instance, solver: str, seconds: float, *, hint: Result | None = None,
               seed: int = 0, **options: Any) -> Result:
    """``solve`` with work limits, one thread and a fixed seed; see the module doc."""
    safety = SAFETY * seconds + SAFETY_S
    result = solve(instance, solver, time_limit=safety, hint=hint, seed=seed, threads=1,
                   **{**work_options(solver, seconds), **options})
    if result.runtime_s >= 0.95 * safety or result.stats.get("wall_clock_limited"):
        result.stats["wall_clock_limited"] = True
    return result
