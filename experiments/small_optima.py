"""Proved optima of small paper-like instances: how far are hare and the bounds from OPT?

    python experiments/small_optima.py --jobs 8 --seeds $(seq 5200 5211)
    python experiments/small_optima.py --check 20      # the model against `solve --solver cpsat`
    python experiments/small_optima.py --files instances/paper/paper-0[0124].json --colgen 0

On 40-job paper-like instances nothing proves the optimum, so a certified gap (hare over the
highest bound) cannot say whether the schedule or the bound is loose. Smaller instances of
the same generator (``hare-opt generate paper --jobs N --seed S``: compressed regime,
testbed, Hare switching) often can be solved, but not by the exact solvers as they stand:
`solve --solver cpsat` and `milp` leave an 8-job, 50-task instance (seed 5208) unproved
after 600 s, `bnb` after 300 s (each started from hare's schedule). What defeats them is
symmetry: one optional interval per task and GPU, and eight identical V100s.

This script's model has none. On instances without switching setups (every overhead 0, as
the Hare switching model gives here) GPUs of one type are interchangeable, so a schedule is
a start and a *type* per task: one optional interval per task and type, one cumulative per
type with capacity its GPU count, a barrier per round (every task of the round ends and
syncs by it, the next round starts after it), tasks of a round ordered by (start, type).
Any schedule gives such a solution with the same objective, and a solution gives a schedule:
at every instant at most m_k intervals of type k overlap, so handing each task, in order of
start, to a GPU of its type that is free (interval graph colouring) never runs out of GPUs.
That schedule goes through the independent checker, which recomputes its objective. CP-SAT
proves seed 5208's optimum in seconds on two workers.

Per seed it prints hare's objective, the optimum (or CP-SAT's best and bound when the time
runs out), `bound --strong`'s bound, the ceiling of the time-indexed relaxation at full
resolution (`lagrangian_bound.py --method colgen --capped`, grid 1: no bound of that kind
proves more), and hare / OPT and OPT / bound. ``--check N``: on N small random instances
without setups the model's proved optimum equals `solve --solver cpsat`'s.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from ortools.sat.python import cp_model

from hare_opt.checker import check
from hare_opt.model import Instance, Schedule
from hare_opt.solvers import solve
from hare_opt.solvers.cpsat.model import barrier_lower_bounds, serial_horizon


def _colgen():
    """``lagrangian_bound.colgen_bound`` (a sibling script, not a package module)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from lagrangian_bound import colgen_bound

    return colgen_bound


