"""Importers of Gavel's data: measured throughputs (``simulation_throughputs.json``) and
the job traces of its generator (``scripts/utils/generate_trace.py``), and the translation
of such a trace into an instance (``gavel_instance``).

Gavel keys rows by the repr of a Python tuple, e.g. ``"('ResNet-50 (batch size
64)', 1)"`` (job type, scale factor); under each, ``"null"`` is the isolated
throughput in steps/s and the other keys are space-sharing pairs. Only the
isolated figures are imported: they are what per-GPU task times derive from.

A trace has one job a line, tab-separated: job type, command, working directory,
steps argument, needs-data-dir flag, total steps, scale factor (GPUs), priority weight,
SLO, arrival time in seconds (Gavel's ``utils.parse_trace``).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from hare_opt.io.json_io import endless, read_json
from hare_opt.io.philly import TraceError
from hare_opt.model import GPU, Instance, Job

_BATCH = re.compile(r"^(?P<model>.*?)\s*\(batch size (?P<bs>\d+)\)\s*$")
COLUMNS = [
    "gpu_type",
    "consolidated",
    "job_type",
    "model",
    "batch_size",
    "scale_factor",
    "throughput",
]


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
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < 0
            ):
                raise TraceError(
                    f"{path}: GPU type '{table}', job {key}: isolated throughput "
                    f"'null' must be a non-negative number, got {value!r}"
                )
            rows.append((gpu, suffix != "unconsolidated", job_type, model, bs, scale, float(value)))
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["batch_size"] = df["batch_size"].astype("Int64")
    return df


@dataclass(frozen=True)
class GavelJob:
    """One line of a Gavel trace: what its simulator reads of it."""

    job_type: str
    total_steps: int
    scale_factor: int
    priority_weight: float
    arrival: float

    def __post_init__(self) -> None:
        if (
            self.total_steps < 1
            or self.scale_factor < 1
            or self.priority_weight <= 0
            or not math.isfinite(self.arrival)
            or self.arrival < 0
        ):
            raise TraceError(
                f"job {self.job_type!r}: total steps and scale factor must be "
                "positive, priority weight positive, arrival a time >= 0"
            )


def read_gavel_trace(path: str | Path) -> list[GavelJob]:
    """The jobs of a Gavel trace file, in file order (its job ids)."""
    why = endless(path)
    if why:
        raise TraceError(f"{path}: {why}")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise TraceError(f"{path}: cannot be read ({exc})") from None
    jobs = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise TraceError(
                f"{path}: line {no}: expected 10 tab-separated fields (Gavel's "
                f"trace format), got {len(cols)}"
            )
        try:
            job = GavelJob(cols[0], int(cols[5]), int(cols[6]), float(cols[7]), float(cols[9]))
        except ValueError as exc:
            raise TraceError(f"{path}: line {no}: {exc}") from None
        jobs.append(job)
    if not jobs:
        raise TraceError(f"{path}: no jobs")
    return jobs


def gavel_instance(
    jobs: list[GavelJob],
    throughputs: pd.DataFrame,
    cluster: dict[str, int],
    *,
    chunk_s: float = 1.0,
    name: str = "gavel",
    unit_s: float = 1e-5,
) -> Instance:
    """The instance (time unit ms) of a Gavel trace on ``cluster`` (Gavel's type names,
    e.g. ``{"v100": 4, "p100": 4, "k80": 4}``), from Gavel's isolated throughputs
    (``load_gavel_throughputs``, consolidated rows).

    A round of ours is ``c`` of Gavel's steps of the job, ``c`` = the steps its best type
    runs in ``chunk_s`` seconds (at least 1); rounds = ceil(total steps / c). On a type
    where Gavel measures ``thr`` steps/s for the job's scale factor K, the round spans
    c / thr (Gavel's only timing): of it, the task is what K GPUs take for c/K steps
    each at the single-GPU rate (capped at the span), the rest is sync. A type with no
    throughput (0) cannot run the job. No switching cost: Gavel's simulator charges none.
    """
    table = throughputs[throughputs["consolidated"]]
    rate: dict[tuple[str, str, int], float] = {
        (r.gpu_type, r.job_type, int(r.scale_factor)): float(r.throughput)
        for r in table.itertuples()
    }
    gpus = [GPU(f"{t}-{i}", t) for t, n in cluster.items() for i in range(int(n))]
    out = []
    for i, job in enumerate(jobs):
        k = job.scale_factor
        thr = {t: rate.get((t, job.job_type, k), 0.0) for t in cluster}
        if not any(v > 0 for v in thr.values()):
            raise TraceError(
                f"job {i} ({job.job_type!r}, scale factor {k}): no throughput "
                f"on any of {sorted(cluster)} in the throughputs table"
            )
        steps = max(1, int(max(thr.values()) * chunk_s))
        task, sync = {}, {}
        for t, v in thr.items():
            if v <= 0:
                continue
            span = max(1, round(steps / v / unit_s))
            one = rate.get((t, job.job_type, 1), 0.0)
            p = span if one <= 0 else min(span, max(1, round(steps / (k * one) / unit_s)))
            task[t], sync[t] = p, span - p
        if job.priority_weight != int(job.priority_weight):
            raise TraceError(
                f"job {i} ({job.job_type!r}): priority weight "
                f"{job.priority_weight} is not an integer"
            )
        out.append(
            Job(
                f"j{i}",
                task,
                rounds=-(-job.total_steps // steps),
                tasks_per_round=k,
                weight=int(job.priority_weight),
                release=round(job.arrival / unit_s),
                sync_time=sync,
            )
        )
    return Instance(tuple(gpus), tuple(out), name, f"{unit_s * 1000:g}ms")


def gavel_cluster(spec: str) -> dict[str, Any]:
    """``"4:4:4"`` (Gavel's ``--cluster_spec``: V100s, P100s, K80s) as a cluster map."""
    parts = spec.split(":")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise TraceError(f"cluster spec {spec!r}: expected #v100:#p100:#k80, e.g. 4:4:4")
    return {t: int(n) for t, n in zip(("v100", "p100", "k80"), parts) if int(n) > 0}
