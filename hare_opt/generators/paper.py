"""Paper-like workloads: the Hare paper's 8 models on its GPU types (section 6).

A workload is a list of ``JobSpec`` (model, size, arrival, weight), drawn by
``paper_jobs`` or read from a trace (``hare_opt.io.philly``); ``build_instance``
binds it to a cluster with the timing tables of ``profiles``, so the same
workload can be replayed under other switching models, bandwidths or batch
sizes (the paper's Figs. 16-19).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hare_opt.generators.clusters import TESTBED, parse_cluster
from hare_opt.generators.profiles import (
    CATEGORIES,
    PROFILES,
    REFERENCE_GBPS,
    SWITCHING_MODES,
    ModelProfile,
    model_profile,
    read_table,
)
from hare_opt.generators.regimes import Regime, get_regime
from hare_opt.model import GPU, Instance, InstanceError, Job, OptionError

ARRIVALS = ("poisson", "trace", "all-at-zero")
DISTRIBUTIONS = ("philly", "uniform")


@dataclass(frozen=True)
class JobSpec:
    """A workload job before it is bound to a cluster; ``release`` is in seconds."""

    id: str
    model: str
    category: str
    rounds: int
    tasks_per_round: int
    release: float = 0.0
    weight: int = 1

    def __post_init__(self) -> None:
        owner = f"job {self.id!r}"
        for name in ("rounds", "tasks_per_round", "weight"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InstanceError(
                    f"must be a positive integer, got {v!r}", field=name, owner=owner
                )
        if not (
            isinstance(self.release, (int, float, np.number))
            and self.release >= 0
            and math.isfinite(self.release)
        ):
            raise InstanceError(
                f"must be a non-negative number of seconds, got {self.release!r}",
                field="release",
                owner=owner,
            )


def _check_range(name: str, lo_hi: Sequence[float], minimum: float) -> tuple:
    lo, hi = lo_hi
    if not minimum <= lo <= hi:
        raise OptionError(f"{name}: expected {minimum} <= low <= high, got ({lo}, {hi})")
    return lo, hi


def draw_models(rng: np.random.Generator, n: int, mix: Sequence[float]) -> list[ModelProfile]:
    """Models by category share ``mix`` (CV:NLP:Speech:Rec), uniform within a category."""
    p = np.asarray(mix, dtype=float)
    if p.shape != (len(CATEGORIES),) or (p < 0).any() or p.sum() <= 0:
        raise OptionError(
            f"mix: expected {len(CATEGORIES)} non-negative shares "
            f"{':'.join(CATEGORIES)} with a positive sum, got {tuple(mix)}"
        )
    cats = rng.choice(len(CATEGORIES), size=n, p=p / p.sum())
    out = []
    for c in cats:
        models = PROFILES.by_category(CATEGORIES[c])
        out.append(models[int(rng.integers(len(models)))])
    return out


def draw_weights(rng: np.random.Generator, n: int, weights: tuple[int, int]) -> np.ndarray:
    lo, hi = _check_range("weights", weights, 1)
    return rng.integers(lo, hi + 1, size=n)


def _philly_hist() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rows = read_table("philly_jobs_hist.csv")
    cols = [
        np.array([float(r[k]) for r in rows]) for k in ("dur_lo_s", "dur_hi_s", "num_gpus", "count")
    ]
    return cols[0], cols[1], cols[2].astype(np.int64), cols[3] / cols[3].sum()


def rounds_from_duration(duration_s: np.ndarray, rounds: tuple[int, int]) -> np.ndarray:
    """Map trace durations log-linearly onto ``rounds``: keeps the heavy tail's shape.

    The duration range is that of the committed Philly histogram (1 h to ~85 days);
    shorter or longer jobs are clipped to the ends.
    """
    r_lo, r_hi = _check_range("rounds", rounds, 1)
    lo, hi, _, _ = _philly_hist()
    d = np.clip(np.asarray(duration_s, dtype=float), lo.min(), hi.max())
    frac = np.log(d / lo.min()) / np.log(hi.max() / lo.min())
    return np.floor(np.exp(np.log(r_lo) + frac * np.log(r_hi / r_lo)) + 0.5).astype(np.int64)


def _gaps(rng: np.random.Generator, n: int, arrival: str, mean: float) -> np.ndarray:
    if arrival == "all-at-zero" or n == 0:
        return np.zeros(n)
    if arrival == "poisson":
        return rng.exponential(mean, n)
    rows = read_table("philly_interarrival.csv")
    q = np.array([float(r["quantile"]) for r in rows])
    g = np.array([float(r["gap_s"]) for r in rows])
    # Resample the trace's gap distribution, rescaled to the requested mean: the
    # burstiness (many near-zero gaps, rare long ones) is the trace's, the load is ours.
    table_mean = np.interp(np.linspace(0, q.max(), 10001), q, g).mean()
    return np.interp(rng.uniform(0, q.max(), n), q, g) * mean / table_mean


def paper_jobs(
    seed: int,
    n_jobs: int,
    *,
    mix: Sequence[float] = (1, 1, 1, 1),
    arrival: str = "poisson",
    mean_interarrival: float | None = None,
    durations: str = "philly",
    demand: str = "philly",
    rounds: tuple[int, int] | None = None,
    max_gpus: int = 8,
    weights: tuple[int, int] = (1, 5),
    regime: str | Regime = "compressed",
) -> list[JobSpec]:
    """A paper-like workload of ``n_jobs`` jobs (same seed -> same list).

    * ``regime`` (``hare_opt.generators.regimes``) gives the defaults of ``rounds``
      (job lengths in rounds) and ``mean_interarrival`` (its testbed value); bind the
      jobs with ``build_instance(..., regime=)`` of the same regime.

    * ``mix``: category shares CV:NLP:Speech:Rec (the paper's Fig. 17 uses 2:1:1:1 etc.).
    * ``arrival``: ``poisson`` (exponential gaps of mean ``mean_interarrival`` s),
      ``trace`` (Philly submit gaps resampled, rescaled to that mean) or ``all-at-zero``.
      The first job arrives at 0.
    * ``durations``: ``philly`` draws a job duration from the Philly trace (jobs >= 1 h)
      and maps it log-linearly onto ``rounds``; ``uniform`` draws rounds uniformly.
    * ``demand``: ``philly`` takes the GPU demand of the same Philly job (1, 2, 4 or
      8; mostly 1) as ``tasks_per_round``; ``uniform`` draws 1..``max_gpus``.
    * ``weights``: uniform integers (the paper does not give its weights).
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise OptionError(f"n_jobs: must be a positive integer, got {n_jobs!r}")
    reg = get_regime(regime)
    rounds = reg.rounds if rounds is None else rounds
    mean_interarrival = reg.testbed_gap_s if mean_interarrival is None else mean_interarrival
    for name, value, allowed in (
        ("arrival", arrival, ARRIVALS),
        ("durations", durations, DISTRIBUTIONS),
        ("demand", demand, DISTRIBUTIONS),
    ):
        if value not in allowed:
            raise OptionError(f"{name}: must be one of {', '.join(allowed)}, got {value!r}")
    if not mean_interarrival > 0 or max_gpus < 1:
        raise OptionError("mean_interarrival must be > 0 and max_gpus >= 1")
    r_lo, r_hi = _check_range("rounds", rounds, 1)
    rng = np.random.default_rng(seed)
    models = draw_models(rng, n_jobs, mix)
    lo, hi, gpus, p = _philly_hist()
    cell = rng.choice(len(p), size=n_jobs, p=p)
    dur = np.exp(rng.uniform(np.log(lo[cell]), np.log(hi[cell])))
    r = (
        rounds_from_duration(dur, rounds)
        if durations == "philly"
        else rng.integers(r_lo, r_hi + 1, size=n_jobs)
    )
    k = (
        np.minimum(gpus[cell], max_gpus)
        if demand == "philly"
        else rng.integers(1, max_gpus + 1, size=n_jobs)
    )
    gaps = _gaps(rng, n_jobs - 1, arrival, mean_interarrival)
    release = np.concatenate([[0.0], np.cumsum(gaps)])
    w = draw_weights(rng, n_jobs, weights)
    return [
        JobSpec(
            f"j{i}",
            m.model,
            m.category,
            int(r[i]),
            int(k[i]),
            round(float(release[i]), 3),
            int(w[i]),
        )
        for i, m in enumerate(models)
    ]


def _to_units(seconds: float, unit_ms: int) -> int:
    return int(math.floor(seconds * 1000 / unit_ms + 0.5))


def time_unit_name(unit_ms: int) -> str:
    return {1: "ms", 1000: "s"}.get(unit_ms, f"{unit_ms}ms")


def build_instance(
    jobs: Sequence[JobSpec],
    gpus: Sequence[GPU] | str,
    *,
    switching: str = "hare",
    bandwidth_gbps: float | Mapping[str, float] = REFERENCE_GBPS,
    batch_scale: float = 1.0,
    unit_ms: int | None = None,
    name: str = "paper",
    regime: str | Regime = "compressed",
    iters_per_task: int | None = None,
) -> Instance:
    """Bind a workload to a cluster using the committed timing tables.

    * ``regime`` gives the defaults of ``unit_ms`` and ``iters_per_task`` (training
      batches per task): ``compressed`` 100 ms and 100, ``paper`` 1 ms and 1; and how a
      task's sync is modelled (``Regime.sync``): ``paper``'s sync is what the batch's
      compute on each GPU type leaves exposed, and a job of one task a round syncs
      locally (``ModelProfile.sync_time_s``).
    * Times are rounded to integers of ``unit_ms`` milliseconds (at 100 ms, task
      times are ~30-2300 units and Hare/PipeSwitch switching rounds to 0, exactly
      the paper's reason to leave it out; 1 ms keeps it). Task times are at least 1 unit.
    * ``switching``: per-job switch overhead from the paper's Table 3
      (``default``, ``pipeswitch``, ``hare``) or ``none``.
    * ``bandwidth_gbps``: the network sync's volume scales as 25 Gbps / bandwidth; a map
      by GPU type models per-server networks.
    * ``batch_scale``: a task processes ``batch_scale`` times the batch (its
      time scales with it, and so does the compute that hides the sync) and the job
      needs ``ceil(rounds / batch_scale)`` rounds for the same samples, as in the
      paper's batch-size study (Fig. 19).
    * A job may run on the cluster's types that its model's table lists.
    """
    if isinstance(gpus, str):
        gpus = parse_cluster(gpus)
    if switching not in SWITCHING_MODES:
        raise OptionError(
            f"switching: must be one of {', '.join(SWITCHING_MODES)}, got {switching!r}"
        )
    reg = get_regime(regime)
    unit_ms = reg.unit_ms if unit_ms is None else unit_ms
    iters = reg.iters_per_task if iters_per_task is None else iters_per_task
    if isinstance(iters, bool) or not isinstance(iters, int) or iters < 1:
        raise OptionError(f"iters_per_task: must be a positive integer, got {iters!r}")
    if isinstance(unit_ms, bool) or not isinstance(unit_ms, int) or unit_ms < 1:
        raise OptionError(f"unit_ms: must be a positive integer, got {unit_ms!r}")
    if not batch_scale > 0:
        raise OptionError(f"batch_scale: must be > 0, got {batch_scale!r}")
    types = list(dict.fromkeys(g.type for g in gpus))
    bw = (
        dict(bandwidth_gbps)
        if isinstance(bandwidth_gbps, Mapping)
        else dict.fromkeys(types, bandwidth_gbps)
    )
    for t in types:
        if not bw.get(t, 0) > 0:
            raise OptionError(
                f"bandwidth_gbps: GPU type {t!r} needs a positive bandwidth, got {bw.get(t)!r}"
            )
    out = []
    for spec in jobs:
        prof = model_profile(spec.model)
        ok = [t for t in types if t in prof.iter_ms]
        if not ok:
            raise InstanceError(
                f"model {spec.model!r} has timings only for GPU types "
                f"{list(prof.iter_ms)}, none of the cluster's {types}: "
                "no GPU can run this job",
                field="model",
                owner=f"job {spec.id!r}",
            )
        out.append(
            Job(
                id=spec.id,
                weight=spec.weight,
                release=_to_units(spec.release, unit_ms),
                rounds=max(1, math.ceil(spec.rounds / batch_scale)),
                tasks_per_round=spec.tasks_per_round,
                task_time={
                    t: max(
                        1,
                        _to_units(
                            prof.task_time_s(t, batch_scale=batch_scale, iters_per_task=iters),
                            unit_ms,
                        ),
                    )
                    for t in ok
                },
                sync_time={
                    t: _to_units(
                        prof.sync_time_s(
                            t,
                            rule=reg.sync,
                            workers=spec.tasks_per_round,
                            bandwidth_gbps=bw[t],
                            batch_scale=batch_scale,
                        ),
                        unit_ms,
                    )
                    for t in ok
                },
                switch_overhead=_to_units(prof.switch_s(switching), unit_ms),
            )
        )
    return Instance(tuple(gpus), tuple(out), name, time_unit_name(unit_ms))


def paper_instance(
    seed: int,
    n_jobs: int = 30,
    cluster: str | Sequence[GPU] = TESTBED,
    *,
    switching: str = "hare",
    bandwidth_gbps: float | Mapping[str, float] = REFERENCE_GBPS,
    batch_scale: float = 1.0,
    unit_ms: int | None = None,
    name: str | None = None,
    regime: str | Regime = "compressed",
    **job_options,
) -> Instance:
    """``build_instance(paper_jobs(seed, n_jobs, **job_options), cluster, ...)``, both in
    ``regime``."""
    jobs = paper_jobs(seed, n_jobs, regime=regime, **job_options)
    return build_instance(
        jobs,
        cluster,
        switching=switching,
        bandwidth_gbps=bandwidth_gbps,
        batch_scale=batch_scale,
        unit_ms=unit_ms,
        name=name or f"paper-s{seed}-n{n_jobs}",
        regime=regime,
    )
