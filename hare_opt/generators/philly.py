"""Paper-like workloads from a real trace: a window of a Philly trace as workload jobs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hare_opt.generators.paper import JobSpec, draw_models, draw_weights, rounds_from_duration
from hare_opt.io.philly import TraceError
from hare_opt.model import OptionError


def philly_jobs_to_specs(
    df: pd.DataFrame,
    seed: int,
    n_jobs: int,
    *,
    mix: tuple[float, ...] = (1, 1, 1, 1),
    time_scale: float = 1.0,
    rounds: tuple[int, int] = (2, 40),
    max_gpus: int = 8,
    weights: tuple[int, int] = (1, 5),
    mean_interarrival: float = 30.0,
) -> list[JobSpec]:
    """Workload jobs from a random contiguous window (in submit order) of a Philly trace.

    Releases are the trace's submit times relative to the window's first job,
    times ``time_scale`` (a cluster-wide trace is far busier than 15 GPUs, so
    compressing or stretching arrivals sets the load); without submit times
    they are Poisson with ``mean_interarrival``. Durations map to rounds
    log-linearly (``hare_opt.generators.paper.rounds_from_duration``); GPU
    demand becomes ``tasks_per_round`` capped at ``max_gpus``. Models are drawn
    by category ``mix`` (CV:NLP:Speech:Rec), as in ``paper_jobs``.
    """
    for col in ("duration_s", "num_gpus"):
        if col not in df.columns:
            raise TraceError(f"trace: missing column '{col}' (load it with load_philly_jobs)")
    if not 1 <= n_jobs <= len(df):
        raise OptionError(
            f"must be between 1 and the trace's {len(df)} jobs, got {n_jobs}",
            option="n_jobs",
            owner="philly workload",
        )
    if not time_scale > 0 or max_gpus < 1:
        raise OptionError(
            f"time_scale must be > 0 and max_gpus >= 1, got {time_scale} and {max_gpus}",
            option="time_scale",
            owner="philly workload",
        )
    rng = np.random.default_rng(seed)
    timed = "submit_s" in df.columns
    ordered = df.sort_values("submit_s", kind="stable") if timed else df
    start = int(rng.integers(0, len(df) - n_jobs + 1))
    win = ordered.iloc[start : start + n_jobs]
    if timed:
        release = (win["submit_s"].to_numpy() - win["submit_s"].iloc[0]) * time_scale
    else:
        release = np.concatenate([[0.0], np.cumsum(rng.exponential(mean_interarrival, n_jobs - 1))])
    models = draw_models(rng, n_jobs, mix)
    w = draw_weights(rng, n_jobs, weights)
    r = rounds_from_duration(win["duration_s"].to_numpy(dtype=float), rounds)
    k = np.minimum(win["num_gpus"].to_numpy(dtype=np.int64), max_gpus)
    return [
        JobSpec(f"j{i}", m.model, m.category, int(r[i]), int(k[i]), float(release[i]), int(w[i]))
        for i, m in enumerate(models)
    ]
