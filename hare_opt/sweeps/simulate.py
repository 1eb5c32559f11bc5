"""The reproduction's simulation cell: one policy on one paper-like workload.

One policy a cell (``CellSpec.group``: its own process), so that a cell is keyed on the
code of that policy, the workload generator and the engine it ran through, and a fix to
one policy recomputes that policy's cells only (``util.version``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hare_opt.generators import build_instance, get_regime, paper_jobs, parse_cluster
from hare_opt.model.units import unit_seconds
from hare_opt.sim.policy import policy_mode
from hare_opt.sim.semantics import (
    DEFAULT_SEMANTICS,
    LEASE_SWITCHING,
    check_semantics,
    switching_for,
)
from hare_opt.sim.simulator import simulate

#: Planner statistics a row carries (docs/reproduction.md discloses them per item).
DISCLOSED = (
    "relaxations",
    "relaxations_optimal",
    "relaxations_solver_error",
    "relaxation_gap_max",
    "block_rounds_max",
    "step3",
    "relaxation",
    "blocks_per_job_median_min",
    "pairs_max",
    "pairs_over_budget",
    "order_changed_by_search",
    "order_changed_by_milp",
    "search_capped",
    "search_evals_max",
    "plan_cpu_s_mean",
)
#: Parameters that do not change a relaxed policy's run (only gang policies hold leases):
#: left out of its cell, so that a setting under another semantics reuses it.
GANG_ONLY = ("semantics", "lease_switching")


def relevant(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` of a simulate cell less those its policy's run does not depend on."""
    if policy_mode(params["policy"]) == "gang":
        return dict(params)
    return {k: v for k, v in params.items() if k not in GANG_ONLY}


def simulate_cell(
    *,
    seed: int,
    policy: str,
    n_jobs: int = 40,
    cluster: str = "V100:8,T4:4,K80:1,M60:2",
    switching: str = "hare",
    bandwidth_gbps: float = 25.0,
    batch_scale: float = 1.0,
    mix: list[float] | None = None,
    arrival: str = "poisson",
    mean_interarrival: float | None = None,
    keep_jct: bool = False,
    unit_ms: int | None = None,
    max_gpus: int = 8,
    regime: str = "paper",
    options: dict[str, Any] | None = None,
    semantics: str = DEFAULT_SEMANTICS,
    lease_switching: str = LEASE_SWITCHING,
) -> list[dict[str, Any]]:
    """Simulate ``policy`` on one paper-like workload; one row.

    ``regime`` (hare_opt.generators.regimes; default ``paper``: one batch per task,
    1 ms, calibrated job lengths and arrivals) gives the defaults of
    ``mean_interarrival`` (by cluster size) and ``unit_ms``. ``options``: the policy's
    keyword arguments. ``semantics`` (hare_opt.sim.semantics): under ``lease`` a gang
    policy holds its GPUs for leases and runs the jobs built with the ``lease_switching``
    column of Table 3 (what a framework pays to load a job); relaxed policies run the
    ``switching`` column under both. Times in the row are in seconds. With ``keep_jct``
    the row carries the per-job JCTs (for CDFs).
    """
    reg = get_regime(regime)
    check_semantics(semantics, owner="simulate cell")
    gap = (
        reg.mean_interarrival(len(parse_cluster(cluster)))
        if mean_interarrival is None
        else mean_interarrival
    )
    jobs = paper_jobs(
        seed,
        n_jobs,
        mix=tuple(mix or (1, 1, 1, 1)),
        arrival=arrival,
        mean_interarrival=gap,
        max_gpus=max_gpus,
        regime=reg,
    )
    mode = policy_mode(policy)
    column = switching_for(mode, semantics, switching, lease_switching)
    inst = build_instance(
        jobs,
        cluster,
        switching=column,
        bandwidth_gbps=bandwidth_gbps,
        batch_scale=batch_scale,
        unit_ms=unit_ms,
        name=f"sim-s{seed}",
        regime=reg,
    )
    sec = unit_seconds(inst.time_unit) or 1.0
    run = simulate(inst, policy, semantics=semantics, **(options or {}))
    m = run.metrics
    jct = run.jobs["jct"].to_numpy() * sec
    row: dict[str, Any] = {
        "policy": policy,
        "semantics": semantics if mode == "gang" else "any",
        "switching_model": column,
        "total_weighted_jct_s": m["total_weighted_jct"] * sec,
        "avg_jct_s": float(jct.mean()),
        "p90_jct_s": float(np.percentile(jct, 90)),
        "makespan_s": m["makespan"] * sec,
        "switching_s": float(run.jobs["setup_time"].sum() * sec),
        "wall_s": run.wall_s,
        "reserved_idle_share": m["reserved_idle_share"],
        "lease_idle_share": m["lease_idle_share"],
        "gpus": inst.num_gpus,
        "tasks": inst.num_tasks,
        "regime": reg.name,
        "events": run.num_events,
        "plans": run.result.stats.get("plans"),
    }
    for key in DISCLOSED:  # hare-paper's relaxations: how many were proved, how coarse
        if run.result.stats.get(key) is not None:
            row[key] = run.result.stats[key]
    if keep_jct:
        row["jct_s"] = [float(x) for x in jct]
    return [row]


def simulate_paper(
    *, policies: list[str], policy_options: dict[str, dict[str, Any]] | None = None, **params: Any
) -> list[dict[str, Any]]:
    """``simulate_cell`` once per policy, for scripts that compare policies on one
    workload (setting labels in ``params`` are dropped)."""
    params = {k: v for k, v in params.items() if k not in ("label", "base_label", "quick")}
    return [
        row
        for p in policies
        for row in simulate_cell(policy=p, options=(policy_options or {}).get(p), **params)
    ]
