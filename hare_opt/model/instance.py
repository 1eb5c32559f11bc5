"""Problem model: GPUs, jobs and instances (specification: docs/spec.md).

The types are frozen and validate on construction, so every solver can trust
an ``Instance`` without checking it again. Dense numpy views by job x GPU and
job x GPU type are derived lazily and cached: solvers, bounds and the checker
all read the same arrays.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from hare_opt.model.errors import InstanceError

#: Largest time value accepted. Keeps every sum of times far inside int64 and
#: inside CP-SAT's domains, so "huge" inputs get an error, not an overflow.
MAX_TIME = 10**12
MAX_COUNT = 10**7  # rounds, tasks per round, weights
#: Largest serial time of one job (all its tasks one after another, slowest type, with
#: sync and a setup): keeps sums over thousands of jobs, and products like K x p, in int64.
MAX_JOB_TIME = 2**50
#: Largest sum over jobs of weight x the serial horizon (``Instance.serial_horizon``: a
#: time by which some schedule has finished). Every completion time C_j of a schedule
#: the solvers form is at most the horizon, so the objective sum_j w_j C_j, and every
#: weighted sum of times below it, stays under 2^60: inside int64 (< 2^63) with room for
#: the sums and differences of two such values, and inside CP-SAT's domains.
MAX_WEIGHTED_TIME = 2**60


def _check_int(
    value: Any, field_name: str, owner: str | None, *, minimum: int, maximum: int = MAX_TIME
) -> int:
    # bool is an int subclass in Python, but a JSON true is not a time.
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InstanceError(f"must be an integer, got {value!r}", field=field_name, owner=owner)
    value = int(value)
    if value < minimum:
        what = "positive" if minimum == 1 else "non-negative" if minimum == 0 else f">= {minimum}"
        raise InstanceError(f"must be a {what} integer, got {value}", field=field_name, owner=owner)
    if value > maximum:
        raise InstanceError(
            f"{value} exceeds the largest accepted value {maximum}", field=field_name, owner=owner
        )
    return value


def _max_sync(job: Job) -> int:
    sync = job.sync_time
    return max(sync.values(), default=0) if isinstance(sync, Mapping) else int(sync)


def _check_id(value: Any, field_name: str, owner: str | None) -> str:
    if not isinstance(value, str) or not value:
        raise InstanceError(
            f"must be a non-empty string, got {value!r}", field=field_name, owner=owner
        )
    return value


def _check_time_map(value: Any, field_name: str, owner: str, *, minimum: int) -> Mapping[str, int]:
    if not isinstance(value, Mapping):
        raise InstanceError(
            f"must be a map from GPU type to integer, got {value!r}", field=field_name, owner=owner
        )
    out = {}
    for key, t in value.items():
        _check_id(key, f"{field_name}", owner)
        out[key] = _check_int(t, f"{field_name}.{key}", owner, minimum=minimum)
    return MappingProxyType(out)


@dataclass(frozen=True)
class GPU:
    """One GPU: runs one task at a time, non-preemptively."""

    id: str
    type: str
    node: str | None = None

    def __post_init__(self) -> None:
        owner = f"gpu {self.id!r}" if isinstance(self.id, str) and self.id else "gpu"
        _check_id(self.id, "id", owner)
        _check_id(self.type, "type", owner)
        if self.node is not None:
            _check_id(self.node, "node", owner)


@dataclass(frozen=True)
class Job:
    """A data-parallel training job: ``rounds`` rounds of ``tasks_per_round`` tasks.

    ``sync_time`` is either one integer for every GPU type or a map by type;
    the form given is kept so that files round-trip unchanged.
    """

    id: str
    task_time: Mapping[str, int]
    rounds: int = 1
    tasks_per_round: int = 1
    weight: int = 1
    release: int = 0
    sync_time: int | Mapping[str, int] = 0
    switch_overhead: int = 0

    def __post_init__(self) -> None:
        owner = f"job {self.id!r}" if isinstance(self.id, str) and self.id else "job"
        _check_id(self.id, "id", owner)
        _check_int(self.weight, "weight", owner, minimum=1, maximum=MAX_COUNT)
        _check_int(self.release, "release", owner, minimum=0)
        _check_int(self.rounds, "rounds", owner, minimum=1, maximum=MAX_COUNT)
        _check_int(self.tasks_per_round, "tasks_per_round", owner, minimum=1, maximum=MAX_COUNT)
        _check_int(self.switch_overhead, "switch_overhead", owner, minimum=0)
        tt = _check_time_map(self.task_time, "task_time", owner, minimum=1)
        if not tt:
            raise InstanceError("must name at least one GPU type", field="task_time", owner=owner)
        object.__setattr__(self, "task_time", tt)
        if isinstance(self.sync_time, Mapping):
            st = _check_time_map(self.sync_time, "sync_time", owner, minimum=0)
            missing = sorted(set(tt) - set(st))
            if missing:
                raise InstanceError(
                    f"has no entry for GPU type(s) {missing} that task_time names",
                    field="sync_time",
                    owner=owner,
                )
            object.__setattr__(self, "sync_time", st)
        else:  # a plain int, so that files and hashes never see a numpy scalar
            object.__setattr__(
                self, "sync_time", _check_int(self.sync_time, "sync_time", owner, minimum=0)
            )
        for name in ("weight", "release", "rounds", "tasks_per_round", "switch_overhead"):
            object.__setattr__(self, name, int(getattr(self, name)))
        serial = (
            self.rounds * self.tasks_per_round * (max(tt.values()) + _max_sync(self))
            + self.switch_overhead
        )
        if serial > MAX_JOB_TIME:
            raise InstanceError(
                f"rounds x tasks_per_round x (task time + sync) = {serial} "
                f"exceeds the largest accepted job time {MAX_JOB_TIME}",
                field="task_time",
                owner=owner,
            )

    def sync_on(self, gpu_type: str) -> int:
        """Sync time of one task run on a GPU of ``gpu_type``."""
        if isinstance(self.sync_time, Mapping):
            return self.sync_time.get(gpu_type, 0)
        return self.sync_time

    @property
    def num_tasks(self) -> int:
        return self.rounds * self.tasks_per_round


@dataclass(frozen=True)
class Instance:
    """A cluster and its jobs. Indices into ``gpus`` and ``jobs`` are used by all arrays."""

    gpus: tuple[GPU, ...]
    jobs: tuple[Job, ...]
    name: str = "instance"
    time_unit: str = "s"
    _index: dict[str, dict[str, int]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", tuple(self.gpus))
        object.__setattr__(self, "jobs", tuple(self.jobs))
        _check_id(self.name, "name", "instance")
        if not isinstance(self.time_unit, str):
            raise InstanceError(
                f"must be a string, got {self.time_unit!r}", field="time_unit", owner="instance"
            )
        if not self.gpus:
            raise InstanceError("must list at least one GPU", field="gpus", owner="instance")
        if not self.jobs:
            raise InstanceError("must list at least one job", field="jobs", owner="instance")
        for kind, items, cls in (("gpu", self.gpus, GPU), ("job", self.jobs, Job)):
            seen: set[str] = set()
            for item in items:
                if not isinstance(item, cls):
                    raise InstanceError(
                        f"expected a {cls.__name__}, got {item!r}",
                        field=f"{kind}s",
                        owner="instance",
                    )
                if item.id in seen:
                    raise InstanceError(
                        f"duplicate id {item.id!r}", field="id", owner=f"{kind} {item.id!r}"
                    )
                seen.add(item.id)
        types = {g.type for g in self.gpus}
        for job in self.jobs:
            if not types & set(job.task_time):
                raise InstanceError(
                    f"names GPU types {sorted(job.task_time)}, but the cluster has only "
                    f"{sorted(types)}: no GPU can run this job",
                    field="task_time",
                    owner=f"job {job.id!r}",
                )
        self._check_weighted_time()
        # Index maps for O(1) id look-ups; excluded from equality and repr.
        object.__setattr__(
            self,
            "_index",
            {
                "job": {j.id: i for i, j in enumerate(self.jobs)},
                "gpu": {g.id: i for i, g in enumerate(self.gpus)},
            },
        )

    def _check_weighted_time(self) -> None:
        """Refuse an instance whose weighted sums could leave 64 bits
        (``MAX_WEIGHTED_TIME``), naming the heaviest job and the longest one."""
        serial = [
            j.rounds
            * j.tasks_per_round
            * (max(j.task_time.values()) + _max_sync(j) + j.switch_overhead)
            for j in self.jobs
        ]
        horizon = max(j.release for j in self.jobs) + sum(serial)
        weights = sum(j.weight for j in self.jobs)
        total = weights * horizon  # Python ints: exact
        if total <= MAX_WEIGHTED_TIME:
            return
        heavy = max(self.jobs, key=lambda j: j.weight)
        long = self.jobs[max(range(len(serial)), key=serial.__getitem__)]
        raise InstanceError(
            f"sum of weights x serial horizon = {weights} x "
            f"{horizon} = {total:.3g} exceeds the largest accepted {MAX_WEIGHTED_TIME} "
            f"(2^60, so that the objective fits in 64-bit integers); lower the weights "
            f"(heaviest: job {heavy.id!r}, weight {heavy.weight}) or the times (longest: "
            f"job {long.id!r}, rounds x tasks_per_round x (task time + sync + switch "
            f"overhead) = {max(serial)})",
            field="weight",
            owner=f"job {heavy.id!r}",
        )

    # --- sizes and look-ups -------------------------------------------------
    @property
    def num_jobs(self) -> int:
        return len(self.jobs)

    @property
    def num_gpus(self) -> int:
        return len(self.gpus)

    @cached_property
    def num_tasks(self) -> int:
        return int(sum(j.num_tasks for j in self.jobs))

    def job_index(self, job_id: str) -> int:
        return self._index["job"][job_id]

    def gpu_index(self, gpu_id: str) -> int:
        return self._index["gpu"][gpu_id]

    @cached_property
    def job_ids(self) -> np.ndarray:
        return np.array([j.id for j in self.jobs], dtype=object)

    @cached_property
    def gpu_ids(self) -> np.ndarray:
        return np.array([g.id for g in self.gpus], dtype=object)

    # --- GPU types ----------------------------------------------------------
    @cached_property
    def gpu_types(self) -> tuple[str, ...]:
        """Distinct GPU types in order of first appearance."""
        return tuple(dict.fromkeys(g.type for g in self.gpus))

    @cached_property
    def gpu_type_index(self) -> np.ndarray:
        """(M,) type index of each GPU."""
        pos = {t: k for k, t in enumerate(self.gpu_types)}
        return np.array([pos[g.type] for g in self.gpus], dtype=np.int64)

    @cached_property
    def type_count(self) -> np.ndarray:
        """(T,) number of GPUs of each type."""
        return np.bincount(self.gpu_type_index, minlength=len(self.gpu_types)).astype(np.int64)

    # --- job x type and job x GPU views --------------------------------------
    @cached_property
    def proc_by_type(self) -> np.ndarray:
        """(N, T) task time per GPU type; 0 where the job cannot run."""
        out = np.zeros((self.num_jobs, len(self.gpu_types)), dtype=np.int64)
        for i, job in enumerate(self.jobs):
            for k, t in enumerate(self.gpu_types):
                out[i, k] = job.task_time.get(t, 0)
        return out

    @cached_property
    def sync_by_type(self) -> np.ndarray:
        """(N, T) sync time per GPU type; 0 where the job cannot run."""
        out = np.zeros((self.num_jobs, len(self.gpu_types)), dtype=np.int64)
        for i, job in enumerate(self.jobs):
            for k, t in enumerate(self.gpu_types):
                if t in job.task_time:
                    out[i, k] = job.sync_on(t)
        return out

    @cached_property
    def eligible_by_type(self) -> np.ndarray:
        return self.proc_by_type > 0

    @cached_property
    def proc(self) -> np.ndarray:
        """(N, M) task time of each job on each GPU; 0 where ineligible."""
        return self.proc_by_type[:, self.gpu_type_index]

    @cached_property
    def sync(self) -> np.ndarray:
        """(N, M) sync time of each job on each GPU; 0 where ineligible."""
        return self.sync_by_type[:, self.gpu_type_index]

    @cached_property
    def eligible(self) -> np.ndarray:
        """(N, M) whether a job may run on a GPU."""
        return self.proc > 0

    def _job_array(self, attr: str) -> np.ndarray:
        return np.array([getattr(j, attr) for j in self.jobs], dtype=np.int64)

    @cached_property
    def weight(self) -> np.ndarray:
        return self._job_array("weight")

    @cached_property
    def release(self) -> np.ndarray:
        return self._job_array("release")

    @cached_property
    def rounds(self) -> np.ndarray:
        return self._job_array("rounds")

    @cached_property
    def tasks_per_round(self) -> np.ndarray:
        return self._job_array("tasks_per_round")

    @cached_property
    def overhead(self) -> np.ndarray:
        return self._job_array("switch_overhead")

    # --- job-level facts (one home for them) -----------------------------------
    @cached_property
    def alpha(self) -> np.ndarray:
        """(N,) the paper's heterogeneity ratio per job.

        max(slowest/fastest task time, slowest/fastest sync time) over the GPU
        types of this cluster that can run the job. A sync ratio with a zero
        fastest sync is infinite unless all syncs are zero (then 1).
        """
        out = np.ones(self.num_jobs)
        for i in range(self.num_jobs):
            ok = self.eligible_by_type[i]
            p = self.proc_by_type[i, ok]
            s = self.sync_by_type[i, ok]
            ratio = p.max() / p.min()
            if s.max() > 0:
                ratio = max(ratio, math.inf if s.min() == 0 else s.max() / s.min())
            out[i] = ratio
        return out

    @cached_property
    def min_task_time(self) -> np.ndarray:
        """(N,) task time on the fastest eligible GPU type."""
        p = np.where(self.eligible_by_type, self.proc_by_type, np.iinfo(np.int64).max)
        return p.min(axis=1)

    @cached_property
    def min_work(self) -> np.ndarray:
        """(N,) total processing of a job if every task ran on its fastest GPU type."""
        return self.rounds * self.tasks_per_round * self.min_task_time

    def min_round_time(self, job: int, *, setup: bool) -> int:
        """Exact minimum time from a round's first start to its barrier.

        The shortest span in which the job's K identical tasks, spread over the
        whole idle cluster, all end and sync; with ``setup`` every GPU used pays
        the job's switching overhead first (a first round always does).
        """
        return min_makespan_identical(
            self.proc[job],
            self.sync[job],
            self.eligible[job],
            int(self.tasks_per_round[job]),
            int(self.overhead[job]) if setup else 0,
        )

    @cached_property
    def round_time_first(self) -> np.ndarray:
        """(N,) ``min_round_time(j, setup=True)`` for every job."""
        return self._round_times(setup=True)

    @cached_property
    def round_time_next(self) -> np.ndarray:
        """(N,) ``min_round_time(j, setup=False)`` for every job."""
        return self._round_times(setup=False)

    def _round_times(self, *, setup: bool) -> np.ndarray:
        """``min_round_time`` of all jobs at once (thousands of jobs: one call per job is slow).

        The span T is feasible iff the GPUs can end and sync K tasks by T:
        sum over eligible types of m_k * floor((T - o - s_k) / p_k)^+ >= K (the
        argument of ``min_makespan_identical``), so a binary search on T, run for
        every job in parallel, finds the same minimum.
        """
        ok = self.eligible_by_type
        p = np.where(ok, self.proc_by_type, 1)
        s = np.where(ok, self.sync_by_type, 0)
        k = self.tasks_per_round
        o = self.overhead if setup else np.zeros_like(k)
        fastest = np.where(ok, p, np.iinfo(np.int64).max).min(axis=1)
        # One GPU of the fastest type alone finishes by hi; checked in floats so that a
        # product beyond int64 cannot wrap around unseen.
        if self.num_jobs == 0 or (o + s.max(axis=1) + fastest.astype(float) * k > 2**61).any():
            return np.array(
                [self.min_round_time(j, setup=setup) for j in range(self.num_jobs)], dtype=np.int64
            )  # beyond int64 headroom: exact per job
        hi = o + s.max(axis=1) + fastest * k
        lo = np.zeros_like(hi)
        m = self.type_count
        while (lo < hi).any():
            mid = (lo + hi) // 2
            n = np.clip((mid[:, None] - o[:, None] - s) // p, 0, k[:, None])
            enough = np.where(ok, n * m, 0).sum(axis=1) >= k
            hi = np.where(enough, mid, hi)
            lo = np.where(enough, lo, mid + 1)
        return lo

    def with_jobs(self, jobs: tuple[Job, ...] | list[Job], name: str | None = None) -> Instance:
        """A copy with other jobs on the same cluster."""
        return Instance(self.gpus, tuple(jobs), name or self.name, self.time_unit)

    def without_setups(self) -> Instance:
        """The same instance with every switching overhead set to zero."""
        return self.with_jobs([replace(j, switch_overhead=0) for j in self.jobs])

    def residual(
        self,
        rows: Sequence[int],
        rounds: Sequence[int],
        weights: Sequence[int],
        releases: Sequence[int],
        extra: Sequence[Job] = (),
        name: str | None = None,
    ) -> Instance:
        """The work left, for an online planner: job ``rows[i]`` with ``rounds[i]`` rounds,
        weight ``weights[i]`` and release ``releases[i]``, then the ``extra`` jobs.

        The minimum round times of the kept jobs are inherited: they depend on a job's
        task and sync times, K and setup and on the cluster, none of which a residual
        changes, and recomputing them was a third of a re-plan on 512 GPUs.
        """
        jobs = [
            replace(self.jobs[r], rounds=int(n), weight=int(w), release=int(a))
            for r, n, w, a in zip(rows, rounds, weights, releases)
        ]
        out = Instance(self.gpus, (*jobs, *extra), name or self.name, self.time_unit)
        rows = list(rows)
        for attr, setup in (("round_time_first", True), ("round_time_next", False)):
            tail = [out.min_round_time(j, setup=setup) for j in range(len(rows), out.num_jobs)]
            out.__dict__[attr] = np.concatenate(  # seeds this class's own cached_property
                [getattr(self, attr)[rows], np.array(tail, dtype=np.int64)]
            )
        return out


def min_makespan_identical(
    proc: np.ndarray, sync: np.ndarray, eligible: np.ndarray, count: int, setup: int = 0
) -> int:
    """Minimum over assignments of ``count`` identical tasks of max_g (setup + n_g p_g + s_g).

    Each GPU's finish time grows with the number of tasks it takes, so giving
    every next task to the GPU whose finish would be earliest is optimal
    (exchange argument). GPUs of one type are interchangeable, so the work is
    done per GPU with a heap: O((M + K) log M), bounded by a binary search when
    K is large.
    """
    p = np.asarray(proc)[np.asarray(eligible)]
    s = np.asarray(sync)[np.asarray(eligible)]
    if count <= 4 * len(p) + 64:
        heap = [(setup + int(pi) + int(si), int(pi)) for pi, si in zip(p, s)]
        heapq.heapify(heap)
        finish = 0
        for _ in range(count):
            f, pi = heapq.heappop(heap)
            finish = max(finish, f)
            heapq.heappush(heap, (f + pi, pi))
        return finish
    # Large K: smallest T with sum_g floor((T - setup - s_g) / p_g) >= K.
    lo, hi = 0, setup + int(s.max()) + int(p.min()) * count
    while lo < hi:
        mid = (lo + hi) // 2
        cap = np.maximum((mid - setup - s) // p, 0).sum()
        if cap >= count:
            hi = mid
        else:
            lo = mid + 1
    return lo
