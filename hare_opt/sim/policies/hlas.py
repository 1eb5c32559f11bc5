"""``hlas``: Heterogeneity-aware Least-Attained-Service, our non-clairvoyant policy.

Source: the name comes from the journal version of Hare (IEEE TCC 2024), whose
definition we do not have; this design is ours (docs/simulator.md explains why
it should work). What it knows: arrivals, weights, tasks per round and the
profiled task/sync time per GPU type. What it does not know: how many rounds a
job has left.

* Attained service is counted in *fastest-GPU-equivalent work*: every started
  task adds the job's task time on its fastest type, wherever it ran. GPU-time
  LAS would charge a job more for being put on a slow GPU, pushing it down for
  the cluster's choice; progress-based service does not.
* Priority: discretised weighted LAS as in Tiresias, class
  floor(log2(1 + service / (weight x quantum))), FIFO inside a class. Classes keep
  a job on its GPUs for a while (fewer switches, so fewer setups) while short
  jobs still overtake long ones within a few doublings. ``quantum`` defaults to
  ``base_rounds`` rounds of the median job at full speed.
* Placement: relaxed (tasks of a round placed independently). In priority order,
  each job's next task goes to the GPU where it would *finish* earliest (speed,
  setup and busy time included); if that GPU is busy, the job waits for it and
  lower classes may use the idle GPUs meanwhile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hare_opt.model.options import option
from hare_opt.sim.engine.state import RelaxedKernel, keeps_rules
from hare_opt.sim.events import Events
from hare_opt.sim.policy import PolicyOptions
from hare_opt.sim.semantics import Mode

if TYPE_CHECKING:
    from hare_opt.sim.engine.reference import Simulator


@dataclass(frozen=True)
class HLASOptions(PolicyOptions):
    base_rounds: float = option(2.0, lo=1e-9, doc="quantum in median rounds at full speed")
    quantum: float | None = option(None, lo=1e-9, doc="quantum in time units (overrides)")


class HLASPolicy:
    name = "hlas"
    mode: Mode = "relaxed"

    Options: ClassVar[type[HLASOptions]] = HLASOptions

    def __init__(self, **options: Any):
        o = self.Options.parse(options, owner=f"policy {self.name!r}")
        self.base_rounds, self.quantum = o.base_rounds, o.quantum

    def reset(self, sim: Simulator) -> None:
        inst = sim.inst
        round_work = inst.tasks_per_round * inst.min_task_time
        self.q = self.quantum or max(1.0, self.base_rounds * float(np.median(round_work)))
        self.ready: set[int] = set()

    def stats(self) -> dict[str, Any]:
        return {}

    def kernel_state(self, sim: Simulator) -> RelaxedKernel | None:
        """``engine/relaxed_kernel.py`` transcribes ``decide``, ``job_class`` and
        ``reset``; a subclass overriding one hands no state."""
        if not keeps_rules(self, HLASPolicy, ("decide", "job_class", "reset")):
            return None
        return RelaxedKernel("hlas", quantum=self.q)

    def job_class(self, sim: Simulator, job: int) -> int:
        service = int(sim.tasks_done[job]) * int(sim.inst.min_task_time[job])
        return int(math.log2(1 + service / (int(sim.inst.weight[job]) * self.q)))

    def decide(self, sim: Simulator, events: Events) -> None:
        self.ready.update(events.arrived)
        self.ready.update(events.opened)
        self.ready = {j for j in self.ready if sim.ready(j)}
        idle = int((sim.state.free <= sim.now).sum())
        if not idle or not self.ready:
            return
        inst = sim.inst
        order = sorted(self.ready, key=lambda j: (self.job_class(sim, j), int(inst.release[j]), j))
        for job in order:
            r = int(sim.state.round[job])
            while idle and sim.state.round[job] == r:
                fin = sim.finishes(job)
                g = int(np.argmin(fin))
                if not sim.idle(g):
                    break  # its best GPU is busy: wait for it
                sim.start(job, g)
                idle -= 1
            if not idle:
                break
