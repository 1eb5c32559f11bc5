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
            raise SolverError(f"upper bound {self.upper} is below the critical-path bound "
                             f"{int(np.dot(w, e))}")
        return e + slack // w

    def earliest_start(self, j: int, r: int) -> int:
        """No task starts before release + setup; round r >= 1 waits for round r-1's barrier."""
        inst = self.instance
        if r == 0:
            return int(inst.release[j] + inst.overhead[j])
        return int(inst.release[j] + inst.round_time_first[j]
                   + (r - 1) * inst.round_time_next[j])

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
