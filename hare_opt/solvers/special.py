"""Special cases with a polynomial or closed-form optimum, solved before any search.

The exact template (``solvers/exact.py``) calls ``recognise`` first for every exact
backend: when the instance is one of the cases below, the optimal schedule is built
directly and returned as ``optimal`` (checked, with the closed-form value as its
bound) in milliseconds, where a generic search may take minutes to prove it.

* ``horn``: one task per job, equal weights, equal releases (sync per GPU type and
  switching overheads allowed): R||sum C_j by an assignment of jobs to (GPU, position
  from the end) slots (Horn 1973; Bruno, Coffman and Sethi 1974).
* ``smith``: a single usable GPU, equal releases, and no sync between rounds (every
  job has one round or no sync): 1||sum w_j C_j by Smith's ratio rule on job blocks.
* ``one_job``: one job: the greedy minimum span for its first round, then for every
  later round (the critical path is met).

Why each is optimal: docs/formulations.md, "Special cases".
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from hare_opt.model import Instance, Schedule

#: Largest assignment matrix (jobs x GPU positions) ``horn`` builds; beyond it the case
#: is left to the backends (a dense Hungarian method is cubic).
MAX_HORN_ENTRIES = 4_000_000
#: Up to this many entries ``assignment`` solves it here; beyond, SciPy's compiled
#: method does (importing SciPy's optimisers costs about 0.3 CPU s, more than
#: ``assignment`` on a matrix this size: experiments/bench_startup.py).
OWN_ASSIGNMENT_ENTRIES = 20_000


@dataclass(frozen=True)
class Special:
    """An optimal schedule of a recognised case and its value by the closed form."""

    kind: str
    schedule: Schedule
    value: int


def _rows(inst: Instance, rows: list[tuple[int, int, int, int, int]]) -> Schedule:
    """Schedule from (job, round, task, gpu, start) rows."""
    job, rnd, task, gpu, start = (np.array(c, dtype=np.int64) for c in zip(*rows))
    return Schedule.from_indices(inst, job, rnd, task, gpu, start)


def assignment(cost: np.ndarray) -> np.ndarray:
    """The column of each row in a least-cost assignment of every row to its own column
    (rows <= columns; ``inf`` forbids an entry): shortest augmenting paths with dual
    potentials, one row at a time, O(rows^2 x columns) in NumPy. Raises ``ValueError``
    when no assignment exists. Exact on integer costs below 2^52 (sums of them are)."""
    n, m = cost.shape
    u, v = np.zeros(n), np.zeros(m)
    col4row, row4col = np.full(n, -1), np.full(m, -1)
    for cur in range(n):
        shortest, path = np.full(m, np.inf), np.full(m, -1)
        seen = np.zeros(m, dtype=bool)
        rows_seen, i, low, sink = [cur], cur, 0.0, -1
        while sink < 0:
            reduced = low + cost[i] - u[i] - v
            better = ~seen & (reduced < shortest)
            path[better], shortest[better] = i, reduced[better]
            j = int(np.argmin(np.where(seen, np.inf, shortest)))
            low = shortest[j]
            if seen[j] or not np.isfinite(low):
                raise ValueError("no feasible assignment")
            seen[j] = True
            if row4col[j] < 0:
                sink = j
            else:
                i = int(row4col[j])
                rows_seen.append(i)
        u[cur] += low  # the potentials keep every reduced cost >= 0, tight on the matching
        for r in rows_seen[1:]:
            u[r] += low - shortest[col4row[r]]
        v[seen] -= low - shortest[seen]
        j = sink
        while True:  # flip the path back to ``cur``
            i = int(path[j])
            row4col[j] = i
            col4row[i], j = j, col4row[i]
            if i == cur:
                break
    return col4row


def horn(inst: Instance) -> Special | None:
    """R||sum C_j: jobs of one task, equal weights and releases, as an assignment."""
    n = inst.num_jobs
    if not (
        (inst.rounds == 1).all()
        and (inst.tasks_per_round == 1).all()
        and (inst.weight == inst.weight[0]).all()
        and (inst.release == inst.release[0]).all()
    ):
        return None
    usable = np.flatnonzero(inst.eligible.any(axis=0))
    if n * len(usable) * n > MAX_HORN_ENTRIES:
        return None
    r, w = int(inst.release[0]), int(inst.weight[0])
    length = inst.proc[:, usable] + inst.overhead[:, None]  # (n, u) GPU time of a job
    pos = np.arange(1, n + 1)  # k-th from the end
    # cost[j, (g, k)] = k * (p_jg + o_j) + s_jg: job j k-th from the end on GPU g.
    cost = length[:, :, None] * pos[None, None, :] + inst.sync[:, usable][:, :, None]
    if int(cost.max()) * n >= 2**52:
        return None  # the assignment runs in floats: keep every sum exact
    cost = cost.reshape(n, -1)
    ok = np.repeat(inst.eligible[:, usable], n, axis=1)
    priced = np.where(ok, cost.astype(float), np.inf)
    if priced.size <= OWN_ASSIGNMENT_ENTRIES:
        rows, cols = np.arange(n), assignment(priced)
    else:
        from scipy.optimize import linear_sum_assignment  # SciPy only here

        rows, cols = linear_sum_assignment(priced)
    value = w * (n * r + int(cost[rows, cols].sum()))  # integers: the closed form
    out = []
    for slot_g in range(len(usable)):
        g = int(usable[slot_g])
        mine = [(int(cols[i]) % n, int(rows[i])) for i in range(n) if cols[i] // n == slot_g]
        t = r
        for _, j in sorted(mine, reverse=True):  # farthest from the end runs first
            start = t + int(inst.overhead[j])
            out.append((j, 0, 0, g, start))
            t = start + int(inst.proc[j, g])
    return Special("horn", _rows(inst, out), value)


def smith(inst: Instance) -> Special | None:
    """One usable GPU, equal releases, no sync inside a job: Smith's rule on job blocks."""
    usable = np.flatnonzero(inst.eligible.any(axis=0))
    if len(usable) != 1 or not (inst.release == inst.release[0]).all():
        return None
    g = int(usable[0])
    sync = inst.sync[:, g]
    if ((inst.rounds > 1) & (sync > 0)).any():
        return None
    block = inst.rounds * inst.tasks_per_round * inst.proc[:, g] + inst.overhead
    order = sorted(
        range(inst.num_jobs),  # block / weight ascending, exact
        key=lambda j: (Fraction(int(block[j]), int(inst.weight[j])), j),
    )
    t, value, out = int(inst.release[0]), 0, []
    for j in order:
        p, k = int(inst.proc[j, g]), int(inst.tasks_per_round[j])
        t += int(inst.overhead[j])
        for c in range(int(inst.rounds[j]) * k):
            out.append((j, c // k, c % k, g, t))
            t += p
        value += int(inst.weight[j]) * (t + int(sync[j]))
    return Special("smith", _rows(inst, out), value)


def _greedy_round(
    proc: np.ndarray, sync: np.ndarray, ok: np.ndarray, count: int, setup: int
) -> tuple[int, list[tuple[int, int]]]:
    """Minimum span of ``count`` identical tasks and the (gpu, offset) of each task: every
    next task goes where it would end and sync earliest (``Instance.min_round_time``)."""
    heap = [(setup + int(proc[g]) + int(sync[g]), g, 0) for g in np.flatnonzero(ok).tolist()]
    heapq.heapify(heap)
    span, placed = 0, []
    for _ in range(count):
        ready, g, n = heapq.heappop(heap)
        span = max(span, ready)
        placed.append((g, setup + n * int(proc[g])))
        heapq.heappush(heap, (ready + int(proc[g]), g, n + 1))
    return span, placed


def one_job(inst: Instance) -> Special | None:
    """One job: every round as short as the idle cluster allows (its critical path)."""
    if inst.num_jobs != 1:
        return None
    k, rounds = int(inst.tasks_per_round[0]), int(inst.rounds[0])
    if k * rounds > 1_000_000:
        return None
    p, s, ok = inst.proc[0], inst.sync[0], inst.eligible[0]
    t, out = int(inst.release[0]), []
    for r in range(rounds):
        span, placed = _greedy_round(p, s, ok, k, int(inst.overhead[0]) if r == 0 else 0)
        out += [(0, r, i, g, t + off) for i, (g, off) in enumerate(placed)]
        t += span
    return Special("one_job", _rows(inst, out), int(inst.weight[0]) * t)


CASES = (one_job, smith, horn)


def recognise(inst: Instance) -> Special | None:
    """The optimum of ``inst`` if it is a special case, else None."""
    for case in CASES:
        found = case(inst)
        if found is not None:
            return found
    return None
