"""Options of the branch and bound."""

from __future__ import annotations

from dataclasses import dataclass

from hare_opt.model import Instance
from hare_opt.model.limits import CapacityError
from hare_opt.model.options import option
from hare_opt.solvers.exact import ExactOptions

#: Largest search stack (states + child lists) in bytes: beyond, the instance is refused.
MAX_STACK_BYTES = 1 << 30


#: bnb goes first in the portfolio's quick phase on clusters up to this many GPUs with
#: switching overheads: there it proves in milliseconds what the formulations leave open
#: (docs/formulations.md, "Branch and bound"); elsewhere CP-SAT goes first, which spares
#: a process that needs only CP-SAT the numba kernels (about a second of CPU to load).
SUITS_GPUS = 6


def suits(instance: Instance) -> bool:
    """Whether the instance is bnb's domain: few GPUs and some switching overhead."""
    return instance.num_gpus <= SUITS_GPUS and bool((instance.overhead > 0).any())


def fits(instance: Instance) -> None:
    """Refuse (``CapacityError``) an instance whose search stack exceeds ``MAX_STACK_BYTES``
    (known before any work, without numba)."""
    n, m, total = instance.num_jobs, instance.num_gpus, instance.num_tasks
    width = 3 * n + 2 * m + 2  # one node row: ``_search.layout``
    stack = (total + 1) * 8 * (width + 2 * n * m + 3)
    if stack > MAX_STACK_BYTES:
        raise CapacityError(
            f"solver 'bnb': instance {instance.name!r} needs "
            f"{stack / 2**30:.1f} GiB of search stack ({total} tasks x {n} "
            f"jobs x {m} GPUs), more than the {MAX_STACK_BYTES / 2**30:.0f} "
            "GiB it handles"
        )


@dataclass(frozen=True)
class BnbOptions(ExactOptions):
    memo_mb: float = option(
        512.0,
        lo=0.0,
        doc="memory for the dominance memo (MB); when full the search goes on without storing",
    )

    owner = "solver 'bnb'"
