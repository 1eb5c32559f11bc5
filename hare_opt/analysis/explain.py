"""``explain``: why each job of a schedule completes when it does (``hare-opt explain``).

For every job: the chain that sets its completion (``graph.chain``) and where its time
went along it (``graph.decompose``), its critical path (the completion it would have
under the same orders with every task started as early as they allow), the GPU time
idle while it waited and the GPU time held for it before it could run (``idle``). For
the schedule: the same per GPU type, and the objective of the left-shifted schedule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hare_opt.analysis.graph import Link, Placed, chain, decompose, disjunctive_graph, earliest
from hare_opt.analysis.idle import idle_while_waiting, inflation, reserved_idle
from hare_opt.checker import check
from hare_opt.model import Instance, Schedule, ScheduleError
from hare_opt.model.units import fmt_number, fmt_time

#: Where a chain's time goes, in the order the text lists it.
PARTS = ("release", "own_processing", "own_sync", "other_processing", "other_sync", "setup", "idle")


@dataclass(frozen=True)
class JobStory:
    """One job: its completion, what set it, and what it waited for."""

    job: str
    weight: int
    release: int
    completion: int
    critical_path: int  # the completion under the same orders, left-shifted
    parts: dict[str, int]  # decompose(chain): adds up to ``completion``
    idle_while_waiting: dict[str, int]  # per GPU type
    reserved_idle: int
    inflation: float
    chain: list[Link] = field(repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "weight": self.weight,
            "release": self.release,
            "completion": self.completion,
            "critical_path": self.critical_path,
            "parts": self.parts,
            "idle_while_waiting": self.idle_while_waiting,
            "reserved_idle": self.reserved_idle,
            "inflation": round(self.inflation, 6),
            "chain": [x.to_json() for x in self.chain],
        }


@dataclass(frozen=True)
class Explanation:
    """A schedule explained (``explain``); ``placed`` keeps the indexed schedule."""

    instance: Instance
    solver: str | None
    objective: int
    left_shifted_objective: int
    idle_while_waiting: dict[str, int]  # per GPU type
    reserved_idle: dict[str, int]  # per GPU type
    gpu_time: dict[str, int]  # per GPU type: GPUs x makespan
    jobs: list[JobStory]
    placed: Placed = field(repr=False)

    def to_json(self) -> dict[str, Any]:
        inst = self.instance
        return {
            "instance": inst.name,
            "time_unit": inst.time_unit,
            "solver": self.solver,
            "objective": self.objective,
            "left_shifted_objective": self.left_shifted_objective,
            "idle_while_waiting": self.idle_while_waiting,
            "reserved_idle": self.reserved_idle,
            "gpu_time": self.gpu_time,
            "jobs": [j.to_json() for j in self.jobs],
        }

    def story(self, job_id: str) -> JobStory:
        for j in self.jobs:
            if j.job == job_id:
                return j
        raise KeyError(job_id)

    def worst(self) -> JobStory:
        """The job whose weighted completion is largest."""
        return max(self.jobs, key=lambda j: (j.weight * j.completion, j.job))

    def lines(self, chains: list[str] | None = None, links: int = 12) -> list[str]:
        """The text report: the schedule's idle figures, a line per job, and the last
        ``links`` links of the chains of ``chains`` (None: every job's when there are
        at most 6 jobs, else the worst job's)."""
        inst, unit = self.instance, self.instance.time_unit

        def t(v: float) -> str:
            return fmt_time(v, unit)

        out = [
            f"{inst.name}"
            + (f" / {self.solver}" if self.solver else "")
            + f": {inst.num_jobs} jobs, {len(self.placed.job)} tasks, {inst.num_gpus} GPUs;"
            f" objective {t(self.objective)}; the same orders started as early as they "
            f"allow: {t(self.left_shifted_objective)}",
            "GPU time idle while a task that type may run waited (work a work-conserving "
            "dispatcher could have used), and GPU time held for a task not yet ready "
            "(reserved idle), per type:",
        ]
        for k in inst.gpu_types:
            share = self.idle_while_waiting[k] / max(self.gpu_time[k], 1)
            out.append(
                f"  {k}: idle while waiting {t(self.idle_while_waiting[k])} "
                f"({100 * share:.1f}% of its GPU time to the makespan), reserved idle "
                f"{t(self.reserved_idle[k])}"
            )
        out.append(
            "per job: completion = the chain's start (a release) + own processing + "
            "own syncs + other jobs' processing and syncs (waited behind them on a "
            "GPU) + setups + idle; critical path = completion under the same orders, "
            f"left-shifted (times in {unit})"
        )
        for j in self.jobs:
            p = j.parts
            waited = (
                ", ".join(f"{k} {fmt_number(v)}" for k, v in j.idle_while_waiting.items() if v)
                or "none"
            )
            out.append(
                f"  {j.job} (w {j.weight}, released {fmt_number(j.release)}): C "
                f"{fmt_number(j.completion)} = chain start {fmt_number(p['release'])} "
                f"({_origin(j)}) + own "
                f"{fmt_number(p['own_processing'])} + own sync {fmt_number(p['own_sync'])} + "
                f"behind others {fmt_number(p['other_processing'] + p['other_sync'])} + setup "
                f"{fmt_number(p['setup'])} + idle {fmt_number(p['idle'])}; critical path "
                f"{fmt_number(j.critical_path)}; idle GPUs while it waited: {waited}; reserved "
                f"idle {fmt_number(j.reserved_idle)}; processing x{j.inflation:.2f} its "
                f"fastest type's"
            )
        chosen = (
            chains
            if chains is not None
            else ([j.job for j in self.jobs] if len(self.jobs) <= 6 else [self.worst().job])
        )
        for name in chosen:
            story = self.story(name)
            shown = story.chain[-links:] if links else story.chain
            more = len(story.chain) - len(shown)
            out.append(
                f"chain of {name} ({len(story.chain)} links"
                + (f", the last {len(shown)}" if more else "")
                + "):"
            )
            out.append(
                "  "
                + (f"... {more} earlier links ... -> " if more else "")
                + " -> ".join(_token(x) for x in shown)
                + f" = C {story.completion}"
            )
        return out


def _origin(story: JobStory) -> str:
    first = story.chain[0] if story.chain else None
    return "its release" if first is None or first.job == story.job else f"{first.job}'s release"


def _token(x: Link) -> str:
    if x.kind == "release":
        return f"{x.job} released {x.start}"
    if x.kind == "task":
        via = {"gpu": " after the GPU's previous task", "barrier": "", "release": ""}[x.via or ""]
        return f"[{x.job} r{x.round} t{x.task} on {x.gpu} {x.start}-{x.end}{via}]"
    if x.kind == "sync":
        return f"sync {x.end - x.start}"
    return f"{x.kind} {x.end - x.start}"


def explain(instance: Instance, schedule: Schedule, solver: str | None = None) -> Explanation:
    """Explain a feasible schedule (``ScheduleError`` naming the first violation if not)."""
    rep = check(instance, schedule, max_messages=1)
    if not rep.feasible:
        first = rep.violations[0] if rep.violations else "infeasible"
        raise ScheduleError(
            f"the schedule is not feasible for instance {instance.name!r} "
            f"({first}; `hare-opt check` lists every violation)"
        )
    inst = instance
    p = Placed.of(inst, schedule)
    at = earliest(p, disjunctive_graph(p))
    bar0 = p.n
    last = p.round_base + inst.rounds - 1
    critical = at[bar0 + last]
    per_type, per_job = idle_while_waiting(p)
    held = reserved_idle(p)
    types = list(inst.gpu_types)
    by_type = np.bincount(inst.gpu_type_index[p.gpu], weights=held, minlength=len(types))
    by_job = np.bincount(p.job, weights=held, minlength=inst.num_jobs)
    infl = inflation(p)
    makespan = int(p.barrier[last].max())
    stories = []
    for j in range(inst.num_jobs):
        links = chain(p, j)
        name = str(inst.job_ids[j])
        stories.append(
            JobStory(
                name,
                int(inst.weight[j]),
                int(inst.release[j]),
                p.completion(j),
                int(critical[j]),
                decompose(links, name),
                {types[k]: int(per_job[j, k]) for k in range(len(types))},
                int(by_job[j]),
                float(infl[j]),
                links,
            )
        )
    return Explanation(
        inst,
        solver,
        int((inst.weight * p.barrier[last]).sum()),
        int((inst.weight * critical).sum()),
        {types[k]: int(per_type[k]) for k in range(len(types))},
        {types[k]: int(by_type[k]) for k in range(len(types))},
        {types[k]: int(inst.type_count[k]) * makespan for k in range(len(types))},
        stories,
        p,
    )
