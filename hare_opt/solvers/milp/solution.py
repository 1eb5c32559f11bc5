"""Between model values and schedules: decode a MILP solution, encode a schedule as a start.

Decoding is the constructive half of the exactness proof in
docs/formulations.md, MILP part: sweeping time per GPU type, holds end only when idle
and past their setup, tasks take an idle held GPU (or a free one when their job
has no overhead), so every integer solution becomes a per-GPU schedule with the
same starts. Encoding is the other half: any feasible schedule within the
windows satisfies every row (tests check it on heuristic schedules).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pulp

from hare_opt.model import Schedule
from hare_opt.solvers.base import SolverError
from hare_opt.solvers.milp.formulation import TimeIndexedModel

EPS = 1e-5


@dataclass
class _Hold:
    gpu: int
    ready: int  # setup ends
    busy: int  # current task ends


def _count(v: pulp.LpVariable | None) -> int:
    """Integer value of a count; h is continuous but only its floor is used (see docs)."""
    if v is None or v.varValue is None:
        return 0
    return int(math.floor(v.varValue + EPS))


def decode(m: TimeIndexedModel) -> Schedule:
    """Per-GPU schedule with exactly the starts of the model's x values."""
    inst = m.instance
    starts: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for (j, r, k, t), v in m.x.items():
        starts[k, t].extend([(j, r)] * int(round(v.varValue or 0)))
    rows: list[tuple[int, int, int, int, int]] = []
    task_no: dict[tuple[int, int], int] = defaultdict(int)
    for k in range(len(inst.gpu_types)):
        times = [t for (kk, t) in starts if kk == k] + [t for (_, kk, t) in m.h if kk == k]
        if not times:
            continue
        free = [int(g) for g in np.flatnonzero(inst.gpu_type_index == k)][::-1]
        ends: dict[int, list[int]] = defaultdict(list)
        holds: dict[int, list[_Hold]] = defaultdict(list)
        held = sorted({j for (j, kk, _) in m.h if kk == k})
        for t in range(min(times), max(times) + int(inst.proc_by_type[:, k].max()) + 2):
            free.extend(ends.pop(t, []))
            for j in held:
                gone = (
                    _count(m.h.get((j, k, t - 1)))
                    + _count(m.b.get((j, k, t)))
                    - _count(m.h.get((j, k, t)))
                )
                idle = [hd for hd in holds[j] if hd.ready <= t and hd.busy <= t]
                if gone > len(idle):
                    raise SolverError(
                        f"milp decode: job {j} type {k} t={t}: cannot release "
                        f"{gone} holds, {len(idle)} idle"
                    )
                for hd in idle[:gone]:
                    holds[j].remove(hd)
                    free.append(hd.gpu)
            for j in held:
                for _ in range(_count(m.b.get((j, k, t)))):
                    if not free:
                        raise SolverError(f"milp decode: no free GPU of type {k} at t={t}")
                    holds[j].append(_Hold(free.pop(), t + int(inst.overhead[j]), t))
            for j, r in starts.pop((k, t), []):
                p = int(inst.proc_by_type[j, k])
                if inst.overhead[j] == 0:
                    if not free:
                        raise SolverError(f"milp decode: no free GPU of type {k} at t={t}")
                    g = free.pop()
                    ends[t + p].append(g)
                else:
                    ready = next((h for h in holds[j] if h.ready <= t and h.busy <= t), None)
                    if ready is None:
                        raise SolverError(
                            f"milp decode: job {j} has no ready GPU of type {k} at t={t}"
                        )
                    ready.busy = t + p
                    g = ready.gpu
                rows.append((j, r, task_no[j, r], g, t))
                task_no[j, r] += 1
    if not rows:
        return Schedule.empty()
    cols = [np.array(c, dtype=np.int64) for c in zip(*rows)]
    return Schedule.from_indices(inst, *cols)


def encode(m: TimeIndexedModel, schedule: Schedule) -> dict[str, float]:
    """Values (by variable name) that represent ``schedule``; KeyError if outside the windows."""
    inst = m.instance
    vals: dict[pulp.LpVariable, float] = defaultdict(float)
    js, gs = schedule.job_indices(inst), schedule.gpu_indices(inst)
    ks = inst.gpu_type_index[gs]
    rs, ss, es = schedule.round, schedule.start, schedule.end
    ready = es + inst.sync[js, gs]
    for j, r, k, s in zip(js.tolist(), rs.tolist(), ks.tolist(), ss.tolist()):
        vals[m.x[j, r, k, s]] += 1
    for key, v in m.z.items():
        j, r, t = key
        sel = (js == j) & (rs == r)
        vals[v] = float(ready[sel].max() <= t)
        if key in m.fin:
            vals[m.fin[key]] = float(np.sum(ready[sel] <= t))
        if (j, r + 1, t) in m.beg:
            vals[m.beg[j, r + 1, t]] = float(np.sum(ss[(js == j) & (rs == r + 1)] <= t))
    order = np.lexsort((ss, gs))
    run_start = None
    for pos, i in enumerate(order):
        j = int(js[i])
        if run_start is None:
            run_start = int(ss[i])
        nxt = order[pos + 1] if pos + 1 < len(order) else None
        if nxt is not None and gs[nxt] == gs[i] and js[nxt] == j:
            continue
        if inst.overhead[j] > 0:  # a hold from the setup before the run to its last end
            k, a = int(ks[i]), run_start - int(inst.overhead[j])
            vals[m.b[j, k, a]] += 1
            for t in range(a, int(es[i])):
                vals[m.h[j, k, t]] += 1
        run_start = None
    return {v.name: val for v, val in vals.items()}
