"""``hare-opt demo``: what the toolkit does, in one minute.

Solves the paper's Fig. 1 toy and a testbed-like instance with every solver
available, checks every schedule independently, prints a comparison table and
writes Gantt charts.

Every solver runs within work limits (``OPTIONS``), never the wall clock, so two runs
print the same table on any machine (tests/test_demo.py); ``--time-limit`` adds a
wall-clock cap to the searches, and the table is then no longer reproducible.
"""

from __future__ import annotations

import argparse
from typing import Any

from hare_opt.examples import fig1_instance
from hare_opt.model import HareOptError, Instance, Result
from hare_opt.model.units import in_seconds
from hare_opt.solvers import SOLVERS, available_solvers, solve, solver_names

NAME = "demo"
HELP = "solve the paper's Fig. 1 toy and a testbed-like instance with every solver; plot"

#: Exact solvers run on instances up to this many tasks: beyond, they would not prove an
#: optimum in a demo's time (the portfolio proves random instances up to about 30 tasks
#: within a minute on 2 cores; docs/benchmarks.md).
EXACT_TASK_LIMIT = 200
#: Work limits, per solver: what makes the table the same on every run and machine.
OPTIONS: dict[str, dict[str, Any]] = {
    "cpsat": {"work_limit": 30.0},
    "milp": {"work_limit": 10_000},
    "bnb": {"work_limit": 5_000_000},
    "portfolio": {
        "deterministic": True,
        "backend_options": {
            "cpsat": {"work_limit": 30.0},
            "milp": {"work_limit": 10_000},
            "bnb": {"work_limit": 5_000_000},
        },
    },
    "hare-paper": {"node_limit": 1},
    "lns": {"work_limit": 10, "step_work": 0.2},
}


def options_for(name: str, inst: Instance) -> dict[str, Any]:
    """``OPTIONS[name]``; hare-paper's relaxation stops before its root node on instances
    beyond ``EXACT_TASK_LIMIT`` (on the second instance the root node alone costs 86 CPU s,
    its starting point 2 s; the table shows the gap that leaves)."""
    if name == "hare-paper" and inst.num_tasks > EXACT_TASK_LIMIT:
        return {"node_limit": 0}
    return OPTIONS.get(name, {})


def add_arguments(p: argparse.ArgumentParser) -> None:
    from hare_opt.cli import args as a

    p.add_argument(
        "--out-dir",
        type=a.path,
        default="demo_out",
        help="where Gantt charts and schedules go (default demo_out)",
    )
    p.add_argument(
        "--time-limit",
        type=a.seconds,
        default=None,
        metavar="SECONDS",
        help="also a wall-clock cap in seconds per search (default: none; the "
        "work limits end every search, so the table is reproducible)",
    )


def demo_instances() -> list[tuple[Instance, str]]:
    out = [(fig1_instance(), "the paper's Fig. 1 toy; its schedules score 10.5 / 9 / 8.5 s")]
    try:
        from hare_opt.generators import paper_instance
    except ImportError:
        return out
    inst = paper_instance(seed=1, n_jobs=20)
    out.append((inst, "testbed-like: 8 V100 + 4 T4 + 1 K80 + 2 M60, 20 jobs (seed 1)"))
    return out


def solvers_for(inst: Instance) -> list[str]:
    names = available_solvers()
    if inst.num_tasks > EXACT_TASK_LIMIT:
        names = [n for n in names if n not in solver_names("exact")]
    return names


def demo_runs(
    inst: Instance, time_limit: float | None = None
) -> list[tuple[str, Result | None, str | None]]:
    """(solver, result, error) of every solver the demo runs on ``inst``, in order."""
    searching = {*solver_names("exact"), *solver_names("improver"), "hare-paper"}
    out: list[tuple[str, Result | None, str | None]] = []
    for name in solvers_for(inst):
        limit = time_limit if name in searching else None
        try:
            out.append((name, solve(inst, name, time_limit=limit, **options_for(name, inst)), None))
        except HareOptError as exc:
            out.append((name, None, str(exc)))
    return out


