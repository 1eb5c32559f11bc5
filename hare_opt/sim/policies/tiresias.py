"""``tiresias``: two-dimensional least attained service with discretised priority queues.

Source: Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep
Learning", NSDI '19 (2D-LAS: service = GPUs x time; a few queues with
thresholds; FIFO inside a queue; gang placement; preemption between queues).
Simplified: preemption happens only at round ends (tasks are non-preemptive);
no starvation promotion; heterogeneity-blind placement (the lowest-numbered idle
GPUs the job can run on, as Tiresias does not model GPU types). Queue thresholds in
GPU-seconds of attained service, Tiresias's own: its simulator (SymbioticLab/Tiresias,
``simulator/jobs.py`` at 959f9b0, 2020-05-06) runs three queues with limits
[3250, 7200, 18000], of which the first two demote (the last queue has no limit).
``queue_rounds`` gives thresholds relative to the workload instead (x the GPU time of a
median round), the sensitivity setting this policy used to default to.
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
from hare_opt.model.units import unit_seconds
from hare_opt.sim.engine.state import GangKernel
from hare_opt.sim.policies.gang import GangOptions, GangPolicy

if TYPE_CHECKING:
    from hare_opt.sim.engine.reference import Simulator

#: Blox's round length (s), with which it runs its Tiresias.
BLOX_ROUND_S = 300.0
#: Tiresias's queue limits (GPU-seconds) that demote a job: data from its simulator.
TIRESIAS_LIMITS_S = (3250.0, 7200.0)


@dataclass(frozen=True)
class TiresiasOptions(GangOptions):
    lease: float | None = option(
        BLOX_ROUND_S,
        lo=1e-3,
        doc="seconds a job holds its GPUs "
        "under the lease semantics (Blox's round); null: whole job",
    )
    thresholds: tuple[float, ...] | None = option(
        TIRESIAS_LIMITS_S, doc="queue limits in GPU-seconds (Tiresias's simulator's)"
    )
    queue_rounds: tuple[float, ...] | None = option(
        None, doc="queue limits in median rounds of GPU time instead of thresholds"
    )

    def __post_init__(self) -> None:
        for name in ("queue_rounds", "thresholds"):
            v = getattr(self, name)
            if v is not None and (
                not v or any(x <= 0 for x in v) or any(a >= b for a, b in zip(v, v[1:]))
            ):
                raise OptionError(
                    f"must be increasing positive numbers, got {list(v)}",
                    option=name,
                    owner="policy 'tiresias'",
                )


class TiresiasPolicy(GangPolicy):
    name = "tiresias"
    Options: ClassVar[type[GangOptions]] = TiresiasOptions

    def __init__(self, **options):
        super().__init__(**options)
        self.queue_rounds = self.options.queue_rounds
        self.thresholds = self.options.thresholds

    def reset(self, sim: Simulator) -> None:
        super().reset(sim)
        inst = sim.inst
        if self.queue_rounds is not None:  # relative to this workload
            mean_task = np.where(inst.eligible_by_type, inst.proc_by_type, 0).sum(
                axis=1
            ) / inst.eligible_by_type.sum(axis=1)
            base = float(np.median(inst.tasks_per_round * mean_task))
            limits = np.asarray(self.queue_rounds, dtype=float) * base
        else:  # GPU-seconds in the instance's time unit (an instance without one: seconds)
            sec = unit_seconds(inst.time_unit) or 1.0
            limits = np.asarray(self.thresholds or (), dtype=float) / sec
        self._limits = limits

    def key(self, sim: Simulator, job: int):
        queue = int(np.searchsorted(self._limits, sim.busy[job], side="right"))
        return (queue, int(sim.inst.release[job]), job)

    def gpu_keys(self, sim: Simulator, job: int, gpus: np.ndarray) -> np.ndarray:
        return np.zeros(len(gpus), dtype=np.int64)  # the lowest-numbered idle GPUs

    def kernel_state(self, sim: Simulator) -> GangKernel | None:
        """``engine/kernel.py`` transcribes this class's rules (a subclass: none)."""
        return GangKernel("tiresias", limits=self._limits) if type(self) is TiresiasPolicy else None
