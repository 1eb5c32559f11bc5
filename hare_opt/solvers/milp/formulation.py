"""The time-indexed MILP, aggregated per GPU type, with setup "holds" (docs/formulations.md).

Variables (all times integer, inside ``Windows``):

* ``x[j, r, k, t]`` (integer): tasks of round r of job j starting at t on GPUs of
  type k. The K identical tasks of a round and the identical GPUs of a type are
  one count each, so neither symmetry exists in the model.
* ``z[j, r, t]`` (binary): round r of job j is synced by t. ``K z <= fin`` (tasks
  ended + synced by t) and ``beg`` (tasks of round r + 1 started by t) ``<= K z``
  make the barrier exact; for the last round ``C_j = D_j - sum_t z[j, R-1, t]``.
* for jobs with a switching overhead o_j > 0, ``b[j, k, a]`` (integer): GPUs of
  type k that start a setup for j at a, and ``h[j, k, t]``: GPUs of type k
  *held* by j at t (in setup, running j, or idle between two tasks of j). Tasks
  of j running at t plus setups in progress <= h, h grows only by new setups,
  and the held GPUs plus the running tasks of jobs without overhead fit the type.

The counts in the barrier rows are written with the x themselves (dense,
knapsack-like rows over integers, which the backend's cut separators use), or,
when that would exceed ``MAX_DENSE_NNZ`` non-zeros, through continuous
cumulative counts ``fin`` / ``beg`` defined by recursions (O(types) non-zeros
per row, same LP).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pulp

from hare_opt.model import HareOptError, Instance
from hare_opt.solvers.milp.windows import (
    MAX_VARS,
    ModelTooLargeError,
    Windows,
    hold_range,
    size_estimate,
    zrange,
)

Key = tuple[int, ...]

MAX_DENSE_NNZ = 2_000_000


@dataclass
class TimeIndexedModel:
    """The PuLP problem and its variables, keyed as in the module docstring."""

    instance: Instance
    windows: Windows
    dense: bool = False
    prob: pulp.LpProblem = field(init=False)
    x: dict[Key, pulp.LpVariable] = field(default_factory=dict)
    z: dict[Key, pulp.LpVariable] = field(default_factory=dict)
    fin: dict[Key, pulp.LpVariable] = field(default_factory=dict)
    beg: dict[Key, pulp.LpVariable] = field(default_factory=dict)
    b: dict[Key, pulp.LpVariable] = field(default_factory=dict)
    h: dict[Key, pulp.LpVariable] = field(default_factory=dict)
    constant: int = 0  # objective = constant - sum_j w_j sum_t z[j, R-1, t]
    by_round: dict[Key, list] = field(default_factory=lambda: defaultdict(list), repr=False)
    #: called every few thousand variables and rows; it may raise to stop building
    poll: Callable[[], None] | None = field(default=None, repr=False)
    made: int = 0

    def zrange(self, j: int, r: int) -> range:
        """Times at which the barrier of round r matters (``windows.zrange``)."""
        return zrange(self.windows, j, r)

    def hold_range(self, j: int, k: int) -> range:
        """Times at which job j may hold a GPU of type k (``windows.hold_range``)."""
        return hold_range(self.windows, j, k)

    def dense_nonzeros(self) -> int:
        """Non-zeros of the barrier rows when written densely (an upper estimate)."""
        inst, w = self.instance, self.windows
        n_x = {
            (j, r): sum(len(w.starts(j, r, k)) for k in range(len(inst.gpu_types)))
            for j in range(inst.num_jobs)
            for r in range(inst.rounds[j])
        }
        return sum(len(self.zrange(j, r)) * (n_x[j, r] + n_x.get((j, r + 1), 0)) for (j, r) in n_x)

    def size_estimate(self, stop_above: int | None = None) -> int:
        """Columns of the model (``windows.size_estimate``)."""
        return size_estimate(self.windows, stop_above)


def build(
    instance: Instance,
    windows: Windows,
    *,
    max_vars: int = MAX_VARS,
    cuts: bool = True,
    dense: bool = True,
    poll: Callable[[], None] | None = None,
) -> TimeIndexedModel:
    """Build the exact model; raise ``ModelTooLargeError`` above ``max_vars`` columns.

    ``cuts`` adds the redundant late-task rows (``_late_cuts``) that tighten the LP;
    ``dense`` writes barrier counts with x directly (see ``_cumulative``). ``poll`` is
    called every few thousand variables and rows (it may raise to stop building).
    """
    m = TimeIndexedModel(instance, windows, poll=poll)
    size = m.size_estimate(stop_above=max_vars)
    if size > max_vars:
        raise ModelTooLargeError(
            f"instance {instance.name!r}: the time-indexed MILP would have at least {size} "
            f"variables (limit {max_vars}; horizon {int(windows.deadline.max())} time units). "
            f"Use the cpsat solver, or rescale time to a coarser unit"
        )
    m.dense = dense and m.dense_nonzeros() <= MAX_DENSE_NNZ
    m.prob = pulp.LpProblem("hare_milp", pulp.LpMinimize)
    _tasks(m)
    _barriers(m)
    _capacity(m)
    if cuts:
        _late_cuts(m)
    return m


def _tick(m: TimeIndexedModel) -> None:
    m.made += 1
    if m.poll is not None and not m.made % 2048:
        m.poll()


def _var(
    m: TimeIndexedModel,
    name: str,
    lo: float | None = None,
    hi: float | None = None,
    cat: str = pulp.LpContinuous,
) -> pulp.LpVariable:
    _tick(m)
    # PuLP >= 3.3 deprecates free-standing LpVariable; older PuLP lacks add_variable.
    if hasattr(m.prob, "add_variable"):
        return m.prob.add_variable(name, lo, hi, cat)
    return pulp.LpVariable(name, lo, hi, cat)


def _add(
    m: TimeIndexedModel,
    terms: Sequence[tuple[pulp.LpVariable, float]],
    sense: int,
    rhs: float = 0.0,
) -> None:
    _tick(m)
    m.prob.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(terms), sense, rhs=rhs))


def _tasks(m: TimeIndexedModel) -> None:
    """x variables and one count row per round."""
    inst, w = m.instance, m.windows
    for j in range(inst.num_jobs):
        kj = int(inst.tasks_per_round[j])
        for r in range(inst.rounds[j]):
            row = []
            for k in range(len(inst.gpu_types)):
                ub = min(kj, int(inst.type_count[k]))
                for t in w.starts(j, r, k):
                    v = _var(m, f"x_{j}_{r}_{k}_{t}", 0, ub, pulp.LpInteger)
                    m.x[j, r, k, t] = v
                    row.append((v, 1))
            if not row:
                raise HareOptError(
                    f"job {inst.jobs[j].id!r} round {r}: empty time window "
                    f"(upper bound {w.upper} too small?)"
                )
            _add(m, row, pulp.LpConstraintEQ, kj)


def _cumulative(
    m: TimeIndexedModel, name: str, store: dict, j: int, r: int, times: range, shift: list[int]
) -> dict[int, list]:
    """Terms counting tasks of round r with start + shift[k] <= t, for t in ``times``.

    Chained (default): a continuous store[j, r, t] defined by a recursion, O(types)
    non-zeros per row. Dense: the x terms themselves, so the barrier rows are
    knapsack rows over integers that the backend's cut separators can use.
    """
    by_time: dict[int, list] = defaultdict(list)
    for (_, _, k, s), v in _round_vars(m, j, r):
        by_time[max(s + shift[k], times.start)].append((v, 1))
    out: dict[int, list] = {}
    prev = None
    running: list = []
    for t in times:
        if m.dense:
            running = running + by_time.get(t, [])
            out[t] = running
            continue
        v = _var(m, f"{name}_{j}_{r}_{t}", 0, int(m.instance.tasks_per_round[j]))
        store[j, r, t] = v
        terms = [(v, 1)] + ([(prev, -1)] if prev is not None else [])
        _add(m, terms + [(x, -c) for x, c in by_time.get(t, [])], pulp.LpConstraintEQ)
        out[t] = [(v, 1)]
        prev = v
    return out


def _round_vars(m: TimeIndexedModel, j: int, r: int) -> list:
    if not m.by_round:
        for key, v in m.x.items():
            m.by_round[key[:2]].append((key, v))
    return m.by_round.get((j, r), [])


def _barriers(m: TimeIndexedModel) -> None:
    """Exact round barriers and job completions through the binary z."""
    inst = m.instance
    n_types = len(inst.gpu_types)
    for j in range(inst.num_jobs):
        kj = int(inst.tasks_per_round[j])
        done = [int(inst.proc_by_type[j, k] + inst.sync_by_type[j, k]) for k in range(n_types)]
        last = int(inst.rounds[j]) - 1
        for r in range(last + 1):
            times = m.zrange(j, r)
            fin = _cumulative(m, "fin", m.fin, j, r, times, done)
            if r < last:
                beg = _cumulative(m, "beg", m.beg, j, r + 1, times, [0] * n_types)
            prev = None
            for t in times:
                z = _var(m, f"z_{j}_{r}_{t}", cat=pulp.LpBinary)
                m.z[j, r, t] = z
                _add(m, [(z, kj)] + [(v, -c) for v, c in fin[t]], pulp.LpConstraintLE)
                if r < last:
                    _add(m, beg[t] + [(z, -kj)], pulp.LpConstraintLE)
                if prev is not None:
                    _add(m, [(prev, 1), (z, -1)], pulp.LpConstraintLE)
                prev = z
        m.constant += int(inst.weight[j] * m.windows.deadline[j])
    m.prob.setObjective(
        pulp.LpAffineExpression(
            [
                (v, -float(inst.weight[j]))
                for (j, r, t), v in m.z.items()
                if r == inst.rounds[j] - 1
            ],
            constant=m.constant,
        )
    )


def _late_cuts(m: TimeIndexedModel) -> None:
    """A round is not synced by t while a task of it ends + syncs in (t, t + p_k] on type k.

    Tasks of one type starting within p_k time units of each other run at a common
    instant, so at most u = min(K, m_k) of them exist: ``u z[t] + sum x <= u`` over
    those starts is valid. The aggregate row ``K z <= fin`` only gives
    ``z <= 1 - late/K``; these rows give ``z <= 1 - late/u``, stronger when m_k < K.
    """
    inst = m.instance
    for (j, r, t), z in m.z.items():
        kj = int(inst.tasks_per_round[j])
        for k in range(len(inst.gpu_types)):
            u = min(kj, int(inst.type_count[k]))
            if u == kj or not inst.eligible_by_type[j, k]:
                continue
            p, s = int(inst.proc_by_type[j, k]), int(inst.sync_by_type[j, k])
            late = [
                (m.x[j, r, k, a], 1) for a in range(t - p - s + 1, t - s + 1) if (j, r, k, a) in m.x
            ]
            if late:
                _add(m, [(z, u)] + late, pulp.LpConstraintLE, u)


def _capacity(m: TimeIndexedModel) -> None:
    """GPUs per type: running tasks of jobs without overhead plus GPUs held by the others."""
    inst = m.instance
    running: dict[tuple[int, int], dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for (j, _r, k, s), v in m.x.items():
        for t in range(s, s + int(inst.proc_by_type[j, k])):
            running[j, k][t].append((v, 1))
    cap: dict[int, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for (j, k), by_t in running.items():
        o = int(inst.overhead[j])
        if o == 0:
            for t, terms in by_t.items():
                cap[k][t].extend(terms)
            continue
        hr = m.hold_range(j, k)
        last_start = hr.stop - int(inst.proc_by_type[j, k])
        for a in range(hr.start, last_start - o + 1):  # a setup leaves room for a task
            m.b[j, k, a] = _var(m, f"b_{j}_{k}_{a}", 0, int(inst.type_count[k]), pulp.LpInteger)
        prev = None
        for t in hr:
            h = _var(m, f"h_{j}_{k}_{t}", 0, int(inst.type_count[k]))
            m.h[j, k, t] = h
            cap[k][t].append((h, 1))
            setups = [(m.b[j, k, a], 1) for a in range(t - o + 1, t + 1) if (j, k, a) in m.b]
            _add(m, by_t.get(t, []) + setups + [(h, -1)], pulp.LpConstraintLE)
            grow = [(h, 1)] + ([(prev, -1)] if prev is not None else [])
            if (j, k, t) in m.b:
                grow.append((m.b[j, k, t], -1))
            _add(m, grow, pulp.LpConstraintLE)
            prev = h
    for k, by_t in cap.items():
        mk = int(inst.type_count[k])
        for terms in by_t.values():
            if sum(v.upBound for v, _ in terms) > mk:
                _add(m, terms, pulp.LpConstraintLE, mk)
