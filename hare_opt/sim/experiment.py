"""The simulator cell of the reproduction: one paper-like workload under each policy.

It lives beside the simulator, not with the sweeps' items and verdicts, so that its code
version (``util.version``: the closure of this module) changes only with code that can
change its rows: a reproduction's finished cells stay valid while its analysis is edited.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hare_opt.generators import build_instance, get_regime, paper_jobs, parse_cluster
from hare_opt.model import Instance
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
DISCLOSED = ("relaxations", "relaxations_optimal", "relaxations_solver_error",
             "relaxation_gap_max", "block_rounds_max", "step3", "relaxation",
             "blocks_per_job_median_min", "pairs_max", "pairs_over_budget",
             "order_changed_by_search", "order_changed_by_milp", "plan_cpu_s_mean")


def simulate_paper(*, seed: int, policies: list[str], n_jobs: int = 40,
                   cluster: str = "V100:8,T4:4,K80:1,M60:2", switching: str = "hare",
                   bandwidth_gbps: float = 25.0, batch_scale: float = 1.0,
                   mix: list[float] | None = None, arrival: str = "poisson",
                   mean_interarrival: float | None = None, keep_jct: bool = False,
                   unit_ms: int | None = None, max_gpus: int = 8, regime: str = "paper",
                   policy_options: dict[str, dict[str, Any]] | None = None,
                   semantics: str = DEFAULT_SEMANTICS, lease_switching: str = LEASE_SWITCHING,
                   **_labels: Any) -> list[dict[str, Any]]:
    """Simulate each policy on one paper-like workload; one row per policy.

    ``regime`` (hare_opt.generators.regimes; default ``paper``: one batch per task,
    1 ms, calibrated job lengths and arrivals) gives the defaults of
    ``mean_interarrival`` (by cluster size) and ``unit_ms``. ``policy_options``: keyword
    arguments per policy name. ``semantics`` (hare_opt.sim.semantics): under ``lease``
    the gang policies hold their GPUs for leases and run the same jobs built with the
    ``lease_switching`` column of Table 3 (what a framework pays to load a job), the
    relaxed ones with ``switching``; every row states both. Extra keyword arguments are
    labels (e.g. ``level="high"``) that only name the cell. Times in the rows are in
    seconds. With ``keep_jct`` each row carries the per-job JCTs (for CDFs).
    """

    reg = get_regime(regime)
    check_semantics(semantics, owner="simulate cell")
    gap = (reg.mean_interarrival(len(parse_cluster(cluster))) if mean_interarrival is None
           else mean_interarrival)
    jobs = paper_jobs(seed, n_jobs, mix=tuple(mix or (1, 1, 1, 1)), arrival=arrival,
                      mean_interarrival=gap, max_gpus=max_gpus, regime=reg)
    built: dict[str, Instance] = {}

    def instance(column: str) -> Instance:  # the same jobs under a switching column
        if column not in built:
            built[column] = build_instance(
                jobs, cluster, switching=column, bandwidth_gbps=bandwidth_gbps,
                batch_scale=batch_scale, unit_ms=unit_ms, name=f"sim-s{seed}", regime=reg)
        return built[column]

    rows = []
    for policy in policies:
        column = switching_for(policy_mode(policy), semantics, switching,
                               lease_switching)
        inst = instance(column)
        sec = unit_seconds(inst.time_unit) or 1.0
        run = simulate(inst, policy, semantics=semantics,
                       **(policy_options or {}).get(policy, {}))
        m = run.metrics
        jct = run.jobs["jct"].to_numpy() * sec
        row = {"policy": policy, "semantics": semantics, "switching_model": column,
               "total_weighted_jct_s": m["total_weighted_jct"] * sec,
               "avg_jct_s": float(jct.mean()), "p90_jct_s": float(np.percentile(jct, 90)),
               "makespan_s": m["makespan"] * sec, "switching_s": float(
                   run.jobs["setup_time"].sum() * sec), "wall_s": run.wall_s,
               "reserved_idle_share": m["reserved_idle_share"],
               "lease_idle_share": m["lease_idle_share"],
               "gpus": inst.num_gpus, "tasks": inst.num_tasks, "regime": reg.name,
               "events": run.num_events, "plans": run.result.stats.get("plans")}
        for key in DISCLOSED:  # hare-paper's relaxations: how many were proved, how coarse
            if run.result.stats.get(key) is not None:
                row[key] = run.result.stats[key]
        if keep_jct:
            row["jct_s"] = [float(x) for x in jct]
        rows.append(row)
    return rows
