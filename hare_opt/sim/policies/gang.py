"""Gang baselines: the common machinery, Gavel-FIFO and SRTF.

Gang (the spec's strict model): all K tasks of a round start together on K
distinct idle GPUs; the round lasts until its slowest task plus sync. How long a
start holds the GPUs is the simulation's semantics (``hare_opt.sim.semantics``):
under ``lease`` (the default) the job keeps them, syncs included, for its lease
(option ``lease``, seconds) and its rounds run back to back; under ``per-round``
it gives each GPU back when its task ends and the policy decides again at every
round end.

The compiled engine (``hare_opt.sim.engine.compiled``) transcribes these decisions; this
module is the reference it is tested against, schedule for schedule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hare_opt.model.options import option
from hare_opt.sim.engine.state import GangKernel
from hare_opt.sim.events import Events, SimulationError
from hare_opt.sim.policies.gavel import (
    GavelRounds,
    fifo_perf_allocation,
    gavel_rounds,
    round_state,
)
from hare_opt.sim.policy import PolicyOptions
from hare_opt.sim.semantics import LEASE_S, Mode

if TYPE_CHECKING:
    from hare_opt.sim.engine.reference import Simulator


def check_gang_feasible(sim: Simulator, policy: str) -> None:
    """A job wider than its eligible GPUs could never start: say so before simulating."""
    inst = sim.inst
    wide = np.flatnonzero(inst.tasks_per_round > inst.eligible.sum(axis=1))
    if len(wide):
        j = int(wide[0])
        raise SimulationError(
            f"policy {policy!r} (gang) cannot run job {inst.jobs[j].id!r}: it needs "
            f"{int(inst.tasks_per_round[j])} GPUs at once, the cluster has only "
            f"{int(inst.eligible[j].sum())} it can run on"
        )


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
            f"no GPU type it can use has {int(inst.tasks_per_round[j])} GPUs"
        )
    return fits


def gang_round_time(sim: Simulator) -> np.ndarray:
    """(N,) a round's span on the job's K fastest eligible GPUs (straggler plus sync)."""
    inst = sim.inst
    span = np.where(inst.eligible, inst.proc + inst.sync, np.iinfo(np.int64).max)
    k = np.minimum(inst.tasks_per_round, inst.num_gpus) - 1
    return np.sort(span, axis=1)[np.arange(inst.num_jobs), k]


@dataclass(frozen=True)
class GangOptions(PolicyOptions):
    """``lease``: seconds a job holds its GPUs under the ``lease`` semantics (None: until
    it completes); the default is the anchor's, Gavel's 360 s rounds (docs/simulator.md
    gives each policy's choice and its source)."""

    lease: float | None = option(
        LEASE_S,
        lo=1e-3,
        doc="seconds a gang job holds its GPUs under the lease semantics; null: until it completes",
    )


class GangPolicy:
    """Order the waiting jobs by ``key``, give each K idle GPUs chosen by ``gpu_keys``.

    ``blocking``: stop at the first job that does not fit (strict FIFO) instead of
    letting later jobs through (backfilling). How long a start holds its GPUs is the
    simulator's semantics: one round (``per-round``) or a lease (``lease``, the option).
    """

    name = "gang"
    mode: Mode = "gang"
    blocking = False
    Options: ClassVar[type[GangOptions]] = GangOptions

    def __init__(self, **options: Any):
        self.options = self.Options.parse(options, owner=f"policy {self.name!r}")
        self.lease = self.options.lease

    def reset(self, sim: Simulator) -> None:
        check_gang_feasible(sim, self.name)
        self.waiting: set[int] = set()

    def stats(self) -> dict[str, Any]:
        return {}

    def key(self, sim: Simulator, job: int):
        return (int(sim.inst.release[job]), job)

    def gpu_keys(self, sim: Simulator, job: int, gpus: np.ndarray) -> np.ndarray:
        """Preference among ``gpus`` (lower first; ties: lower index): earliest finish,
        i.e. fastest GPUs, and no setup when the GPU already has the job."""
        inst = sim.inst
        return sim.start_times(job)[gpus] + inst.proc[job, gpus] + inst.sync[job, gpus]

    def best(self, sim: Simulator, job: int, cand: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return cand[np.lexsort((cand, keys))[: int(sim.inst.tasks_per_round[job])]]

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

    def start_on_type(
        self, sim: Simulator, job: int, gpu_type: int, free: dict[int, np.ndarray]
    ) -> int:
        """Start ``job`` on its best idle GPUs of one type, if enough are idle; those GPUs
        leave ``free`` (from ``idle_by_type``) and the job leaves the queue. Returns the
        rounds started (0: it did not fit; more than 1 under a lease)."""
        k = int(sim.inst.tasks_per_round[job])
        if job not in self.waiting or len(free[gpu_type]) < k:
            return 0
        cand = free[gpu_type]
        chosen = self.best(sim, job, cand, self.gpu_keys(sim, job, cand))
        before = int(sim.state.round[job])
        sim.start_gang(job, chosen)
        free[gpu_type] = np.setdiff1d(cand, chosen, assume_unique=True)
        self.waiting.discard(job)
        return int(sim.state.round[job]) - before

    def decide(self, sim: Simulator, events: Events) -> None:
        self.waiting.update(events.arrived)
        self.waiting.update(events.opened)
        if not self.waiting:
            return
        idle = sim.idle_gpus()
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


@dataclass(frozen=True)
class GavelOptions(GangOptions):
    """Gavel's round (``lease``, 360 s) and least time between two allocation
    computations (``realloc``; null: Gavel's 1920 s under leases, and for gavel-las
    per-round every change of the active jobs)."""

    realloc: float | None = option(
        None,
        lo=0.0,
        doc="least seconds between two "
        "allocation computations; null: 1920 (Gavel's) under "
        "leases, gavel-las per-round: 0",
    )


class GavelFifoPolicy(GangPolicy):
    """Gavel's FIFO baseline (Narayanan et al., OSDI '20), as the Hare paper uses it.

    Under leases, Gavel's own mechanism (``hare_opt.sim.policies.gavel``, its
    ``fifo_perf``): cluster-wide 360 s rounds; an allocation recomputed at most every
    1920 s puts jobs, in arrival order, each on the fastest GPU type with enough GPUs not
    yet allocated, one type per job; a job whose allocation has not come yet waits, and
    GPUs a finished job leaves stay idle until the next recomputation. ``per-round`` keeps
    the older reading (fastest idle GPUs of any type at every round end, head of line
    blocks), the sensitivity case.
    """

    name = "gavel-fifo"
    blocking = True
    lease_fits = True  # Gavel's round runs the steps that end within it
    Options: ClassVar[type[GangOptions]] = GavelOptions

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.realloc = self.options.realloc  # type: ignore[attr-defined]

    def reset(self, sim: Simulator) -> None:
        super().reset(sim)
        self.rounds: GavelRounds | None = None
        self.fits = single_type_fits(sim, self.name)  # Gavel runs a job on one type
        if sim.leases:
            self.rounds = gavel_rounds(sim, self, fifo_perf_allocation, fifo=True)

    def stats(self) -> dict[str, Any]:
        rounds = getattr(self, "rounds", None)
        return dict(rounds.stats) if rounds is not None else {}

    def decide(self, sim: Simulator, events: Events) -> None:
        if self.rounds is None:
            return super().decide(sim, events)
        gavel_decide(sim, self.rounds)

    def kernel_state(self, sim: Simulator) -> GangKernel | None:
        """``engine/kernel.py`` transcribes this class's rules (a subclass: none)."""
        if type(self) is not GavelFifoPolicy:
            return None
        return GangKernel(
            "gavel-fifo", fits=self.fits, rounds=None if self.rounds is None else self.rounds.decide
        )


def gavel_decide(sim: Simulator, rounds: GavelRounds) -> None:
    """Gavel's round start, when every GPU is idle (the last round ended)."""
    if sim.idle_gpus().size < sim.inst.num_gpus:
        return
    for job, gpus in rounds.decide(round_state(sim)):
        sim.start_gang(job, gpus)


class SRTFPolicy(GangPolicy):
    """Shortest remaining time first (clairvoyant), gang, with backfilling.

    Remaining time = remaining rounds x the round span on the job's K fastest
    eligible GPUs. Preemption happens at lease ends (360 s by default, the anchor's
    round: SRTF preempts a longer job for a shorter one, and a lease is as often as
    a scheduler without fast switching does), or at round ends under ``per-round``.
    """

    name = "srtf"

    def reset(self, sim: Simulator) -> None:
        super().reset(sim)
        self.round_span = gang_round_time(sim)

    def key(self, sim: Simulator, job: int):
        return (
            sim.remaining_rounds(job) * int(self.round_span[job]),
            int(sim.inst.release[job]),
            job,
        )

    def kernel_state(self, sim: Simulator) -> GangKernel | None:
        """``engine/kernel.py`` transcribes this class's rules (a subclass: none)."""
        return GangKernel("srtf", round_span=self.round_span) if type(self) is SRTFPolicy else None
