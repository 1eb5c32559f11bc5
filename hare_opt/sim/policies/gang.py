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
    """Order the waiting jobs by ``key``, give each K idle GPUs chosen by ``gpu_keys``.

    ``blocking``: stop at the first job that does not fit (strict FIFO) instead of
    letting later jobs through (backfilling).

    Runs: when, after a decision, no waiting job could start on any GPU that may
    become idle while the job runs (the idle ones, the job's own, those of other
    runs), no earlier job blocks it, and its own GPUs are still its best, the
    decisions at its next round ends would all restart it on the same GPUs: the
    round becomes a run (``sim.extend_run``), re-checked after every decision.
    """

    name = "gang"
    mode = "gang"
    blocking = False

    def reset(self, sim: Simulator) -> None:
        check_gang_feasible(sim, self.name)
        self.waiting: set[int] = set()
        self.reset_runs(sim)

    def reset_runs(self, sim: Simulator) -> None:
        self._pool = np.zeros(sim.inst.num_gpus, dtype=bool)  # what the runs were checked on
        self._checked: set[int] = set()

    def stats(self) -> dict[str, Any]:
        return {}

    def key(self, sim: Simulator, job: int):
        return (int(sim.inst.release[job]), job)

    def gpu_keys(self, sim: Simulator, job: int, gpus: np.ndarray) -> np.ndarray:
        """Preference among ``gpus`` (lower first; ties: lower index): earliest finish,
        i.e. fastest GPUs, and no setup when the GPU already has the job."""
        inst = sim.inst
        return sim.start_times(job)[gpus] + inst.proc[job, gpus] + inst.sync[job, gpus]

    def barrier_keys(self, sim: Simulator, job: int, gpus: np.ndarray) -> np.ndarray:
        """``gpu_keys`` at a later round end of ``job``, for idle ``gpus``, up to a common
        shift: every idle GPU then starts the job at the barrier, plus a setup if it did
        not run the job last."""
        inst = sim.inst
        setup = np.where(sim.state.last[gpus] == job, 0, inst.overhead[job])
        return setup + inst.proc[job, gpus] + inst.sync[job, gpus]

    def best(self, sim: Simulator, job: int, cand: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return cand[np.lexsort((cand, keys))[:int(sim.inst.tasks_per_round[job])]]

    def choose(self, sim: Simulator, job: int, idle: np.ndarray) -> np.ndarray | None:
        cand = idle[sim.inst.eligible[job, idle]]
        if len(cand) < sim.inst.tasks_per_round[job]:
            return None
        return self.best(sim, job, cand, self.gpu_keys(sim, job, cand))

    def idle_by_type(self, sim: Simulator) -> dict[int, np.ndarray]:
        """Idle GPUs grouped by type (for policies that keep a round on one type)."""
        idle = sim.idle_gpus()
        types = sim.inst.gpu_type_index[idle]
        return {t: idle[types == t] for t in range(len(sim.inst.gpu_types))}

    def start_on_type(self, sim: Simulator, job: int, gpu_type: int,
                      free: dict[int, np.ndarray]) -> bool:
        """Start ``job``'s round on its best idle GPUs of one type, if enough are idle;
        those GPUs leave ``free`` (from ``idle_by_type``) and the job leaves the queue."""
        k = int(sim.inst.tasks_per_round[job])
        if job not in self.waiting or len(free[gpu_type]) < k:
            return False
        cand = free[gpu_type]
        chosen = self.best(sim, job, cand, self.gpu_keys(sim, job, cand))
        sim.start_gang(job, chosen)
        free[gpu_type] = np.setdiff1d(cand, chosen, assume_unique=True)
        self.waiting.discard(job)
        return True

    def decide(self, sim: Simulator, events: Events) -> None:
        self.waiting.update(events.arrived)
        self.waiting.update(events.opened)
        if not self.waiting:
            self.update_runs(sim, [])
            return
        idle = sim.idle_gpus()
        started = []
        for job in sorted(self.waiting, key=lambda j: self.key(sim, j)):
            if not len(idle):
                break
            gpus = self.choose(sim, job, idle)
            if gpus is None:
                if self.blocking:
                    break
                continue
            sim.start_gang(job, gpus)
            idle = np.setdiff1d(idle, gpus, assume_unique=True)
            self.waiting.discard(job)
            started.append(job)
        self.update_runs(sim, started)

    # --- runs -----------------------------------------------------------------------
    def update_runs(self, sim: Simulator, started: list[int]) -> None:
        """After a decision: end the runs it may have changed, make the rounds just
        started runs where ``run_valid`` says so.

        The conditions only get easier as the pool of GPUs that may idle shrinks and
        the waiting set shrinks, so runs are re-checked only when either grew.
        """
        if not sim.runs_enabled:
            return
        if sim.runs and ((self._pool_now(sim) & ~self._pool).any()
                         or not self.waiting <= self._checked):
            for job, gpus in [(j, r.gpus) for j, r in sim.runs.items()]:
                if not self.run_valid(sim, job, gpus):
                    sim.end_run(job)
        for job in started:
            gpus = sim.started_gpus(job)
            if self.run_valid(sim, job, gpus):
                order = self.best(sim, job, gpus, self.barrier_keys(sim, job, gpus))
                sim.extend_run(job, int(sim.inst.rounds[job]), order)
        # Every run is valid on this pool and waiting set (and so on any smaller ones).
        self._pool, self._checked = self._pool_now(sim), set(self.waiting)

    def _pool_now(self, sim: Simulator) -> np.ndarray:
        pool = np.zeros(sim.inst.num_gpus, dtype=bool)
        pool[self.may_idle(sim, np.zeros(0, dtype=np.int64))] = True
        return pool

    def may_idle(self, sim: Simulator, gpus: np.ndarray) -> np.ndarray:
        """GPUs that may be idle before the next decision: idle ones, ``gpus``, and those
        of runs and of rounds started in this decision (idle during their syncs)."""
        parts = [sim.idle_gpus(), np.asarray(gpus, dtype=np.int64), *sim.run_gpus()]
        return np.unique(np.concatenate(parts))

    def others_blocked(self, sim: Simulator, job: int, pool: np.ndarray) -> bool:
        """No other waiting job can start on ``pool``, nor (blocking) comes before ``job``."""
        others = np.array([w for w in self.waiting if w != job], dtype=np.int64)
        if not len(others):
            return True
        inst = sim.inst
        if (inst.eligible[others][:, pool].sum(axis=1) >= inst.tasks_per_round[others]).any():
            return False
        return not (self.blocking and
                    any(self.key(sim, int(w)) < self.key(sim, job) for w in others))

    def run_valid(self, sim: Simulator, job: int, gpus: np.ndarray) -> bool:
        """Whether the decisions at ``job``'s next round ends restart it on ``gpus`` and
        start nothing else, as long as no other event happens."""
        pool = self.may_idle(sim, gpus)
        if not self.others_blocked(sim, job, pool):
            return False
        cand = pool[sim.inst.eligible[job, pool]]
        chosen = self.best(sim, job, cand, self.barrier_keys(sim, job, cand))
        return set(chosen.tolist()) == set(np.asarray(gpus).tolist())


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
