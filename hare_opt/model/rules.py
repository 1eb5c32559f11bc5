"""The spec's placement rule for one task, as a plain function of integers.

Every scheduler that places tasks one at a time (the heuristics' ``ClusterState``,
the compiled round engine, the branch and bound) starts a task by this rule, so
the rule has one home; the checker re-derives it independently from the spec.
"""

from __future__ import annotations


def earliest_start(free: int, same_job: bool, release: int, overhead: int, barrier: int) -> int:
    """The spec's rule for a task's earliest start on a GPU free at ``free``.

    A GPU that last ran another job (or nothing) first pays the setup, which
    may overlap the barrier wait but not the release; ``same_job`` says the GPU
    last ran this job. Plain ints, so that pure-Python engines can share it.
    """
    if same_job:
        return max(free, barrier)
    return max(max(free, release) + overhead, barrier)
