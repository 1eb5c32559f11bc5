"""What the CP-SAT model of an instance would hold, known before building it (no OR-Tools):
the size check that refuses an instance at once."""

from __future__ import annotations

from hare_opt.model import Instance
from hare_opt.model.limits import check_size

#: Largest model built: task-GPU literals (about 0.1 ms each to build: ~100 s) and, with
#: setups, arcs of the per-GPU circuits.
MAX_PAIRS = 10**6
MAX_ARCS = 2 * 10**6


def model_size(inst: Instance, circuit: bool = True, pooled: bool = False) -> tuple[int, int]:
    """(task-GPU assignment literals, setup arcs) the model would hold: what building costs;
    ``circuit``: setups modelled as circuits (the exact model); ``pooled``: one literal
    per task and GPU type instead (no setups)."""
    per_job = inst.rounds * inst.tasks_per_round
    if pooled:
        return int((per_job[:, None] * inst.eligible_by_type).sum()), 0
    per_gpu = (per_job[:, None] * inst.eligible).sum(axis=0).astype(float)
    pairs = int(per_gpu.sum())
    setups = bool((inst.overhead > 0).any()) and circuit
    return pairs, int((per_gpu**2).sum()) if setups else 0


def fits(instance: Instance, circuit: bool = True, pooled: bool = False) -> None:
    """Refuse (``CapacityError``) a model larger than ``MAX_PAIRS`` / ``MAX_ARCS``."""
    pairs, arcs = model_size(instance, circuit, pooled)
    check_size("solver 'cpsat'", instance.name, pairs, MAX_PAIRS, "task-GPU pairs")
    check_size("solver 'cpsat'", instance.name, arcs, MAX_ARCS, "setup arcs")
