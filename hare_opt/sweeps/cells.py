"""Cell functions: the units of work a sweep runs (pure functions of their parameters).

A cell function takes JSON-able keyword arguments (including ``seed``) and
returns a list of flat dict rows. Register new ones with ``register_cell(name,
"module:function")`` so Dask workers can import them by name.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hare_opt.generators import (
    build_instance,
    get_regime,
    paper_jobs,
    parse_cluster,
    random_instance,
)
from hare_opt.model import HareOptError, Instance
from hare_opt.model.units import unit_seconds
from hare_opt.sim import simulate
from hare_opt.sim.policy import policy_mode
from hare_opt.sim.semantics import (
    DEFAULT_SEMANTICS,
    LEASE_SWITCHING,
    check_semantics,
    switching_for,
)
from hare_opt.solvers import solve
from hare_opt.util.registry import Registry


class UnknownCellError(HareOptError, ValueError):
    pass


@dataclass(frozen=True)
class CellSpec:
    """A cell function by name; ``target`` is ``"module:function"`` so that Dask workers
    import it by name."""

    name: str
    target: str | Callable[..., list[dict[str, Any]]]


CELLS: Registry[CellSpec] = Registry("cell function", UnknownCellError)
for _name, _target in (("solve-random", "hare_opt.sweeps.cells:solve_random"),
                       ("arith", "hare_opt.sweeps.cells:arith"),
                       ("simulate", "hare_opt.sweeps.cells:simulate_paper"),
                       ("fig1", "hare_opt.sweeps.offline:fig1_cell"),
                       ("quality", "hare_opt.sweeps.offline:quality_cell"),
                       ("bounds", "hare_opt.sweeps.offline:bounds_cell"),
                       ("runtime", "hare_opt.sweeps.offline:runtime_cell")):
    CELLS.add(CellSpec(_name, _target))


def register_cell(name: str, target: str | Callable[..., list[dict[str, Any]]]) -> None:
    CELLS.add(CellSpec(name, target))


def get_cell_fn(name: str) -> Callable[..., list[dict[str, Any]]]:
    return CELLS.load(name)


def arith(*, seed: int, n: int = 1000, fail_seed: int | None = None,
          sleep: float = 0.0) -> list[dict[str, Any]]:
    """A cheap deterministic cell used to test the sweep machinery itself."""
    if sleep:
        time.sleep(sleep)
    if fail_seed is not None and seed == fail_seed:
        raise RuntimeError(f"cell with seed {seed} fails on purpose")

    x = np.random.default_rng(seed).integers(0, 100, size=n)
    return [{"sum": int(x.sum()), "max": int(x.max())}]


def solve_random(*, seed: int, solvers: list[str], n_jobs: int = 4, n_gpus: int = 3,
                 time_limit: float | None = None, **gen: Any) -> list[dict[str, Any]]:
    """Generate a random instance and solve it with each solver: one row per solver."""

    inst = random_instance(seed, n_jobs=n_jobs, n_gpus=n_gpus, **gen)
    rows = []
    for name in solvers:
        res = solve(inst, name, time_limit=time_limit)
        rows.append({"solver": name, "status": res.status, "objective": res.objective,
                     "lower_bound": res.lower_bound, "runtime_s": res.runtime_s,
                     "tasks": inst.num_tasks})
    return rows


#: Planner statistics a row carries (docs/reproduction.md discloses them per item).
DISCLOSED = ("relaxations", "relaxations_optimal", "relaxations_solver_error",
             "relaxation_gap_max", "block_rounds_max")


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
