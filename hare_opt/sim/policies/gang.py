"""Gang baselines: the common machinery, Gavel-FIFO and SRTF.

Gang (the spec's strict model): all K tasks of a round start together on K
distinct idle GPUs; the round lasts until its slowest task plus sync. A job
gives its GPUs back at every round end and the policy decides again, which is
round-level preemption (what Gavel's rounds and Tiresias's preemption amount to).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hare_opt.sim.events import Events, SimulationError

if TYPE_CHECKING:
    from hare_opt.sim.simulator import Simulator


def check_gang_feasible(sim: Simulator, policy: str) -> None:
    """A job wider than its eligible GPUs could never start: say so before simulating."""
    inst = sim.inst
    wide = np.flatnonzero(inst.tasks_per_round > inst.eligible.sum(axis=1))
    if len(wide):
        j = int(wide[0])
        raise SimulationError(
            f"policy {policy!r} (gang) cannot run job {inst.jobs[j].id!r}: it needs "
            f"{int(inst.tasks_per_round[j])} GPUs at once, the cluster has only "
            f"{int(inst.eligible[j].sum())} it can run on")


def single_type_fits(sim: Simulator, policy: str) -> np.ndarray:
    """(N, T) whether a job's round fits on the GPUs of one type; raises if none fits.

    Policies that keep a gang round on one GPU type (allox, gavel-las) need this.
    """
    inst = sim.inst
    fits = inst.eligible_by_type & (inst.tasks_per_round[:, None] <= inst.type_count[None, :])
    wide = np.flatnonzero(~fits.any(axis=1))
    if len(wide):
        j = int(wide[0])
        raise SimulationError(
            f"policy {policy!r} (one GPU type per round) cannot run job {inst.jobs[j].id!r}: "
            f"no GPU type it can use has {int(inst.tasks_per_round[j])} GPUs")
    return fits


def gang_round_time(sim: Simulator) -> np.ndarray:
    """(N,) a round's span on the job's K fastest eligible GPUs (straggler plus sync)."""
    inst = sim.inst
    span = np.where(inst.eligible, inst.proc + inst.sync, np.iinfo(np.int64).max)
    k = np.minimum(inst.tasks_per_round, inst.num_gpus) - 1
    return np.sort(span, axis=1)[np.arange(inst.num_jobs), k]


class GangPolicy:
    """Order the waiting jobs by ``key``, give each K idle GPUs chosen by ``gpu_key``.

    ``blocking``: stop at the first job that does not fit (strict FIFO) instead of
    letting later jobs through (backfilling).
    """

    name = "gang"
    mode = "gang"
    blocking = False

    def reset(self, sim: Simulator) -> None:
        check_gang_feasible(sim, self.name)
        self.waiting: set[int] = set()

    def stats(self) -> dict[str, Any]:
        return {}

    def key(self, sim: Simulator, job: int):
        return (int(sim.inst.release[job]), job)

    def gpu_key(self, sim: Simulator, job: int, gpu: int):
        """Earliest finish first: fastest GPUs, and no setup when the GPU already has the job."""
        inst = sim.inst
        return (sim.start_time(job, gpu) + int(inst.proc[job, gpu] + inst.sync[job, gpu]), gpu)

    def choose(self, sim: Simulator, job: int, idle: set[int]) -> list[int] | None:
        k = int(sim.inst.tasks_per_round[job])
        elig = sim.inst.eligible[job]
        cand = [g for g in idle if elig[g]]
        if len(cand) < k:
            return None
        cand.sort(key=lambda g: self.gpu_key(sim, job, g))
        return cand[:k]

    def idle_by_type(self, sim: Simulator) -> dict[int, list[int]]:
        """Idle GPUs grouped by type (for policies that keep a round on one type)."""
        types = sim.inst.gpu_type_index
        out: dict[int, list[int]] = {t: [] for t in range(len(sim.inst.gpu_types))}
        for g in sim.idle_gpus().tolist():
            out[int(types[g])].append(g)
        return out

    def start_on_type(self, sim: Simulator, job: int, gpu_type: int,
                      free: dict[int, list[int]]) -> bool:
        """Start ``job``'s round on its best idle GPUs of one type, if enough are idle;
        those GPUs leave ``free`` (from ``idle_by_type``) and the job leaves the queue."""
        k = int(sim.inst.tasks_per_round[job])
        if job not in self.waiting or len(free[gpu_type]) < k:
            return False
        chosen = sorted(free[gpu_type], key=lambda g: self.gpu_key(sim, job, g))[:k]
        sim.start_gang(job, chosen)
        free[gpu_type] = [g for g in free[gpu_type] if g not in chosen]
        self.waiting.discard(job)
        return True

    def decide(self, sim: Simulator, events: Events) -> None:
        self.waiting.update(events.arrived)
        self.waiting.update(events.opened)
        if not self.waiting:
            return
        idle = set(sim.idle_gpus().tolist())
        for job in sorted(self.waiting, key=lambda j: self.key(sim, j)):
            if not idle:
                break
            gpus = self.choose(sim, job, idle)
            if gpus is None:
                if self.blocking:
                    break
                continue
            sim.start_gang(job, gpus)
            idle.difference_update(gpus)
            self.waiting.discard(job)


class GavelFifoPolicy(GangPolicy):
    """Gavel's FIFO baseline as the Hare paper uses it (Narayanan et al., OSDI '20).

    Jobs in arrival order on the fastest available GPUs, gang; the head job waits
    until enough GPUs are idle (no backfilling). Simplified: decisions at arrivals
    and round ends instead of Gavel's fixed-length rounds.
    """

    name = "gavel-fifo"
    blocking = True


class SRTFPolicy(GangPolicy):
    """Shortest remaining time first (clairvoyant), gang, with backfilling.

    Remaining time = remaining rounds x the round span on the job's K fastest
    eligible GPUs. Preemption happens only at round ends (tasks are non-preemptive).
    """

    name = "srtf"

    def reset(self, sim: Simulator) -> None:
        super().reset(sim)
        self.round_span = gang_round_time(sim)

    def key(self, sim: Simulator, job: int):
        return (sim.remaining_rounds(job) * int(self.round_span[job]),
                int(sim.inst.release[job]), job)
