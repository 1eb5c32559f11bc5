"""Time windows of the time-indexed model, from an upper bound on the optimum.

Every schedule whose objective is at most ``upper`` has
``C_j <= D_j = (upper - sum_{i != j} w_i E_i) // w_j`` where ``E_i`` is a
proved earliest completion of job i, so restricting every job to end by its
own ``D_j`` keeps all optimal schedules (the optimum is <= upper) while the
model shrinks far below a common horizon. Start windows follow from the
per-job critical path (``Instance.round_time_first`` / ``round_time_next``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hare_opt.model import Instance, SolverError
from hare_opt.model.limits import CapacityError, fmt_count

#: Default cap on model columns; a larger time-indexed model would take minutes
#: to build in PuLP and gigabytes to solve.
MAX_VARS = 400_000


class ModelTooLargeError(CapacityError, ValueError):
    """The time-indexed model would be too large for this instance's time scale."""


@dataclass(frozen=True)
class Windows:
    """Earliest and latest integer start of each (job, round, GPU type)."""

    instance: Instance
    upper: int  # objective of a known feasible schedule

    @cached_property
    def earliest_completion(self) -> np.ndarray:
        """(N,) E_j: release + first round with setup + later rounds without."""
        inst = self.instance
        return inst.release + inst.round_time_first + (inst.rounds - 1) * inst.round_time_next

    @cached_property
    def deadline(self) -> np.ndarray:
        """(N,) D_j, the latest completion of job j in any schedule scoring <= ``upper``."""
        inst = self.instance
        w, e = inst.weight, self.earliest_completion
        slack = self.upper - int(np.dot(w, e))
        if slack < 0:
            raise SolverError(
                f"upper bound {self.upper} is below the critical-path bound {int(np.dot(w, e))}"
            )
        return e + slack // w

    def earliest_start(self, j: int, r: int) -> int:
        """No task starts before release + setup; round r >= 1 waits for round r-1's barrier."""
        inst = self.instance
        if r == 0:
            return int(inst.release[j] + inst.overhead[j])
        return int(inst.release[j] + inst.round_time_first[j] + (r - 1) * inst.round_time_next[j])

    def latest_start(self, j: int, r: int, k: int) -> int:
        """Latest start on type k such that the remaining rounds still fit before D_j."""
        inst = self.instance
        tail = (int(inst.rounds[j]) - 1 - r) * int(inst.round_time_next[j])
        return int(self.deadline[j] - tail - inst.proc_by_type[j, k] - inst.sync_by_type[j, k])

    def starts(self, j: int, r: int, k: int) -> range:
        """Integer starts of round r of job j on type k (empty when ineligible)."""
        if not self.instance.eligible_by_type[j, k]:
            return range(0)
        return range(self.earliest_start(j, r), self.latest_start(j, r, k) + 1)


def zrange(w: Windows, j: int, r: int) -> range:
    """Times at which the barrier of round r matters (last round: [E_j, D_j))."""
    inst = w.instance
    if r == inst.rounds[j] - 1:
        return range(int(w.earliest_completion[j]), int(w.deadline[j]))
    nxt = [w.starts(j, r + 1, k) for k in range(len(inst.gpu_types))]
    hi = max((s.stop for s in nxt if len(s)), default=w.earliest_start(j, r + 1))
    return range(w.earliest_start(j, r + 1), hi)


def hold_range(w: Windows, j: int, k: int) -> range:
    """Times at which job j may hold a GPU of type k: [release, last task end)."""
    inst = w.instance
    last = max((w.starts(j, r, k).stop for r in range(inst.rounds[j])), default=0)
    return range(int(inst.release[j]), last - 1 + int(inst.proc_by_type[j, k]))


def size_estimate(w: Windows, stop_above: int | None = None) -> int:
    """Columns of the model of these windows; with ``stop_above``, counting stops once it
    is exceeded (a large model is refused without counting all of it)."""
    inst = w.instance
    n = 0
    for j in range(inst.num_jobs):
        if stop_above is not None and n > stop_above:
            break
        for r in range(inst.rounds[j]):
            n += sum(len(w.starts(j, r, k)) for k in range(len(inst.gpu_types)))
            n += 3 * len(zrange(w, j, r))
        if inst.overhead[j] > 0:
            n += sum(
                2 * len(hold_range(w, j, k))
                for k in range(len(inst.gpu_types))
                if inst.eligible_by_type[j, k]
            )
    return n


def fits(instance: Instance, max_vars: int = MAX_VARS) -> None:
    """Refuse at once (``ModelTooLargeError``) when even the smallest windows (those of an
    upper bound equal to the cheap lower bound, which every real upper bound exceeds)
    need more than ``max_vars`` columns; counted without building (and without PuLP),
    and counting stops once over."""
    from hare_opt.bounds import lower_bound

    # every (job, round, GPU type) has at least one start variable
    least = int(instance.rounds.sum()) * len(instance.gpu_types)
    if least <= max_vars:
        least = size_estimate(
            Windows(instance, int(lower_bound(instance, lp=False))), stop_above=max_vars
        )
    if least > max_vars:
        raise ModelTooLargeError(
            f"solver 'milp': instance {instance.name!r} needs at least {fmt_count(least)} "
            f"variables, more than the {fmt_count(max_vars)} it handles (option max_vars)"
        )
