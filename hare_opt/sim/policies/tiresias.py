"""``tiresias``: two-dimensional least attained service with discretised priority queues.

Source: Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep
Learning", NSDI '19 (2D-LAS: service = GPUs x time; a few queues with
thresholds; FIFO inside a queue; gang placement; preemption between queues).
Simplified: preemption happens only at round ends (tasks are non-preemptive);
no starvation promotion; heterogeneity-blind placement (the lowest-numbered idle
GPUs the job can run on, as Tiresias does not model GPU types). Thresholds are
relative to the workload: ``queue_rounds`` x the GPU-time of a median round.
Leases: 300 s by default, the round Blox (Agarwal et al., EuroSys '24) runs its
Tiresias with; Tiresias itself preempts at arrivals and queue changes, which a lease
that is not revoked approximates at its length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from hare_opt.model import OptionError
from hare_opt.model.options import option
from hare_opt.sim.policies.gang import GangOptions, GangPolicy

if TYPE_CHECKING:
    from hare_opt.sim.simulator import Simulator

#: Blox's round length (s), with which it runs its Tiresias.
BLOX_ROUND_S = 300.0


@dataclass(frozen=True)
class TiresiasOptions(GangOptions):
    lease: float | None = option(BLOX_ROUND_S, lo=1e-3, doc="seconds a job holds its GPUs "
                                 "under the lease semantics (Blox's round); null: whole job")
    queue_rounds: tuple[float, ...] = option((10.0, 100.0), doc="queue limits, in median "
                                             "rounds of GPU time")
    thresholds: tuple[float, ...] | None = option(None, doc="queue limits in GPU time "
                                                  "(overrides queue_rounds)")

    def __post_init__(self) -> None:
        for name in ("queue_rounds", "thresholds"):
            v = getattr(self, name)
            if v is not None and (not v or any(x <= 0 for x in v)
                                  or any(a >= b for a, b in zip(v, v[1:]))):
                raise OptionError(f"must be increasing positive numbers, got {list(v)}",
                                  option=name, owner="policy 'tiresias'")


class TiresiasPolicy(GangPolicy):
    name = "tiresias"
    Options: ClassVar[type[GangOptions]] = TiresiasOptions

    def __init__(self, **options):
        super().__init__(**options)
        self.queue_rounds = self.options.queue_rounds
        self.thresholds = self.options.thresholds

    def reset(self, sim: Simulator) -> None:
        super().reset(sim)
        limits = self.thresholds
        if limits is None:  # relative to this workload
            inst = sim.inst
            mean_task = np.where(inst.eligible_by_type, inst.proc_by_type, 0).sum(axis=1) \
                / inst.eligible_by_type.sum(axis=1)
            base = float(np.median(inst.tasks_per_round * mean_task))
            limits = tuple(r * base for r in self.queue_rounds)
        self._limits = np.asarray(limits, dtype=float)

    def key(self, sim: Simulator, job: int):
        queue = int(np.searchsorted(self._limits, sim.busy[job], side="right"))
        return (queue, int(sim.inst.release[job]), job)

    def gpu_keys(self, sim: Simulator, job: int, gpus: np.ndarray) -> np.ndarray:
        return np.zeros(len(gpus), dtype=np.int64)  # the lowest-numbered idle GPUs