def _bound_note(res: Result) -> str:
    from hare_opt.cli.commands.solve import bound_label

    return bound_label(res)


def _row(inst: Instance, name: str, res: Result | None, err: str | None) -> str:
    if res is None:
        return f"  {name:11s} {'-':>10s}  {'error':9s} {err}"
    obj = "-" if res.objective is None else f"{res.objective:g}"
    sec = in_seconds(res.objective, inst.time_unit) if res.objective is not None else ""
    lb = "" if res.lower_bound is None else f"  {res.lower_bound:g} [{_bound_note(res)}]"
    note = ""
    if res.stats.get("relaxation_optimal") is False:
        gap = res.stats.get("relaxation_gap")
        note = "  (relaxation stopped by its work limit" + (
            f", {100 * gap:.2f}% from its proved bound)" if gap is not None else ")"
        )
    return f"  {name:11s} {obj:>10s}{sec:15s} {res.status:9s} {res.runtime_s:7.2f} s{lb}{note}"


def run(args: argparse.Namespace) -> int:
    from hare_opt.cli import args as a
    from hare_opt.io import save_result
    from hare_opt.solvers.kernels import LOADER
    from hare_opt.util import jit

    out = a.check_folder(args.out_dir, owner="demo")
    out.mkdir(parents=True, exist_ok=True)
    before = jit.compile_seconds()
    # every solver's, before any clock (a cold cache: every group compiles, once)
    LOADER.warm_kernels(tuple(dict.fromkeys(g for spec in SOLVERS for g in spec.kernels)))
    compiled = jit.compile_seconds() - before
    if compiled > 0:
        print(
            f"(first run after installing: compiled every numba kernel in {compiled:.0f} s, "
            "once; later runs and commands load them from numba's cache)"
        )
    for inst, note in demo_instances():
        print(
            f"\n{inst.name}: {inst.num_jobs} jobs, {inst.num_tasks} tasks, "
            f"{inst.num_gpus} GPUs ({', '.join(inst.gpu_types)}), time unit {inst.time_unit}"
        )
        if note:
            print(f"  {note}")
        if inst.num_tasks > EXACT_TASK_LIMIT:
            print(
                f"  exact solvers not run: {inst.num_tasks} tasks is beyond what they prove "
                f"in a demo's time (they run up to {EXACT_TASK_LIMIT} tasks here; "
                "docs/benchmarks.md has the exact frontier)"
            )
        print(
            f"  {'solver':11s} {'objective':>10s}{'':15s} {'status':9s} {'runtime':>9s}"
            "  lower bound [where it comes from]"
        )
        best: Result | None = None
        for name, res, err in demo_runs(inst, args.time_limit):
            print(_row(inst, name, res, err))
            if (
                res is not None
                and res.status.has_schedule
                and (best is None or res.objective < best.objective)
            ):
                best = res
        if best is not None:
            save_result(best, out / f"{inst.name}.{best.solver}.schedule.json")
            try:
                from hare_opt.plot import save_gantt
            except ImportError:
                continue
            png = out / f"{inst.name}.{best.solver}.png"
            from hare_opt.plot.style import schedule_title

            save_gantt(
                inst,
                best.schedule,
                png,
                title=schedule_title(inst.name, best.solver, best.objective, inst.time_unit),
            )
            print(f"  best: {best.solver}; Gantt chart -> {png}")
    print(
        "\nEvery schedule above passed the independent checker (hare-opt check). A lower "
        "bound is what that solver proved: the optimum itself once an exact solver proves "
        "it; hare's and geobatch's are the cheap combinatorial bounds (critical path, "
        "load; `hare-opt bound` lists them); hare-paper's comes from its relaxation "
        "(step 1). Every search ran to a work limit, not a wall clock: rerunning prints "
        "the same table."
    )
    return 0
