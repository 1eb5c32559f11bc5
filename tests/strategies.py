"""Hypothesis strategies for instances and a trivial serial scheduler for tests."""

from __future__ import annotations

from hypothesis import strategies as st

from hare_opt.model import GPU, Instance, Job, Schedule

TYPES = ("A", "B", "C")


@st.composite
def instances(draw, *, max_jobs: int = 4, max_gpus: int = 3, max_rounds: int = 3,
              max_k: int = 3, max_tasks: int | None = 10, max_time: int = 9,
              releases: bool = True, sync: bool = True, setup: bool = True) -> Instance:
    """Small random instances covering every feature of the model."""
    n_gpus = draw(st.integers(1, max_gpus))
    gpus = tuple(GPU(f"g{i}", draw(st.sampled_from(TYPES[:n_gpus])))
                 for i in range(n_gpus))
    present = sorted({g.type for g in gpus})
    n_jobs = draw(st.integers(1, max_jobs))
    jobs = []
    budget = max_tasks
    for i in range(n_jobs):
        rounds = draw(st.integers(1, max_rounds))
        k = draw(st.integers(1, max_k))
        if budget is not None:
            if budget < 1:
                break
            rounds = min(rounds, budget)
            k = max(1, min(k, budget // rounds))
            budget -= rounds * k
        types = draw(st.lists(st.sampled_from(present), min_size=1, unique=True))
        task_time = {t: draw(st.integers(1, max_time)) for t in types}
        if sync and draw(st.booleans()):
            sync_time = {t: draw(st.integers(0, 3)) for t in types}
        else:
            sync_time = draw(st.integers(0, 3)) if sync else 0
        jobs.append(Job(f"j{i}", task_time, rounds, k, weight=draw(st.integers(1, 5)),
                        release=draw(st.integers(0, 10)) if releases else 0,
                        sync_time=sync_time,
                        switch_overhead=draw(st.integers(0, 3)) if setup else 0))
    return Instance(gpus, tuple(jobs), "hyp")


def serial_schedule(inst: Instance) -> Schedule:
    """One task at a time on the whole cluster, each with a fresh setup: trivially feasible."""
    rows = []
    t = 0
    for j, job in enumerate(inst.jobs):
        g = next(i for i in range(inst.num_gpus) if inst.eligible[j, i])
        for r in range(job.rounds):
            for k in range(job.tasks_per_round):
                start = max(t, job.release) + job.switch_overhead
                end = start + int(inst.proc[j, g])
                rows.append((job.id, r, k, inst.gpus[g].id, start, end))
                t = end + int(inst.sync[j, g])
    return Schedule.from_tasks(rows)
