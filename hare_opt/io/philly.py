"""Importer of Philly-style job traces (Microsoft Philly, as shipped by Gavel and Sia).

Traces come in several column spellings, so columns are detected from a short
list of aliases and renamed to one schema: ``duration_s``, ``num_gpus`` and,
when the trace has submit times, ``submit_s`` (seconds after the first submit).
``philly_jobs_to_specs`` turns a window of such a trace into workload jobs, so
real arrival bursts and job sizes can drive the paper-like generator.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hare_opt.generators.paper import JobSpec, draw_models, draw_weights, rounds_from_duration
from hare_opt.model import HareOptError

_ALIASES = {
    "duration_s": ("duration_s", "duration", "run_time", "runtime", "runtime_s"),
    "num_gpus": ("num_gpus", "gpus", "num_gpu", "gpu_num"),
    "submit": ("timestamp", "submit_time", "submitted_time", "submit_s", "arrival"),
}


class TraceError(HareOptError, ValueError):
    """A trace file cannot be read or lacks what is needed (names the file and column)."""


def _find(df: pd.DataFrame, key: str) -> str | None:
    cols = {c.strip().lower(): c for c in df.columns}
    return next((cols[a] for a in _ALIASES[key] if a in cols), None)


def _numeric(df: pd.DataFrame, col: str, path: str | Path, *, minimum: float) -> pd.Series:
    values = pd.to_numeric(df[col], errors="coerce")
    bad = values.isna() | (values < minimum)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise TraceError(f"{path}: column '{col}', row {row + 2}: expected a number >= "
                         f"{minimum:g}, got {df[col].iloc[row]!r}")
    return values


def load_philly_jobs(path: str | Path) -> pd.DataFrame:
    """Read a Philly-style CSV (optionally gzip) into ``duration_s, num_gpus[, submit_s, ...]``.

    Extra columns (e.g. ``cluster``) are kept. Rows keep the file's order.
    """
    try:
        df = pd.read_csv(path)
    except FileNotFoundError:
        raise TraceError(f"{path}: no such file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
        raise TraceError(f"{path}: not a readable CSV ({exc})") from None
    out = pd.DataFrame(index=df.index)
    for key in ("duration_s", "num_gpus"):
        col = _find(df, key)
        if col is None:
            found = ", ".join(map(str, df.columns))
            raise TraceError(f"{path}: missing column '{key}' (looked for "
                             f"{', '.join(_ALIASES[key])}; found {found})")
        out[key] = _numeric(df, col, path, minimum=0 if key == "duration_s" else 1)
    out["num_gpus"] = out["num_gpus"].astype(np.int64)
    sub = _find(df, "submit")
    if sub is not None:
        raw = df[sub]
        t = (pd.to_numeric(raw, errors="coerce") if pd.api.types.is_numeric_dtype(raw)
             else pd.to_datetime(raw, errors="coerce"))
        if t.isna().any():
            row = int(np.flatnonzero(t.isna().to_numpy())[0])
            raise TraceError(f"{path}: column '{sub}', row {row + 2}: not a time: "
                             f"{raw.iloc[row]!r}")
        if not pd.api.types.is_numeric_dtype(t):
            t = (t - t.min()).dt.total_seconds()
        out["submit_s"] = (t - t.min()).astype(float)
    used = {_find(df, k) for k in _ALIASES}
    for col in df.columns:
        if col not in used:
            out[col] = df[col]
    return out


def philly_jobs_to_specs(df: pd.DataFrame, seed: int, n_jobs: int, *,
                         mix: tuple[float, ...] = (1, 1, 1, 1), time_scale: float = 1.0,
                         rounds: tuple[int, int] = (2, 40), max_gpus: int = 8,
                         weights: tuple[int, int] = (1, 5),
                         mean_interarrival: float = 30.0) -> list[JobSpec]:
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
        raise ValueError(f"n_jobs: must be between 1 and the trace's {len(df)} jobs, got {n_jobs}")
    if time_scale <= 0 or max_gpus < 1:
        raise ValueError("time_scale must be > 0 and max_gpus >= 1")
    rng = np.random.default_rng(seed)
    timed = "submit_s" in df.columns
    ordered = df.sort_values("submit_s", kind="stable") if timed else df
    start = int(rng.integers(0, len(df) - n_jobs + 1))
    win = ordered.iloc[start:start + n_jobs]
    if timed:
        release = (win["submit_s"].to_numpy() - win["submit_s"].iloc[0]) * time_scale
    else:
        release = np.concatenate([[0.0], np.cumsum(rng.exponential(mean_interarrival,
                                                                   n_jobs - 1))])
    models = draw_models(rng, n_jobs, mix)
    w = draw_weights(rng, n_jobs, weights)
    r = rounds_from_duration(win["duration_s"].to_numpy(dtype=float), rounds)
    k = np.minimum(win["num_gpus"].to_numpy(dtype=np.int64), max_gpus)
    return [JobSpec(f"j{i}", m.model, m.category, int(r[i]), int(k[i]), float(release[i]),
                    int(w[i])) for i, m in enumerate(models)]
