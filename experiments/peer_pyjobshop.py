"""The peer of the exact benchmark: the same instance as a generic PyJobShop model.

What a researcher would write with PyJobShop (pip install hare-opt[peer]) without
hare_opt: one PyJobShop task per hare_opt task, one mode per eligible GPU (a machine
each), the barrier as end-before-start precedences from every task of a round to
every task of the next, sync as the precedences' delay, switching overheads as
sequence-dependent setup times, and the weighted flow time as objective (it differs
from the weighted completion time by the constant sum_j w_j r_j). Where the model of
the spec needs more than PyJobShop has, the encoding is:

* sync that depends on the GPU type: an extra resource-less "sync" task after every
  task (end at its start), with one mode per GPU of the task, tied to the task's
  mode by a mode dependency; the barrier then runs from the sync tasks. A sync the
  same on every type is the precedences' delay (and, for the last round, a constant
  added to the objective).
* the setup before a GPU's first task (PyJobShop has setups only between two tasks):
  every task of job j gets earliest start r_j + o_j, as in hare_opt's CP-SAT model
  (the first task of j on any GPU follows a setup that starts at r_j or later).

Every schedule read back is checked by ``hare_opt.checker`` (``Result`` built with
``Result.checked``), and the bound is PyJobShop's (CP-SAT's) objective bound plus
the same constant. This is a benchmark, not a solver of the package.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hare_opt.checker import check
from hare_opt.model import Instance, Result, Schedule, Status

if TYPE_CHECKING:  # an optional dependency, imported where a model is built
    from pyjobshop import Model

NAME = "pyjobshop"


@dataclass
class PeerModel:
    model: Model
    compute: list[tuple[int, int, int]]  # (job, round, task) of each compute task, in order
    index: list[int]  # PyJobShop task index of each compute task
    offset: int  # objective = PyJobShop's objective + offset
    counts: dict[str, int]


def _uniform_sync(inst: Instance, j: int) -> int | None:
    values = set(inst.sync[j, inst.eligible[j]].tolist())
    return values.pop() if len(values) == 1 else None


def build(inst: Instance) -> PeerModel:
    """The PyJobShop model of ``inst`` (see the module docstring)."""
    from pyjobshop import Model

    m = Model()
    machines = [m.add_machine(name=g.id) for g in inst.gpus]
    compute: list[tuple[int, int, int]] = []
    index: list[int] = []
    tasks = []  # PyJobShop compute tasks, in compute order
    offset = n_sync = n_prec = 0
    for j, job in enumerate(inst.jobs):
        pj = m.add_job(weight=int(job.weight), release_date=int(job.release), name=job.id)
        offset += int(job.weight) * int(job.release)
        uniform = _uniform_sync(inst, j)
        if uniform is not None:
            offset += int(job.weight) * uniform  # the last round's sync, after every end
        gpus = np.flatnonzero(inst.eligible[j]).tolist()
        earliest = int(job.release) + int(job.switch_overhead)
        ends_before: list[tuple[object, int]] = []  # previous round: (task, delay) pairs
        for r in range(job.rounds):
            ends, mine = [], []
            for k in range(job.tasks_per_round):
                t = m.add_task(pj, earliest_start=earliest, name=f"{job.id}/{r}/{k}")
                index.append(len(m.tasks) - 1)
                modes = [m.add_mode(t, machines[g], int(inst.proc[j, g])) for g in gpus]
                compute.append((j, r, k))
                tasks.append(t)
                mine.append(t)
                if uniform is None:  # per-type sync: a resource-less task right after t
                    s = m.add_task(pj, name=f"{job.id}/{r}/{k}/sync")
                    for g, mode in zip(gpus, modes):
                        m.add_mode_dependency(mode, [m.add_mode(s, [], int(inst.sync[j, g]))])
                    m.add_end_at_start(t, s)
                    ends.append((s, 0))
                    n_sync += 1
                else:
                    ends.append((t, uniform))
            for before, delay in ends_before:  # the barrier between rounds r - 1 and r
                for after in mine:
                    m.add_end_before_start(before, after, delay)
                    n_prec += 1
            ends_before = ends
    n_setup = _setups(m, inst, machines, tasks, compute)
    m.set_objective(weight_total_flow_time=1)
    return PeerModel(
        m,
        compute,
        index,
        offset,
        {
            "tasks": len(compute),
            "sync_tasks": n_sync,
            "precedences": n_prec,
            "setup_pairs": n_setup,
        },
    )


def _setups(m, inst: Instance, machines, tasks, compute) -> int:
    """Setup o_j on GPU g between a task of another job and a task of job j."""
    count = 0
    for g, machine in enumerate(machines):
        on = [i for i, (j, _, _) in enumerate(compute) if inst.eligible[j, g]]
        if not any(inst.overhead[compute[i][0]] for i in on):
            continue
        for a in on:
            for b in on:
                ja, jb = compute[a][0], compute[b][0]
                if ja != jb and inst.overhead[jb]:
                    m.add_setup_time(machine, tasks[a], tasks[b], int(inst.overhead[jb]))
                    count += 1
    return count


def solve_raw(inst: Instance, time_limit: float, *, threads: int = 2, seed: int = 0) -> dict:
    """Build and solve within ``time_limit`` seconds of wall time (building included); the
    answer unchecked: status, PyJobShop's objective and bound (plus the constant offset),
    and the schedule's (job, round, task, gpu, start) rows."""
    from pyjobshop import SolveStatus

    t0 = time.perf_counter()
    built = build(inst)
    left = max(0.1, time_limit - (time.perf_counter() - t0))
    res = built.model.solve(display=False, time_limit=left, num_workers=threads, random_seed=seed)
    out: dict[str, Any] = {
        "stats": {
            **built.counts,
            "build_s": round(time.perf_counter() - t0 - res.runtime, 3),
            "peer_status": str(res.status.value),
        },
        "runtime_s": time.perf_counter() - t0,
        "status": "unknown",
        "rows": [],
    }
    if res.status in (SolveStatus.INFEASIBLE, SolveStatus.UNKNOWN) or not math.isfinite(
        res.objective
    ):
        return out
    for i, (j, r, k) in enumerate(built.compute):
        sched = res.best.tasks[built.index[i]]
        out["rows"].append([j, r, k, int(sched.resources[0]), int(sched.start)])
    out.update(
        status="optimal" if res.status == SolveStatus.OPTIMAL else "feasible",
        objective=int(round(res.objective)) + built.offset,
        lower_bound=math.ceil(res.lower_bound - 1e-6) + built.offset,
    )
    return out


