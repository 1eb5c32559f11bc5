"""Schedules: what ran where and when.

A ``Schedule`` is columnar (one numpy array per field) because schedules of
10^6 tasks are routine in the simulator and the benchmarks. Jobs and GPUs are
kept as ids, exactly as in the file, so that the checker can report an
unknown id instead of failing to load it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from hare_opt.model.errors import ScheduleError
from hare_opt.model.instance import Instance


class Task(NamedTuple):
    """One executed task: job ``job``'s ``task``-th task of round ``round`` on ``gpu``."""

    job: str
    round: int
    task: int
    gpu: str
    start: int
    end: int


def _ints(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _frozen(values: Any, column: np.ndarray) -> np.ndarray:
    """``column`` as a read-only array the caller cannot change through ``values``."""
    if column is values or column.base is not None:
        column = column.copy()
    column.flags.writeable = False
    return column


@dataclass(frozen=True, eq=False)
class Schedule:
    """Columns of executed tasks; ``end - start`` is the processing time (setup excluded).

    Immutable (frozen, read-only columns), so that a checker's report on it stays
    true for as long as the object lives and need not be computed again.
    """

    job: np.ndarray
    round: np.ndarray
    task: np.ndarray
    gpu: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def __post_init__(self) -> None:
        for name in ("job", "gpu"):
            raw = getattr(self, name)
            object.__setattr__(self, name, _frozen(raw, np.asarray(raw, dtype=object).reshape(-1)))
        for name in ("round", "task", "start", "end"):
            raw = getattr(self, name)
            object.__setattr__(self, name, _frozen(raw, _ints(raw)))
        n = len(self.job)
        if any(len(getattr(self, f)) != n for f in ("round", "task", "gpu", "start", "end")):
            raise ScheduleError("schedule columns must have equal lengths")

    def __len__(self) -> int:
        return len(self.job)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schedule) or len(self) != len(other):
            return False
        return all(
            np.array_equal(getattr(self, f), getattr(other, f))
            for f in ("job", "round", "task", "gpu", "start", "end")
        )

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def empty(cls) -> Schedule:
        return cls.from_tasks([])

    @classmethod
    def from_tasks(cls, tasks: Iterable[Task | tuple]) -> Schedule:
        rows = list(tasks)
        if not rows:
            z = np.zeros(0, dtype=np.int64)
            return cls(np.zeros(0, dtype=object), z, z, np.zeros(0, dtype=object), z, z)
        job, rnd, task, gpu, start, end = (np.asarray(c) for c in zip(*rows))
        return cls(job, rnd, task, gpu, start, end)

    @classmethod
    def from_indices(
        cls, instance: Instance, job: Any, round: Any, task: Any, gpu: Any, start: Any
    ) -> Schedule:
        """Build from job and GPU indices; ends follow from the instance's task times."""
        job = _ints(job)
        gpu = _ints(gpu)
        start = _ints(start)
        end = start + instance.proc[job, gpu]
        out = cls(instance.job_ids[job], round, task, instance.gpu_ids[gpu], start, end)
        object.__setattr__(out, "_hints", {"job": _frozen(job, job), "gpu": _frozen(gpu, gpu)})
        return out

    def index_hint(self, column: str) -> np.ndarray | None:
        """The indices a schedule built ``from_indices`` was made of (``job`` or ``gpu``),
        else None. A hint only: the checker uses it after checking it names the same ids."""
        hints = getattr(self, "_hints", None)
        return None if hints is None else hints[column]

    def tasks(self) -> Iterator[Task]:
        for row in zip(
            self.job.tolist(),
            self.round.tolist(),
            self.task.tolist(),
            self.gpu.tolist(),
            self.start.tolist(),
            self.end.tolist(),
        ):
            yield Task(*row)

    def job_indices(self, instance: Instance) -> np.ndarray:
        """Job index of every row (raises KeyError on an unknown id; the checker does not)."""
        return np.fromiter((instance.job_index(j) for j in self.job), np.int64, len(self))

    def gpu_indices(self, instance: Instance) -> np.ndarray:
        return np.fromiter((instance.gpu_index(g) for g in self.gpu), np.int64, len(self))

    def sorted(self) -> Schedule:
        """Rows ordered by (gpu, start): a canonical order for files and diffs."""
        order = np.lexsort((self.task, self.round, self.start, self.gpu.astype(str)))
        return Schedule(
            self.job[order],
            self.round[order],
            self.task[order],
            self.gpu[order],
            self.start[order],
            self.end[order],
        )
