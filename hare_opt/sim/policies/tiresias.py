"""``tiresias``: two-dimensional least attained service with discretised priority queues.

Source: Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep
Learning", NSDI '19 (2D-LAS: service = GPUs x time; a few queues with
thresholds; FIFO inside a queue; gang placement; preemption between queues).
Simplified: preemption happens only at round ends (tasks are non-preemptive);
no starvation promotion; heterogeneity-blind placement (the lowest-numbered idle
GPUs the job can run on, as Tiresias does not model GPU types). Thresholds are
relative to the workload: ``queue_rounds`` x the GPU-time of a median round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hare_opt.sim.policies.gang import GangPolicy

if TYPE_CHECKING:
    from hare_opt.sim.simulator import Simulator


class TiresiasPolicy(GangPolicy):
    name = "tiresias"

    def __init__(self, *, queue_rounds: tuple[float, ...] = (10.0, 100.0),
                 thresholds: tuple[float, ...] | None = None):
        self.queue_rounds = queue_rounds
        self.thresholds = thresholds

    def reset(self, sim: Simulator) -> None:
        super().reset(sim)
        if self.thresholds is None:
            inst = sim.inst
            mean_task = np.where(inst.eligible_by_type, inst.proc_by_type, 0).sum(axis=1) \
                / inst.eligible_by_type.sum(axis=1)
            base = float(np.median(inst.tasks_per_round * mean_task))
            self.thresholds = tuple(r * base for r in self.queue_rounds)
        self._limits = np.asarray(self.thresholds, dtype=float)

    def key(self, sim: Simulator, job: int):
        queue = int(np.searchsorted(self._limits, sim.busy[job], side="right"))
        return (queue, int(sim.inst.release[job]), job)

    def gpu_keys(self, sim: Simulator, job: int, gpus: np.ndarray) -> np.ndarray:
        return np.zeros(len(gpus), dtype=np.int64)  # the lowest-numbered idle GPUs

    def barrier_keys(self, sim: Simulator, job: int, gpus: np.ndarray) -> np.ndarray:
        return np.zeros(len(gpus), dtype=np.int64)
