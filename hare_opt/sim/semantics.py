"""How long a gang policy's start holds its GPUs: the simulation's *semantics*.

* ``lease`` (the default): a gang job keeps its GPUs, through every sync, until its
  lease ends or it completes; its rounds run back to back on those GPUs, each at the
  previous barrier with no setup, and the policy decides again only at lease ends,
  arrivals and completions. This is how the schedulers the gang baselines are named
  after allocate (Gavel's 360 s rounds, Blox's 300 s, Pollux's and Sia's 60 s; AlloX
  whole jobs): none puts another job's work into a job's sync gaps.
* ``per-round``: a gang job gives each GPU back when its task ends and the policy
  decides again at every round end (about a tenth of a second in the paper regime),
  so other jobs run in its syncs: Hare's own mechanism, lent to the baselines.

Relaxed policies (``hare``, ``hare-paper``, ``sched-homo``, ``hlas``) interleave batches
of different jobs under both: that is the paper's mechanism, so the semantics does not
change them.

Switching at a lease change: a scheduler without fast task switching pays what a
framework pays to load a job onto a GPU, the Hare paper's Table 3 ``default`` column
(3.3-9.0 s). Generated workloads therefore build the gang policies' instance with
``switching=LEASE_SWITCHING`` under ``lease``; an instance file names no models, so
its own overheads are used.
"""

from __future__ import annotations

from typing import Any, Literal

from hare_opt.model import Instance, OptionError
from hare_opt.model.units import unit_seconds

#: A policy's mode: ``relaxed`` places single tasks, ``gang`` whole rounds at once (and
#: holds leases under ``lease``).
Mode = Literal["relaxed", "gang"]
SEMANTICS = ("lease", "per-round")
DEFAULT_SEMANTICS = "lease"
#: Table 3 column the gang policies' setups come from under leases (generated workloads).
LEASE_SWITCHING = "default"
#: Gavel's round (scheduler.py, ``time_per_iteration=360``): the anchor's lease, seconds,
#: and the lease of a gang policy that declares none.
LEASE_S = 360.0


def check_semantics(value: Any, owner: str = "simulate") -> str:
    if value not in SEMANTICS:
        raise OptionError(
            f"must be one of {', '.join(SEMANTICS)}, got {value!r}", option="semantics", owner=owner
        )
    return str(value)


def holds_leases(mode: Mode, semantics: str) -> bool:
    """Whether a policy of ``mode`` holds GPUs for leases under ``semantics``."""
    return mode == "gang" and check_semantics(semantics) == "lease"


def switching_for(
    mode: Mode, semantics: str, switching: str, lease_switching: str | None = None
) -> str:
    """The Table 3 column a policy of ``mode`` runs a generated workload with: the
    lease column for gang policies under leases, ``switching`` otherwise."""
    if holds_leases(mode, semantics):
        return lease_switching or LEASE_SWITCHING
    return switching


def lease_units(seconds: float | None, instance: Instance, policy: str) -> int | None:
    """A lease of ``seconds`` in the instance's time unit (at least 1); None: whole jobs."""
    if seconds is None:
        return None
    unit = unit_seconds(instance.time_unit)
    if unit is None:
        raise OptionError(
            f"a lease in seconds needs a time unit of seconds, the instance "
            f"{instance.name!r} has {instance.time_unit!r}; give lease=None "
            "(whole jobs) or semantics 'per-round'",
            option="lease",
            owner=f"policy {policy!r}",
        )
    return max(1, round(seconds / unit))


def lease_of(policy: object) -> float | None:
    """The policy's lease in seconds (the anchor's when it declares none): its ``lease``
    attribute, which only gang policies have."""
    return getattr(policy, "lease", LEASE_S)


def lease_rounds(length: int, span: int, fits: bool) -> int:
    """Rounds of ``span`` a lease with ``length`` left after its start holds: those that
    start within it, or (``fits``) those that end within it (may be 0: the caller takes
    at least one)."""
    return length // span if fits else -(-length // span)