def by_type(inst: Instance, upper: int | None, hint: Schedule | None, seconds: float, workers: int):
    """Solve the type-aggregated model; returns (status name, schedule or None, best bound)."""
    if (inst.overhead > 0).any():
        raise ValueError("the type-aggregated model needs every overhead 0 (no setups)")
    alike = [
        np.array_equal(a, b[:, inst.gpu_type_index])
        for a, b in (
            (inst.proc, inst.proc_by_type),
            (inst.sync, inst.sync_by_type),
            (inst.eligible, inst.eligible_by_type),
        )
    ]
    if not all(alike):
        raise ValueError("the type-aggregated model needs the GPUs of a type to be alike")
    p, s, ok, ntypes = (
        inst.proc_by_type,
        inst.sync_by_type,
        inst.eligible_by_type,
        len(inst.type_count),
    )
    m = cp_model.CpModel()
    horizon, earliest, nxt = serial_horizon(inst), barrier_lower_bounds(inst), inst.round_time_next
    start_at = _hint_starts(inst, hint) if hint is not None else {}
    per_type: list[list[cp_model.IntervalVar]] = [[] for _ in range(ntypes)]
    tasks, completion = [], []
    for j in range(inst.num_jobs):
        before = int(inst.release[j])  # the previous barrier's earliest (round 0: release)
        prev = None
        for r in range(int(inst.rounds[j])):
            bar = m.new_int_var(earliest[j][r], horizon, f"B{j}_{r}")
            keys = []
            for i in range(int(inst.tasks_per_round[j])):
                st = m.new_int_var(before, horizon, f"s{j}_{r}_{i}")
                if prev is not None:
                    m.add(st >= prev)
                lits = {}
                for k in np.flatnonzero(ok[j]).tolist():
                    x = lits[k] = m.new_bool_var(f"x{j}_{r}_{i}_{k}")
                    per_type[k].append(
                        m.new_optional_fixed_size_interval_var(
                            st, int(p[j, k]), x, f"I{j}_{r}_{i}_{k}"
                        )
                    )
                    m.add(bar >= st + int(p[j, k] + s[j, k])).only_enforce_if(x)
                m.add_exactly_one(lits.values())
                keys.append(ntypes * st + sum(k * x for k, x in lits.items()))
                tasks.append((j, r, i, st, lits))
                if (j, r, i) in start_at:
                    t0, k0 = start_at[(j, r, i)]
                    m.add_hint(st, t0)
                    for k, x in lits.items():
                        m.add_hint(x, k == k0)
            for a, b in zip(keys, keys[1:]):  # identical tasks: one order of them
                m.add(a <= b)
            if prev is not None:
                m.add(bar >= prev + int(nxt[j]))
            prev, before = bar, earliest[j][r]
        assert prev is not None  # every job has a round
        completion.append(int(inst.weight[j]) * prev)
    for k in range(ntypes):
        if per_type[k]:
            m.add_cumulative(per_type[k], [1] * len(per_type[k]), int(inst.type_count[k]))
    objective = sum(completion)
    if upper is not None:
        m.add(objective <= upper)
    m.minimize(objective)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = seconds
    solver.parameters.num_workers = workers
    status = solver.solve(m)
    name = solver.status_name(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return name, None, solver.best_objective_bound
    rows = [
        (j, r, i, solver.value(st), next(k for k, x in lits.items() if solver.value(x)))
        for j, r, i, st, lits in tasks
    ]
    return name, _colour(inst, rows), solver.best_objective_bound


def _hint_starts(inst: Instance, hint: Schedule) -> dict[tuple[int, int, int], tuple[int, int]]:
    """(job, round, task) -> (start, type) of a schedule, tasks renumbered in the model's
    order within each round."""
    rounds: dict[tuple[int, int], list[tuple[int, int]]] = {}
    types = inst.gpu_type_index[hint.gpu_indices(inst)].tolist()
    for j, r, st, k in zip(
        hint.job_indices(inst).tolist(), hint.round.tolist(), hint.start.tolist(), types
    ):
        rounds.setdefault((j, r), []).append((st, k))
    return {(j, r, i): v for (j, r), lst in rounds.items() for i, v in enumerate(sorted(lst))}


def _colour(inst: Instance, rows: list[tuple[int, int, int, int, int]]) -> Schedule:
    """A schedule from (job, round, task, start, type) rows: each task, by start, to a GPU
    of its type free by then (the cumulative guarantees one)."""
    free = np.zeros(inst.num_gpus, np.int64)
    gtype = inst.gpu_type_index
    out = []
    for j, r, i, st, k in sorted(rows, key=lambda row: (row[3], row[0], row[1], row[2])):
        idle = np.flatnonzero((gtype == k) & (free <= st))
        g = int(idle[0])
        free[g] = st + int(inst.proc_by_type[j, k])
        out.append((j, r, i, g, st))
    job, rnd, task, gpu, start = (np.array(c) for c in zip(*out))
    return Schedule.from_indices(inst, job, rnd, task, gpu, start)


def _checked(inst: Instance, schedule: Schedule) -> int:
    report = check(inst, schedule)
    if not report.feasible or report.objective is None:
        raise AssertionError(f"{inst.name}: the model's schedule fails the checker: {report}")
    return int(report.objective)


def check_instance(seed: int) -> Instance:
    """A small random instance of ``--check`` (and of the tests): no setups (the
    generator's default), syncs, releases, and types with two or more GPUs."""
    from hare_opt.generators import random_instance

    return random_instance(
        seed,
        n_jobs=4,
        n_gpus=5,
        rounds=(1, 3),
        tasks_per_round=(1, 4),
        sync=(0, 3),
        release_spread=10,
    )


def _check(count: int, seconds: float, workers: int) -> None:
    agree = 0
    for seed in range(count):
        inst = check_instance(seed)
        ref = solve(inst, "cpsat", time_limit=seconds)
        name, sched, _ = by_type(inst, None, None, seconds, workers)
        if ref.status.value != "optimal" or name != "OPTIMAL" or sched is None:
            print(f"random {seed}: not both proved ({ref.status.value}, {name})")
            continue
        value = _checked(inst, sched)
        assert value == ref.objective, f"random {seed}: {value} != cpsat's {ref.objective}"
        agree += 1
        print(f"random {seed}: OPT {value} (both)", flush=True)
    print(f"{agree} of {count} proved by both, all equal")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--seeds", nargs="*", type=int, default=list(range(5200, 5212)))
    ap.add_argument("--files", nargs="*", default=[], help="instance files instead of seeds")
    ap.add_argument("--seconds", type=float, default=120.0, help="CP-SAT's limit per instance")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--colgen", type=int, default=300, help="pricing rounds (0: skip)")
    ap.add_argument("--check", type=int, default=0, help="small random instances vs cpsat")
    a = ap.parse_args()
    if a.check:
        _check(a.check, a.seconds, a.workers)
        return
    from hare_opt.cli.commands.bound import strong
    from hare_opt.generators import TESTBED, paper_instance
    from hare_opt.io import load_instance

    colgen = _colgen() if a.colgen else None
    ratios, loose = [], []
    cases = [(f, lambda f=f: load_instance(f)) for f in a.files] or [
        (
            f"seed {seed}",
            lambda seed=seed: paper_instance(
                seed, a.jobs, TESTBED, switching="hare", regime="compressed"
            ),
        )
        for seed in a.seeds
    ]
    for label, make in cases:
        inst = make()
        if (inst.overhead > 0).any():
            print(f"{label}: has switching setups, which the model does not cover; skipped")
            continue
        hare = solve(inst, "hare")
        t0 = time.process_time()
        name, sched, bound = by_type(inst, int(hare.objective), hare.schedule, a.seconds, a.workers)
        t1 = time.process_time()
        best = _checked(inst, sched) if sched is not None else int(hare.objective)
        lp = strong(inst) or 0.0
        ceiling = colgen(inst, 1, a.colgen, hare, True)[1] if colgen and name == "OPTIMAL" else None
        what = f"OPT {best}" if name == "OPTIMAL" else f"best {best} (bound {bound:.0f})"
        line = (
            f"{label}: {inst.num_tasks} tasks, hare {hare.objective:.0f}, {what} "
            f"({t1 - t0:.0f} CPU s), strong LP {lp:.0f}"
        )
        if name == "OPTIMAL":
            ratios.append(hare.objective / best)
            loose.append(best / max(lp, ceiling or 0.0))
            line += f", hare/OPT {ratios[-1]:.4f}, OPT/strong {best / lp:.4f}" if lp else ""
            if ceiling:
                line += f", time-indexed ceiling {ceiling:.0f} (OPT/ceiling {best / ceiling:.4f})"
        print(line, flush=True)
    if ratios:
        print(
            f"{len(ratios)} of {len(cases)} proved: hare/OPT mean {np.mean(ratios):.4f}, "
            f"worst {max(ratios):.4f}; OPT / max(strong LP, ceiling) mean {np.mean(loose):.4f}, "
            f"worst {max(loose):.4f}"
        )


if __name__ == "__main__":
    main()
