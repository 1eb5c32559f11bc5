"""A schedule's disjunctive graph: what each task waited for, and the chain that sets
each job's completion.

Fix a schedule's assignment and its order on every GPU. A task then starts no earlier
than three bounds (docs/spec.md): its job's release (plus a setup when the GPU switches
job), the end of the previous task on its GPU (plus that setup), and its round's
barrier (the latest end + sync of the round before). These bounds are the arcs of the
schedule's disjunctive graph (built with networkx), whose longest paths give the
earliest start every task could have under the same orders (``left_shift``). Following,
from a job's completion backwards, the bound each task actually met gives the chain of
tasks, syncs, setups, releases and GPU orders that sets the completion; where a task
started later than all its bounds the chain says so (an ``idle`` link).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import networkx as nx
import numpy as np

from hare_opt.model import Instance, Schedule

#: How a task's start was bound, in the order ties are attributed.
VIA = ("barrier", "gpu", "release")
NONE = np.iinfo(np.int64).min // 4


@dataclass(frozen=True, eq=False)
class Placed:
    """A feasible schedule as index arrays, with each task's bounds (one row per task)."""

    instance: Instance
    schedule: Schedule
    job: np.ndarray  # job index
    gpu: np.ndarray  # GPU index
    round: np.ndarray
    start: np.ndarray
    end: np.ndarray
    setup: np.ndarray  # the setup before the task (0 when its GPU ran the job last)
    prev: np.ndarray  # the task before it on its GPU, -1 for the first
    key: np.ndarray  # its (job, round) number: round_base[job] + round
    round_base: np.ndarray  # (N,) key of each job's round 0
    barrier: np.ndarray  # (sum R,) latest end + sync of each (job, round)
    critical: np.ndarray  # (sum R,) the task that sets that barrier (first in ties)

    @classmethod
    def of(cls, instance: Instance, schedule: Schedule) -> Placed:
        """Index a schedule the checker accepted (every task once, every rule kept)."""
        inst = instance
        j, g = schedule.job_indices(inst), schedule.gpu_indices(inst)
        rnd, start, end = (
            np.asarray(x, dtype=np.int64) for x in (schedule.round, schedule.start, schedule.end)
        )
        by_gpu = np.lexsort((start, g))
        prev = np.full(len(j), -1, dtype=np.int64)
        same = g[by_gpu][1:] == g[by_gpu][:-1]
        prev[by_gpu[1:][same]] = by_gpu[:-1][same]
        switch = (prev < 0) | (j[np.maximum(prev, 0)] != j)
        setup = np.where(switch, inst.overhead[j], 0)
        base = np.concatenate([[0], np.cumsum(inst.rounds)[:-1]]).astype(np.int64)
        key = base[j] + rnd
        synced = end + inst.sync[j, g]
        barrier = np.full(int(inst.rounds.sum()), NONE, dtype=np.int64)
        np.maximum.at(barrier, key, synced)
        crit = np.full(len(barrier), -1, dtype=np.int64)
        order = np.lexsort((np.arange(len(j)), -synced, key))  # per key: latest first
        head = np.r_[True, key[order][1:] != key[order][:-1]]
        crit[key[order][head]] = order[head]
        return cls(inst, schedule, j, g, rnd, start, end, setup, prev, key, base, barrier, crit)

    @property
    def n(self) -> int:
        return len(self.job)

    @cached_property
    def ready(self) -> np.ndarray:
        """When each task could first start by its job alone: its release for round 0,
        else its round's barrier."""
        rel = self.instance.release[self.job]
        return np.where(self.round > 0, self.barrier[np.maximum(self.key - 1, 0)], rel)

    @cached_property
    def bounds(self) -> np.ndarray:
        """(3, n) the start each bound allows, in ``VIA``'s order (NONE where it is absent)."""
        bar = np.where(self.round > 0, self.barrier[np.maximum(self.key - 1, 0)], NONE)
        gpu = np.where(self.prev >= 0, self.end[np.maximum(self.prev, 0)] + self.setup, NONE)
        rel = self.instance.release[self.job] + self.setup
        return np.vstack([bar, gpu, rel])

    @cached_property
    def via(self) -> np.ndarray:
        """Index into ``VIA`` of the bound each task met (ties: first in ``VIA``)."""
        return np.argmax(self.bounds, axis=0)

    @cached_property
    def slack(self) -> np.ndarray:
        """How much later than its tightest bound each task started (0: it met one)."""
        return self.start - self.bounds.max(axis=0)

    def completion(self, job: int) -> int:
        return int(self.barrier[self.round_base[job] + self.instance.rounds[job] - 1])