def checked(inst: Instance, raw: dict) -> Result:
    """The peer's answer as a result whose schedule passed hare_opt's checker."""
    stats = raw["stats"]
    if raw["status"] == "unknown":
        return Result(
            NAME,
            Status.UNKNOWN,
            Schedule.empty(),
            runtime_s=raw["runtime_s"],
            instance_name=inst.name,
            stats=stats,
        )
    job, rnd, task, gpu, start = (np.array(c, dtype=np.int64) for c in zip(*raw["rows"]))
    schedule = Schedule.from_indices(inst, job, rnd, task, gpu, start)
    report = check(inst, schedule)
    if not report.feasible:
        raise RuntimeError(f"{NAME}: infeasible schedule for {inst.name}: {report.violations[:3]}")
    stats["peer_objective"] = raw["objective"]
    optimal = raw["status"] == "optimal"
    if optimal and report.objective != raw["objective"]:
        raise RuntimeError(
            f"{NAME}: proved {raw['objective']} but the schedule scores "
            f"{report.objective} on {inst.name}"
        )
    bound = raw["lower_bound"]
    return Result.checked(
        NAME,
        Status.OPTIMAL if optimal else Status.FEASIBLE,
        report,
        lower_bound=min(bound, report.objective) if not optimal else report.objective,
        runtime_s=raw["runtime_s"],
        stats=stats,
    )


def solve_peer(inst: Instance, time_limit: float, *, threads: int = 2, seed: int = 0) -> Result:
    """``solve_raw``, the schedule checked. ``optimal`` only for PyJobShop's OPTIMAL status."""
    return checked(inst, solve_raw(inst, time_limit, threads=threads, seed=seed))


def main() -> None:
    """One solve in this process, as a user of PyJobShop would run it (the end-to-end
    benchmark times the whole process): the answer as JSON on stdout, unchecked (the
    benchmark checks it outside the timed process)."""
    import argparse
    import json

    from hare_opt.io import load_instance

    ap = argparse.ArgumentParser(description=main.__doc__.splitlines()[0] if main.__doc__ else None)
    ap.add_argument("instance")
    ap.add_argument("--time-limit", type=float, default=30.0)
    args = ap.parse_args()
    print(json.dumps(solve_raw(load_instance(args.instance), args.time_limit)))


if __name__ == "__main__":
    main()
