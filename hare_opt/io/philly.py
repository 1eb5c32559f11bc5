"""Importer of Philly-style job traces (Microsoft Philly, as shipped by Gavel and Sia).

Traces come in several column spellings, so columns are detected from a short
list of aliases and renamed to one schema: ``duration_s``, ``num_gpus`` and,
when the trace has submit times, ``submit_s`` (seconds after the first submit).
``hare_opt.generators.philly_jobs_to_specs`` turns a window of such a trace into
workload jobs, so real arrival bursts and job sizes drive the paper-like generator.
"""

from __future__ import annotations

import lzma
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from hare_opt.io.json_io import endless
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


def _show(value: object) -> str:
    text = str(value)
    return repr(text if len(text) <= 40 else text[:30] + f"... ({len(text)} characters)")


def _numeric(
    df: pd.DataFrame, col: str, path: str | Path, *, minimum: float, integer: bool = False
) -> pd.Series:
    values = pd.to_numeric(df[col], errors="coerce")
    bad = values.isna() | ~np.isfinite(values.astype(float)) | (values < minimum)
    if integer:
        bad |= values.astype(float) % 1 != 0
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        what = "an integer" if integer else "a finite number"
        raise TraceError(
            f"{path}: line {row + 2}: column '{col}': expected {what} >= "
            f"{minimum:g}, got {_show(df[col].iloc[row])}"
        )
    return values


def load_philly_jobs(path: str | Path) -> pd.DataFrame:
    """Read a Philly-style CSV (optionally gzip) into ``duration_s, num_gpus[, submit_s, ...]``.

    Extra columns (e.g. ``cluster``) are kept. Rows keep the file's order.
    """
    why = endless(path)
    if why:
        raise TraceError(f"{path}: {why}")
    try:
        df = pd.read_csv(path)
    except FileNotFoundError:
        raise TraceError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TraceError(f"{path}: is a directory, not a file") from None
    except (
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
        ValueError,
        OSError,
        EOFError,
        zlib.error,
        lzma.LZMAError,
        zipfile.BadZipFile,
        MemoryError,
    ) as exc:
        # truncated .gz/.bz2/.xz/.zip archives, binary junk, unreadable files
        text = str(exc).strip() or type(exc).__name__
        raise TraceError(f"{path}: not a readable CSV ({text[:200]})") from None
    out = pd.DataFrame(index=df.index)
    for key in ("duration_s", "num_gpus"):
        col = _find(df, key)
        if col is None:
            found = ", ".join(map(str, df.columns))
            raise TraceError(
                f"{path}: missing column '{key}' (looked for "
                f"{', '.join(_ALIASES[key])}; found {found})"
            )
        out[key] = _numeric(
            df, col, path, minimum=0 if key == "duration_s" else 1, integer=key == "num_gpus"
        )
    out["num_gpus"] = out["num_gpus"].astype(np.int64)
    sub = _find(df, "submit")
    if sub is not None:
        raw = df[sub]
        t = (
            pd.to_numeric(raw, errors="coerce")
            if pd.api.types.is_numeric_dtype(raw)
            else pd.to_datetime(raw, errors="coerce")
        )
        bad = t.isna() | (
            ~np.isfinite(t.astype(float)) if pd.api.types.is_numeric_dtype(t) else False
        )
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise TraceError(
                f"{path}: line {row + 2}: column '{sub}': not a time: {_show(raw.iloc[row])}"
            )
        if not pd.api.types.is_numeric_dtype(t):
            t = (t - t.min()).dt.total_seconds()
        out["submit_s"] = (t - t.min()).astype(float)
    used = {_find(df, k) for k in _ALIASES}
    for col in df.columns:
        if col not in used:
            out[col] = df[col]
    return out
