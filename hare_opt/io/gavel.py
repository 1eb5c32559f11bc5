"""Importer of Gavel's measured throughputs (``simulation_throughputs.json``).

Gavel keys rows by the repr of a Python tuple, e.g. ``"('ResNet-50 (batch size
64)', 1)"`` (job type, scale factor); under each, ``"null"`` is the isolated
throughput in steps/s and the other keys are space-sharing pairs. Only the
isolated figures are imported: they are what per-GPU task times derive from.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pandas as pd

from hare_opt.io.json_io import read_json
from hare_opt.io.philly import TraceError

_BATCH = re.compile(r"^(?P<model>.*?)\s*\(batch size (?P<bs>\d+)\)\s*$")
COLUMNS = ["gpu_type", "consolidated", "job_type", "model", "batch_size", "scale_factor",
           "throughput"]


def parse_job_key(key: str) -> tuple[str, str, int | None, int]:
    """``"('ResNet-50 (batch size 64)', 2)"`` -> (job type, "ResNet-50", 64, 2)."""
    try:
        job_type, scale = ast.literal_eval(key)
    except (ValueError, SyntaxError, TypeError):
        raise TraceError(f"not a Gavel job key: {key!r}") from None
    if not isinstance(job_type, str) or not isinstance(scale, int) or scale < 1:
        raise TraceError(f"not a Gavel job key (expected ('name', scale)): {key!r}")
    m = _BATCH.match(job_type)
    if m:
        return job_type, m["model"], int(m["bs"]), scale
    return job_type, job_type, None, scale


def load_gavel_throughputs(path: str | Path) -> pd.DataFrame:
    """One row per (GPU type, placement, job type, scale factor) with its isolated steps/s.

    ``gpu_type`` is Gavel's lower-case name (k80, p100, v100); ``consolidated``
    is False for the ``*_unconsolidated`` tables (workers spread across servers).
    ``batch_size`` is <NA> for job types without one (A3C, CycleGAN).
    """
    data = read_json(path, TraceError)
    if not isinstance(data, dict):
        raise TraceError(f"{path}: expected an object keyed by GPU type")
    rows = []
    for table, jobs in data.items():
        if not isinstance(jobs, dict):
            raise TraceError(f"{path}: GPU type '{table}': expected an object of job types")
        gpu, _, suffix = table.partition("_")
        for key, entry in jobs.items():
            try:
                job_type, model, bs, scale = parse_job_key(key)
            except TraceError as exc:
                raise TraceError(f"{path}: GPU type '{table}': {exc}") from None
            value = entry.get("null") if isinstance(entry, dict) else None
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0:
                raise TraceError(f"{path}: GPU type '{table}', job {key}: isolated throughput "
                                 f"'null' must be a non-negative number, got {value!r}")
            rows.append((gpu, suffix != "unconsolidated", job_type, model, bs, scale,
                         float(value)))
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["batch_size"] = df["batch_size"].astype("Int64")
    return df
