"""The independent checker: is a schedule feasible for an instance, and what does it score?

Written straight from the spec's rules and sharing no code with any solver or
heuristic, so that a bug in a scheduler cannot hide behind the same bug here.
It is vectorised over tasks (numpy and pandas group operations) so that a
schedule of 10^6 tasks checks in seconds.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from hare_opt.model import CheckReport, Instance, Schedule

#: Sentinel for "no task yet" in integer time arrays (below any time a file can hold).
NONE = np.iinfo(np.int64).min

#: Rows above which the two grouping steps use pandas (hash-based, imported only then):
#: below it plain Python and numpy are faster than importing pandas (about 0.5 s of CPU).
PANDAS_ROWS = 20_000

#: Kinds of violation, in the order they are reported.
KINDS = (
    "unknown",
    "duplicate",
    "missing",
    "eligibility",
    "duration",
    "release",
    "barrier",
    "overlap",
    "setup",
)


class _Violations:
    """Collects messages per kind; counts all, keeps at most ``limit`` messages per kind."""

    def __init__(self, limit: int | None):
        self.limit = limit
        self.counts: Counter[str] = Counter()
        self.messages: dict[str, list[str]] = {k: [] for k in KINDS}

    def add(self, kind: str, rows: np.ndarray, fmt, count: int | None = None) -> None:
        """Record ``count`` (default ``len(rows)``) violations; ``rows`` feed the messages."""
        rows = np.asarray(rows)
        count = len(rows) if count is None else count
        if count == 0:
            return
        self.counts[kind] += count
        room = self.room(kind)
        self.messages[kind].extend(f"{kind}: {fmt(int(i))}" for i in rows[:room])

    def room(self, kind: str) -> int | None:
        """How many more messages of ``kind`` are kept (None: all)."""
        return None if self.limit is None else max(0, self.limit - len(self.messages[kind]))

    def as_list(self) -> list[str]:
        out = []
        for k in KINDS:
            out.extend(self.messages[k])
            if len(self.messages[k]) < self.counts[k]:
                out.append(f"{k}: ... and {self.counts[k] - len(self.messages[k])} more")
        return out


def _lookup(ids: np.ndarray, index: dict[str, int]) -> np.ndarray:
    if len(ids) <= PANDAS_ROWS:
        return np.fromiter(
            (index.get(u, -1) if isinstance(u, str) else -1 for u in ids),
            dtype=np.int64,
            count=len(ids),
        )
    import pandas as pd

    codes, uniques = pd.factorize(pd.Series(ids, dtype=object))
    lut = np.array(
        [index.get(u, -1) if isinstance(u, str) else -1 for u in uniques] + [-1], dtype=np.int64
    )
    return lut[codes]  # codes == -1 (None) maps to the trailing -1


def check(instance: Instance, schedule: Schedule, *, max_messages: int | None = 50) -> CheckReport:
    """Check every rule of the spec; ``max_messages`` caps the messages kept per kind."""
    inst, s = instance, schedule
    v = _Violations(max_messages)
    jid = _codes(s, "job", inst.job_ids, {j.id: i for i, j in enumerate(inst.jobs)})
    gid = _codes(s, "gpu", inst.gpu_ids, {g.id: i for i, g in enumerate(inst.gpus)})

    def name(i: int) -> str:
        return f"job {s.job[i]!r} round {s.round[i]} task {s.task[i]}"

    def where(i: int) -> str:
        return f"{name(i)} on gpu {s.gpu[i]!r} [{s.start[i]}, {s.end[i]})"

    # Unknown ids and out-of-range round/task numbers: such rows are left out below.
    v.add("unknown", np.flatnonzero(jid < 0), lambda i: f"{name(i)}: no such job")
    v.add(
        "unknown",
        np.flatnonzero((jid >= 0) & (gid < 0)),
        lambda i: f"{name(i)}: no such gpu {s.gpu[i]!r}",
    )
    known = (jid >= 0) & (gid >= 0)
    R = np.where(known, inst.rounds[np.maximum(jid, 0)], 0)
    K = np.where(known, inst.tasks_per_round[np.maximum(jid, 0)], 0)
    bad_rt = known & ((s.round < 0) | (s.round >= R) | (s.task < 0) | (s.task >= K))
    v.add(
        "unknown",
        np.flatnonzero(bad_rt),
        lambda i: f"{name(i)}: job has {R[i]} rounds of {K[i]} tasks",
    )
    ok = np.flatnonzero(known & ~bad_rt)
    j, g = jid[ok], gid[ok]
    rnd, start, end = s.round[ok], s.start[ok], s.end[ok]

    # Every (job, round, task) exactly once.
    size = inst.rounds * inst.tasks_per_round
    offset = np.concatenate(([0], np.cumsum(size)))
    key = offset[j] + rnd * inst.tasks_per_round[j] + s.task[ok]
    order = np.argsort(key, kind="stable")
    sk = key[order]
    repeat = sk[1:] == sk[:-1]
    v.add("duplicate", ok[order[1:][repeat]], lambda i: f"{name(i)} appears more than once")
    # Sparse over the keys present: an instance may hold far more tasks than memory.
    n_miss = int(offset[-1]) - (len(sk) - int(repeat.sum()))
    if n_miss:
        miss = _first_missing(
            sk[np.concatenate(([True], ~repeat))] if len(sk) else sk,
            int(offset[-1]),
            v.room("missing"),
        )
        mj = np.searchsorted(offset, miss, side="right") - 1
        local = miss - offset[mj]
        mk = inst.tasks_per_round[mj]
        v.add(
            "missing",
            np.arange(len(miss)),
            lambda m: (
                f"job {inst.jobs[mj[m]].id!r} round {local[m] // mk[m]} "
                f"task {local[m] % mk[m]} is not scheduled"
            ),
            count=n_miss,
        )

    # Eligibility and duration.
    elig = inst.eligible[j, g]
    v.add(
        "eligibility",
        ok[~elig],
        lambda i: f"{where(i)}: job cannot run on type {inst.gpus[gid[i]].type!r}",
    )
    p = inst.proc[j, g]
    bad_d = elig & (end - start != p)
    v.add(
        "duration",
        ok[bad_d],
        lambda i: (
            f"{where(i)}: lasts {s.end[i] - s.start[i]}, task time on "
            f"{inst.gpus[gid[i]].type!r} is {inst.proc[jid[i], gid[i]]}"
        ),
    )

    # Release (every round; later rounds are also held by the barrier).
    rel = inst.release[j]
    v.add(
        "release",
        ok[start < rel],
        lambda i: f"{where(i)}: starts before release {inst.release[jid[i]]}",
    )

    # Barriers: round k+1 starts after every task of round k ended and synced.
    # Integers throughout (NONE marks a round with no task): floats would lose
    # units past 2^53 and miss a violation by one.
    roff = np.concatenate(([0], np.cumsum(inst.rounds)))
    rk = roff[j] + rnd
    rounds_seen, at = np.unique(rk, return_inverse=True)
    ready = np.full(len(rounds_seen), NONE, dtype=np.int64)
    np.maximum.at(ready, at, end + inst.sync[j, g])
    prev_ready = np.where(rnd > 0, _ready_of(rounds_seen, ready, rk - 1), NONE)
    bad_b = start < prev_ready
    v.add(
        "barrier",
        ok[bad_b],
        lambda i: (
            f"{where(i)}: starts before round {s.round[i] - 1} is synced at "
            f"{prev_ready[np.searchsorted(ok, i)]}"
        ),
    )

    # One task at a time per GPU, and setups between different jobs.
    by_gpu = np.lexsort((end, start, g))
    gs, js, ss, es = g[by_gpu], j[by_gpu], start[by_gpu], end[by_gpu]
    first = np.ones(len(gs), dtype=bool)
    first[1:] = gs[1:] != gs[:-1]
    run_end = _running_max(es, gs, first)
    prev_end = np.where(first, 0, np.roll(run_end, 1))
    over = ~first & (ss < prev_end)
    prev_row = np.roll(ok[by_gpu], 1)
    v.add(
        "overlap",
        np.flatnonzero(over),
        lambda m: (
            f"{where(int(ok[by_gpu][m]))}: starts before the gpu is free at "
            f"{prev_end[m]} (after {name(int(prev_row[m]))})"
        ),
    )
    switch = first | (js != np.roll(js, 1))
    ready_setup = np.maximum(prev_end, inst.release[js]) + inst.overhead[js]
    bad_setup = switch & ~over & (ss < ready_setup)
    v.add(
        "setup",
        np.flatnonzero(bad_setup),
        lambda m: (
            f"{where(int(ok[by_gpu][m]))}: needs setup {inst.overhead[js[m]]} after "
            f"{'nothing' if first[m] else name(int(prev_row[m]))}, earliest start "
            f"{ready_setup[m]}"
        ),
    )

    # Metrics from the last round's barrier.
    last = _ready_of(rounds_seen, ready, roff[1:] - 1)
    done = last != NONE
    report = CheckReport(
        feasible=not v.counts,
        violations=v.as_list(),
        counts=dict(v.counts),
        completion=np.where(done, last, -np.inf),
        instance=inst,
        schedule=s,
    )
    return _report(report, last, inst)


def _codes(s: Schedule, column: str, ids: np.ndarray, index: dict[str, int]) -> np.ndarray:
    """Index of every row's id in ``ids`` (-1: unknown). A schedule built from indices
    carries them as a hint; it is used only after checking it names the same ids."""
    values = getattr(s, column)
    hint = s.index_hint(column)
    if (
        hint is not None
        and len(hint) == len(values)
        and (
            not len(hint)
            or (hint.min() >= 0 and hint.max() < len(ids) and bool((ids[hint] == values).all()))
        )
    ):
        return hint
    return _lookup(values, index)


def _report(report: CheckReport, last: np.ndarray, inst: Instance) -> CheckReport:
    """Fill in the metrics when every job completed (exact integer arithmetic: float sums
    lose units past 2^53)."""
    if np.all(last != NONE):
        c = last.tolist()
        w = inst.weight.tolist()
        r = inst.release.tolist()
        report.objective = sum(wi * ci for wi, ci in zip(w, c))
        report.weighted_flow_time = sum(wi * (ci - ri) for wi, ci, ri in zip(w, c, r))
        report.avg_jct = _num(sum(ci - ri for ci, ri in zip(c, r)) / len(c))
        report.makespan = max(c)
    return report


def _running_max(values: np.ndarray, groups: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` within each run of equal (sorted) ``groups``."""
    if len(values) > PANDAS_ROWS:
        import pandas as pd

        return pd.Series(values).groupby(groups).cummax().to_numpy()
    out = values.copy()
    starts = np.flatnonzero(first).tolist() + [len(values)]
    for lo, hi in zip(starts, starts[1:]):
        np.maximum.accumulate(out[lo:hi], out=out[lo:hi])
    return out


def _ready_of(seen: np.ndarray, ready: np.ndarray, rounds: np.ndarray) -> np.ndarray:
    """Barrier time of each global round number in ``rounds`` (NONE if it has no task)."""
    if not len(seen):
        return np.full(len(rounds), NONE, dtype=np.int64)
    pos = np.minimum(np.searchsorted(seen, rounds), len(seen) - 1)
    return np.where(seen[pos] == rounds, ready[pos], NONE)


def _first_missing(present: np.ndarray, total: int, limit: int | None) -> np.ndarray:
    """The smallest ``limit`` (None: all) keys in [0, total) absent from sorted ``present``."""
    if limit is None:
        return np.setdiff1d(np.arange(total), present, assume_unique=True)
    bounds = np.concatenate(([-1], present, [total]))
    out: list[np.ndarray] = []
    left = limit
    for i in np.flatnonzero(np.diff(bounds) > 1):
        if left <= 0:
            break
        lo = int(bounds[i]) + 1
        take = min(int(bounds[i + 1]) - lo, left)
        out.append(np.arange(lo, lo + take))
        left -= take
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _num(x: float) -> float | int:
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x
