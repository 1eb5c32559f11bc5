"""What a simulation run yields: the checked schedule, per-job records and metrics.

"Total weighted JCT" follows the paper: sum_j w_j (C_j - a_j), completion minus
arrival. The spec's objective sum_j w_j C_j is reported too (``objective``), so a
simulated run can be compared with an offline solver's result.

GPU time nobody sees in the JCTs is reported as two metrics, so no loss is invisible:
*reserved idle* (a task given a GPU before it could process: from the decision to its
processing start, less its setup) and *lease idle* (a lease held the GPU without
processing or setting up: syncs, waiting for the gang's slowest task), each also as a
share of the processing time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hare_opt.checker import verify
from hare_opt.io.output import atomic_path
from hare_opt.model import Instance, Result, Schedule, Status
from hare_opt.sim.semantics import Mode

JOB_COLUMNS = (
    "policy",
    "job",
    "weight",
    "arrival",
    "first_start",
    "completion",
    "jct",
    "rounds",
    "tasks_per_round",
    "setup_time",
    "semantics",
)


@dataclass
class RunRecord:
    """What an engine hands back: the executed schedule and the counters of the run."""

    schedule: Schedule
    completion: np.ndarray  # (N,) each job's last barrier
    first_start: np.ndarray  # (N,)
    setup_time: np.ndarray  # (N,) GPU time spent setting the job up
    gpu_busy: np.ndarray  # (M,) processing time per GPU
    num_events: int
    reserved_idle: int
    lease_idle: int
    leases: int


@dataclass
class SimResult:
    """One policy's run: ``result`` holds the executed schedule (checked), ``jobs`` the records."""

    policy: str
    instance: Instance
    result: Result
    jobs: pd.DataFrame
    gpu_busy: np.ndarray
    num_events: int
    wall_s: float
    metrics: dict[str, Any] = field(default_factory=dict)

    semantics: str = "lease"
    engine: str = "python"
    idle: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_record(
        cls,
        inst: Instance,
        name: str,
        mode: Mode,
        stats: dict[str, Any],
        rec: RunRecord,
        semantics: str,
        wall_s: float,
        engine: str,
    ) -> SimResult:
        """Checked result, per-job records and metrics of one run of policy ``name``
        (its ``mode`` and ``stats``) by ``engine``."""
        objective = int((inst.weight * rec.completion).sum())
        result = Result(
            solver=f"sim:{name}",
            status=Status.FEASIBLE,
            schedule=rec.schedule,
            objective=objective,
            runtime_s=wall_s,
            instance_name=inst.name,
            stats={
                "mode": mode,
                "events": rec.num_events,
                "semantics": semantics,
                "engine": engine,
                **stats,
            },
        )
        verify(inst, result)  # the independent checker, on every run
        completion = rec.completion
        jobs = pd.DataFrame(
            {
                "policy": name,
                "job": inst.job_ids,
                "weight": inst.weight,
                "arrival": inst.release,
                "first_start": rec.first_start,
                "completion": completion,
                "jct": completion - inst.release,
                "rounds": inst.rounds,
                "tasks_per_round": inst.tasks_per_round,
                "setup_time": rec.setup_time,
                "semantics": semantics,
            },
            columns=list(JOB_COLUMNS),
        )
        out = cls(
            name,
            inst,
            result,
            jobs,
            rec.gpu_busy,
            rec.num_events,
            wall_s,
            semantics=semantics,
            engine=engine,
            idle={"reserved": rec.reserved_idle, "lease": rec.lease_idle, "leases": rec.leases},
        )
        out.metrics = out._metrics()
        return out

    def _metrics(self) -> dict[str, Any]:
        inst, df = self.instance, self.jobs
        jct = df["jct"].to_numpy()
        makespan = int(df["completion"].max())
        busy_by_type = np.bincount(
            inst.gpu_type_index, weights=self.gpu_busy, minlength=len(inst.gpu_types)
        )
        span = max(makespan, 1) * inst.type_count
        setup = int(df["setup_time"].sum())
        busy = int(self.gpu_busy.sum())
        return {
            "policy": self.policy,
            "objective": int(self.result.objective),
            "total_weighted_jct": int((df["weight"] * df["jct"]).sum()),
            "avg_jct": float(jct.mean()),
            "p50_jct": float(np.percentile(jct, 50)),
            "p90_jct": float(np.percentile(jct, 90)),
            "p99_jct": float(np.percentile(jct, 99)),
            "makespan": makespan,
            "utilisation": {t: float(b / s) for t, b, s in zip(inst.gpu_types, busy_by_type, span)},
            "switching_time": setup,
            "switching_share": setup / (busy + setup) if busy + setup else 0.0,
            "reserved_idle_time": self.idle["reserved"],
            "reserved_idle_share": self.idle["reserved"] / busy if busy else 0.0,
            "lease_idle_time": self.idle["lease"],
            "lease_idle_share": self.idle["lease"] / busy if busy else 0.0,
            "leases": self.idle["leases"],
            "semantics": self.semantics,
            "engine": self.engine,
            "events": self.num_events,
            "wall_s": self.wall_s,
            "events_per_s": self.num_events / self.wall_s if self.wall_s > 0 else float("inf"),
        }

    def summary(self) -> dict[str, float]:
        """The three figures ``hare-opt simulate --summary-json`` prints per policy."""
        m = self.metrics
        return {
            "total_weighted_jct": m["total_weighted_jct"],
            "avg_jct": m["avg_jct"],
            "makespan": m["makespan"],
        }

    def jct_cdf(self) -> pd.DataFrame:
        """Empirical CDF of JCT: fraction of jobs finished within each JCT value."""
        jct = np.sort(self.jobs["jct"].to_numpy())
        return pd.DataFrame({"jct": jct, "fraction": np.arange(1, len(jct) + 1) / len(jct)})

    def to_csv(self, path: str | Path) -> None:
        with atomic_path(path) as tmp:  # all or nothing (hare_opt.io.output)
            self.jobs.to_csv(tmp, index=False)


def compare(runs: list[SimResult]) -> pd.DataFrame:
    """One row per policy with the headline metrics (utilisation flattened by type)."""
    rows = []
    for r in runs:
        m = dict(r.metrics)
        for t, u in m.pop("utilisation").items():
            m[f"util_{t}"] = u
        rows.append(m)
    return pd.DataFrame(rows).set_index("policy")