def disjunctive_graph(p: Placed) -> nx.DiGraph:
    """Nodes: tasks 0..n-1, then one per (job, round) barrier, then one per job's release;
    an arc u -> v with weight w says v starts (or, for a barrier, is reached) no earlier
    than u's time + w. Round barriers stand in for the K x K arcs between rounds."""
    inst, n = p.instance, p.n
    bar0, rel0 = n, n + len(p.barrier)
    g = nx.DiGraph()
    g.add_nodes_from(range(rel0 + inst.num_jobs))
    sync = inst.sync[p.job, p.gpu]
    t = np.arange(n)
    g.add_weighted_edges_from(
        zip(t.tolist(), (bar0 + p.key).tolist(), (p.end - p.start + sync).tolist())
    )
    later = t[p.round > 0]
    g.add_weighted_edges_from(
        zip((bar0 + p.key[later] - 1).tolist(), later.tolist(), [0] * len(later))
    )
    has = t[p.prev >= 0]
    a = p.prev[has]
    g.add_weighted_edges_from(
        zip(a.tolist(), has.tolist(), (p.end[a] - p.start[a] + p.setup[has]).tolist())
    )
    bound = t[(p.round == 0) | (p.setup > 0)]  # later rounds: only a setup can bind
    g.add_weighted_edges_from(
        zip((rel0 + p.job[bound]).tolist(), bound.tolist(), p.setup[bound].tolist())
    )
    return g


def earliest(p: Placed, graph: nx.DiGraph | None = None) -> np.ndarray:
    """Each node's earliest time under the schedule's orders: longest paths from the
    releases (which sit at their release times) in the disjunctive graph."""
    g = disjunctive_graph(p) if graph is None else graph
    rel0 = p.n + len(p.barrier)
    at = np.full(g.number_of_nodes(), NONE, dtype=np.int64)
    at[rel0:] = p.instance.release
    for v in nx.topological_sort(g):
        for u, w in g.pred[v].items():
            t = at[u] + w["weight"]
            if t > at[v]:
                at[v] = t
    return at


def left_shift(instance: Instance, schedule: Schedule) -> Schedule:
    """The schedule with every task started as early as its assignment and GPU orders
    allow (feasible by construction; no job completes later)."""
    p = Placed.of(instance, schedule)
    at = earliest(p)
    start = at[: p.n]
    return Schedule(
        schedule.job, schedule.round, schedule.task, schedule.gpu, start, start + (p.end - p.start)
    )


@dataclass(frozen=True)
class Link:
    """One interval of a chain, in time order: ``release`` (a point: the job arrives),
    ``setup``, ``idle`` (a task started later than all its bounds), ``task`` (``via``: the
    bound it met, the previous link), ``sync`` (the task's update; its end is the round's
    barrier)."""

    kind: str
    job: str
    start: int
    end: int
    round: int | None = None
    task: int | None = None
    gpu: str | None = None
    via: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def chain(p: Placed, job: int) -> list[Link]:
    """The chain that sets ``job``'s completion, in time order from its origin (a
    release) to the completion, each task linked to the bound it met; consecutive links
    meet, so their lengths add up to the completion less the origin's release."""
    inst, s = p.instance, p.schedule

    def sync(b: int) -> Link:
        jb, end = int(p.job[b]), int(p.end[b])
        return Link(
            "sync",
            str(inst.job_ids[jb]),
            end,
            end + int(inst.sync[jb, p.gpu[b]]),
            int(p.round[b]),
            gpu=str(s.gpu[b]),
        )

    b = int(p.critical[p.round_base[job] + inst.rounds[job] - 1])
    out = [sync(b)]
    while True:
        jb, via = int(p.job[b]), VIA[int(p.via[b])]
        name, gpu = str(inst.job_ids[jb]), str(s.gpu[b])
        out.append(
            Link(
                "task",
                name,
                int(p.start[b]),
                int(p.end[b]),
                int(p.round[b]),
                int(s.task[b]),
                gpu,
                via,
            )
        )
        bound = int(p.bounds[p.via[b], b])
        out.append(Link("idle", name, bound, int(p.start[b]), gpu=gpu))
        if via != "barrier":
            out.append(Link("setup", name, bound - int(p.setup[b]), bound, gpu=gpu))
        if via == "release":
            out.append(Link("release", name, int(inst.release[jb]), int(inst.release[jb])))
            break
        if via == "gpu":
            b = int(p.prev[b])
        else:
            b = int(p.critical[p.key[b] - 1])
            out.append(sync(b))
    out.reverse()
    return [x for x in out if x.kind == "release" or x.end > x.start]


def decompose(links: list[Link], job: str) -> dict[str, int]:
    """Where a completion's time went along its chain: the origin's release, then the
    job's own processing and syncs, other jobs' (it waited behind them on a GPU), setups
    and idle time. The parts add up to the completion exactly."""
    out = {
        "release": links[0].start if links else 0,
        "own_processing": 0,
        "own_sync": 0,
        "other_processing": 0,
        "other_sync": 0,
        "setup": 0,
        "idle": 0,
    }
    for x in links:
        d = x.end - x.start
        if x.kind in ("task", "sync"):
            out[
                ("own_" if x.job == job else "other_")
                + ("processing" if x.kind == "task" else "sync")
            ] += d
        elif x.kind in ("setup", "idle"):
            out[x.kind] += d
    return out
