"""Seeded random instances with one knob per feature of the model.

Used for tests and for the small libraries that exact solvers must handle, so
every knob defaults to "off" or "small" and times stay small integers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hare_opt.model import GPU, Instance, Job, OptionError


def _range(name: str, value: Sequence[int], minimum: int) -> tuple[int, int]:
    try:
        lo, hi = (int(v) for v in value)
    except (TypeError, ValueError):
        raise OptionError(
            f"{name}: expected a (low, high) pair of integers, got {value!r}"
        ) from None
    if not minimum <= lo <= hi:
        raise OptionError(f"{name}: expected {minimum} <= low <= high, got ({lo}, {hi})")
    return lo, hi


def random_instance(
    seed: int,
    *,
    n_jobs: int = 5,
    n_gpus: int = 3,
    gpu_types: Sequence[str] = ("V100", "P100", "K80"),
    rounds: tuple[int, int] = (1, 3),
    tasks_per_round: tuple[int, int] = (1, 3),
    heterogeneity: float = 1.0,
    release_spread: int = 0,
    sync: tuple[int, int] = (0, 0),
    sync_map: bool = False,
    switch_overhead: tuple[int, int] = (0, 0),
    weights: tuple[int, int] = (1, 5),
    max_task_time: int = 20,
    max_tasks: int | None = None,
    eligibility: float = 0.0,
    finite_alpha: bool = False,
    name: str | None = None,
) -> Instance:
    """A random instance; the same seed and knobs give the same instance.

    * ``n_gpus`` GPUs whose types are drawn from ``gpu_types``; the first
      ``min(n_gpus, len(gpu_types))`` GPUs get distinct types, so small clusters
      are still heterogeneous when asked to be.
    * ``heterogeneity`` h >= 0: a job's task time on a type is its base time
      times (1 + h)^u, u in [0, 1], mixing a per-type level (earlier types in
      ``gpu_types`` tend to be faster: related machines) with per-job noise
      (unrelated machines). So every job's slowest/fastest ratio is at most
      1 + h (up to rounding); h = 0 makes all GPUs identical. Task times lie in
      [1, ``max_task_time``].
    * ``rounds``, ``tasks_per_round``, ``weights``, ``switch_overhead``, ``sync``:
      inclusive integer ranges drawn uniformly per job; with ``sync_map`` the sync
      time is drawn per GPU type (a map), else one integer per job.
    * ``release_spread``: releases uniform in [0, release_spread] (0: all at 0).
    * ``max_tasks``: cap on the total number of tasks; jobs drawn larger are
      shrunk (rounds first), every job keeps at least one task.
    * ``eligibility``: probability that a job cannot run on a present GPU type;
      a job always keeps at least one type of the cluster.
    * ``finite_alpha``: with ``sync_map``, each job's sync map is all zero (when
      ``sync`` allows 0, with probability 1/2) or all positive, so the paper's
      alpha is finite (a map mixing 0 and > 0 makes it infinite).
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise OptionError(f"n_jobs: must be a positive integer, got {n_jobs!r}")
    if isinstance(n_gpus, bool) or not isinstance(n_gpus, int) or n_gpus < 1:
        raise OptionError(f"n_gpus: must be a positive integer, got {n_gpus!r}")
    types = list(dict.fromkeys(gpu_types))
    if not types or not all(isinstance(t, str) and t for t in types):
        raise OptionError(f"gpu_types: expected non-empty type names, got {gpu_types!r}")
    if not heterogeneity >= 0:
        raise OptionError(f"heterogeneity: must be >= 0, got {heterogeneity!r}")
    if not 0 <= eligibility < 1:
        raise OptionError(f"eligibility: must be in [0, 1), got {eligibility!r}")
    if release_spread < 0:
        raise OptionError(f"release_spread: must be >= 0, got {release_spread!r}")
    if max_task_time < 1:
        raise OptionError(f"max_task_time: must be >= 1, got {max_task_time!r}")
    if max_tasks is not None and max_tasks < n_jobs:
        raise OptionError(f"max_tasks: {max_tasks} cannot give each of {n_jobs} jobs a task")
    r_rng = _range("rounds", rounds, 1)
    k_rng = _range("tasks_per_round", tasks_per_round, 1)
    s_rng = _range("sync", sync, 0)
    o_rng = _range("switch_overhead", switch_overhead, 0)
    w_rng = _range("weights", weights, 1)

    rng = np.random.default_rng(seed)
    first = rng.permutation(len(types))[: min(n_gpus, len(types))]
    drawn = np.concatenate([first, rng.integers(len(types), size=n_gpus - len(first))])
    gpus = tuple(GPU(f"g{i}", types[int(k)]) for i, k in enumerate(drawn))
    present = [t for t in types if t in {g.type for g in gpus}]
    level = {t: types.index(t) / max(1, len(types) - 1) for t in present}

    left = max_tasks  # tasks still allowed; one is reserved for every later job
    base_hi = max(1, int(max_task_time / (1 + heterogeneity)))
    jobs = []
    for j in range(n_jobs):
        r = int(rng.integers(r_rng[0], r_rng[1] + 1))
        k = int(rng.integers(k_rng[0], k_rng[1] + 1))
        if left is not None:
            allowed = left - (n_jobs - j - 1)
            r = min(r, allowed)
            k = min(k, allowed // r)
            left -= r * k
        keep = [t for t in present if rng.random() >= eligibility]
        if not keep:
            keep = [present[int(rng.integers(len(present)))]]
        base = rng.integers(1, base_hi + 1)
        u = {t: 0.5 * level[t] + 0.5 * rng.random() for t in keep}
        task_time = {
            t: int(min(max_task_time, max(1, round(base * (1 + heterogeneity) ** u[t]))))
            for t in keep
        }
        if sync_map and finite_alpha:
            low = max(1, s_rng[0]) if s_rng[1] > 0 else 0
            zero = s_rng[0] == 0 and rng.random() < 0.5
            sync_time: int | dict[str, int] = {
                t: 0 if zero else int(rng.integers(low, s_rng[1] + 1)) for t in keep
            }
        elif sync_map:
            sync_time = {t: int(rng.integers(s_rng[0], s_rng[1] + 1)) for t in keep}
        else:
            sync_time = int(rng.integers(s_rng[0], s_rng[1] + 1))
        jobs.append(
            Job(
                id=f"j{j}",
                task_time=task_time,
                rounds=r,
                tasks_per_round=k,
                weight=int(rng.integers(w_rng[0], w_rng[1] + 1)),
                release=int(rng.integers(0, release_spread + 1)),
                sync_time=sync_time,
                switch_overhead=int(rng.integers(o_rng[0], o_rng[1] + 1)),
            )
        )
    return Instance(gpus, tuple(jobs), name or f"random-s{seed}", "s")
