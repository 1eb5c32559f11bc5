"""Task numbering and the canonical form of a schedule shared by the model and its hints.

The CP-SAT model breaks two symmetries (see docs/formulations.md): identical
tasks of a round are numbered by (start, GPU type), and GPUs of one type are
numbered by the first task (in task order) they run. A warm-start hint must
satisfy the same rules, or CP-SAT would reject it, so any feasible schedule is
first relabelled into that canonical form here. Relabelling never changes the
objective: it only permutes identical tasks and identical GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hare_opt.model import Instance, Schedule


@dataclass(frozen=True)
class Tasks:
    """Tasks numbered job by job, round by round: ``i = offset[j] + r * K_j + k``."""

    inst: Instance

    @cached_property
    def offset(self) -> np.ndarray:
        size = self.inst.rounds * self.inst.tasks_per_round
        return np.concatenate(([0], np.cumsum(size))).astype(np.int64)

    @property
    def count(self) -> int:
        return int(self.offset[-1])

    @cached_property
    def job(self) -> np.ndarray:
        size = self.inst.rounds * self.inst.tasks_per_round
        return np.repeat(np.arange(self.inst.num_jobs), size)

    @cached_property
    def local(self) -> np.ndarray:
        return np.arange(self.count) - self.offset[self.job]

    @cached_property
    def round(self) -> np.ndarray:
        return self.local // self.inst.tasks_per_round[self.job]

    @cached_property
    def task(self) -> np.ndarray:
        return self.local % self.inst.tasks_per_round[self.job]

    def index(self, job: int, rnd: int, task: int) -> int:
        return int(self.offset[job] + rnd * self.inst.tasks_per_round[job] + task)

    def type_groups(self) -> list[list[int]]:
        """GPU indices of each type, in instance order (identical GPUs)."""
        tix = self.inst.gpu_type_index
        return [np.flatnonzero(tix == t).tolist() for t in range(len(self.inst.gpu_types))]

    def canonical(self, schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
        """(start, gpu) per task index of a feasible ``schedule`` in canonical labelling."""
        inst = self.inst
        j = schedule.job_indices(inst)
        g = schedule.gpu_indices(inst)
        r, s = schedule.round, schedule.start
        # Identical tasks of a round: number them by (start, GPU type).
        order = np.lexsort((inst.gpu_type_index[g], s, r, j))
        j, r, g, s = j[order], r[order], g[order], s[order]
        k = np.arange(len(j)) - np.searchsorted(
            j * (int(inst.rounds.max()) + 1) + r, j * (int(inst.rounds.max()) + 1) + r
        )
        idx = self.offset[j] + r * inst.tasks_per_round[j] + k
        start = np.empty(self.count, dtype=np.int64)
        gpu = np.empty(self.count, dtype=np.int64)
        start[idx], gpu[idx] = s, g
        # Identical GPUs: number them by the first task index they run (empty ones last).
        first = np.full(inst.num_gpus, self.count, dtype=np.int64)
        np.minimum.at(first, gpu, np.arange(self.count))
        relabel = np.arange(inst.num_gpus)
        for group in self.type_groups():
            ranked = sorted(group, key=lambda q: (first[q], q))
            relabel[ranked] = group
        return start, relabel[gpu]
