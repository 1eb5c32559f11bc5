"""The offline reproduction cells: Fig. 1, heuristic quality, bound checks, runtime.

One solver (or one part of a check) a cell, in a process of its own group
(``CellSpec.group``), so that a change to one heuristic recomputes its own cells only.
The reference a heuristic is judged against (OPT or a proved lower bound) is a cell of
its own and does not start from any heuristic's schedule: it does not depend on the
code it judges. The items that read these rows live in ``offline_items``.
"""

from __future__ import annotations

import time
from typing import Any

from hare_opt.generators import TESTBED, paper_instance, random_instance
from hare_opt.generators.clusters import cluster_of
from hare_opt.model import Instance
from hare_opt.model.units import unit_seconds
from hare_opt.sweeps.pure import pure_solve

#: The random instances of ours-quality and ours-bounds.
QUALITY_GEN: dict[str, Any] = dict(
    rounds=(1, 3),
    tasks_per_round=(1, 4),
    heterogeneity=3.0,
    release_spread=20,
    sync=(0, 2),
    sync_map=True,
    switch_overhead=(0, 2),
    max_task_time=12,
)
#: The fig1 cell's "solver" that scores the paper's own three schedules.
PAPER = "paper"
#: The quality cell's "solver" that gives the reference (``quality.reference_row``).
REFERENCE = "reference"
#: The bounds cell's part that computes the bounds and factors, no schedule.
BOUNDS = "bounds"


def fig1_cell(*, solver: str = PAPER, time_limit: float = 60.0) -> list[dict[str, Any]]:
    """The paper's schedules (a)-(c) through the checker, or one exact solver's optimum."""
    from hare_opt.checker import check
    from hare_opt.examples import FIG1_SCHEDULES, fig1_instance, fig1_schedule

    inst = fig1_instance()
    sec = unit_seconds(inst.time_unit)
    assert sec is not None  # the toy's unit is 0.5 s
    if solver == PAPER:
        rows = []
        for key, (desc, claimed, _) in FIG1_SCHEDULES.items():
            obj = check(inst, fig1_schedule(key)).objective
            assert obj is not None  # the paper's schedules are complete
            rows.append(
                {
                    "schedule": f"({key}) {desc}",
                    "total_jct_s": obj * sec,
                    "paper_s": claimed,
                    "status": "paper's schedule",
                }
            )
        return rows
    res = pure_solve(inst, solver, time_limit)
    return [
        {
            "schedule": f"optimum ({solver})",
            "total_jct_s": res.objective * sec,
            "paper_s": float("nan"),
            "status": res.status,
        }
    ]


def quality_instance(seed: int, n_jobs: int, n_gpus: int, max_tasks: int | None) -> Instance:
    return random_instance(
        seed,
        n_jobs=n_jobs,
        n_gpus=n_gpus,
        max_tasks=max_tasks,
        name=f"q-{seed}-{n_jobs}-{n_gpus}",
        **QUALITY_GEN,
    )


def quality_cell(
    *,
    seed: int,
    n_jobs: int,
    n_gpus: int,
    max_tasks: int,
    time_limit: float,
    solver: str,
    exact: str = "portfolio",
) -> list[dict[str, Any]]:
    """One heuristic (``solver``, a spec such as ``hare-paper:step3=start``) on one random
    instance, or with ``solver="reference"`` the ``exact`` solver's OPT or best bound."""
    from hare_opt.sweeps.quality import heuristic_row, reference_row

    inst = quality_instance(seed, n_jobs, n_gpus, max_tasks)
    if solver == REFERENCE:
        return [reference_row(inst, exact, time_limit, pure=True)]
    return [heuristic_row(inst, solver, time_limit, pure=True)]


def bounds_cell(
    *,
    seed: int,
    n_jobs: int,
    n_gpus: int,
    exact: bool,
    part: str,
    time_limit: float = 20.0,
    finite_alpha: bool = False,
) -> list[dict[str, Any]]:
    """One part of the bound verification on one random instance: ``bounds`` (the lower
    bound, hare's guarantee and geobatch's factor), or one solver's objective (``hare``,
    ``geobatch``, ``cpsat`` for OPT, a ``hare-paper`` reading). ``finite_alpha``: sync
    maps all zero or all positive, so that alpha(2+alpha) says something."""
    from hare_opt.bounds import approx_factor, guarantee, lower_bound
    from hare_opt.model.options import parse_spec

    inst = random_instance(
        seed,
        n_jobs=n_jobs,
        n_gpus=n_gpus,
        max_tasks=8 if exact else None,
        name=f"b-{seed}",
        finite_alpha=finite_alpha,
        **QUALITY_GEN,
    )
    row: dict[str, Any] = {"part": part, "tasks": inst.num_tasks}
    if part == BOUNDS:
        alpha = float(inst.alpha.max())
        row.update(
            alpha=alpha,
            lower_bound=lower_bound(inst),
            guarantee=guarantee(inst),
            approx_factor=approx_factor(inst),
            paper_claim=alpha * (2 + alpha),
        )
        return [row]
    name, options = parse_spec(part)
    res = pure_solve(inst, name, time_limit, **options)
    row.update(objective=res.objective, status=res.status)
    return [row]


def runtime_cell(*, seed: int, solver: str, n_jobs: int, n_gpus: int) -> list[dict[str, Any]]:
    """Wall time of one solve, checker included; its compiled kernels loaded first and
    timed apart (``load_s``: a process's one-off, which the first cell of a process
    would otherwise carry alone)."""
    from hare_opt.solvers import SOLVERS, solve
    from hare_opt.solvers.kernels import LOADER

    cluster = TESTBED if n_gpus == 15 else cluster_of(n_gpus)
    inst = paper_instance(seed, n_jobs, cluster, name=f"rt-{n_jobs}")
    load_s = LOADER.warm_kernels(SOLVERS.spec(solver).kernels)
    t0 = time.perf_counter()
    res = solve(inst, solver, time_limit=60)
    return [
        {
            "solver": solver,
            "tasks": inst.num_tasks,
            "jobs": n_jobs,
            "gpus": n_gpus,
            "seconds": time.perf_counter() - t0,
            "load_s": load_s,
            "status": res.status,
            "stopped": res.stats.stopped or "",
        }
    ]
