"""``hare-opt demo``: what the toolkit does, in one minute.

Solves the paper's Fig. 1 toy and a testbed-like instance with every solver
available, checks every schedule independently, prints a comparison table and
writes Gantt charts.
"""

from __future__ import annotations

import argparse

from hare_opt.examples import fig1_instance
from hare_opt.model import HareOptError, Instance, Result
from hare_opt.model.units import in_seconds
from hare_opt.solvers import available_solvers, solve, solver_names

NAME = "demo"
HELP = "solve the paper's Fig. 1 toy and a testbed-like instance with every solver; plot"

#: Exact solvers are given this many seconds on instances beyond this many tasks.
EXACT_TASK_LIMIT = 200


def add_arguments(p: argparse.ArgumentParser) -> None:
    from hare_opt.cli import args as a

    p.add_argument("--out-dir", type=a.path, default="demo_out",
                   help="where Gantt charts and schedules go (default demo_out)")
    p.add_argument("--time-limit", type=a.seconds, default=20.0, metavar="SECONDS",
                   help="seconds per exact solve (default 20)")


def demo_instances() -> list[tuple[Instance, str]]:
    out = [(fig1_instance(), "the paper's Fig. 1 toy; its schedules score 10.5 / 9 / 8.5 s")]
    try:
        from hare_opt.generators import paper_instance
    except ImportError:
        return out
    inst = paper_instance(seed=1, n_jobs=20)
    out.append((inst, "testbed-like: 8 V100 + 4 T4 + 1 K80 + 2 M60, 20 jobs (seed 1)"))
    return out


def _solvers_for(inst: Instance) -> list[str]:
    names = available_solvers()
    if inst.num_tasks > EXACT_TASK_LIMIT:
        names = [n for n in names if n not in solver_names("exact")]
    return names


def _row(inst: Instance, name: str, res: Result | None, err: str | None) -> str:
    if res is None:
        return f"  {name:11s} {'-':>10s}  {'error':9s} {err}"
    obj = "-" if res.objective is None else f"{res.objective:g}"
    sec = in_seconds(res.objective, inst.time_unit) if res.objective is not None else ""
    lb = "" if res.lower_bound is None else f"  lower bound {res.lower_bound:g}"
    note = ""
    if res.stats.get("relaxation_optimal") is False:
        gap = res.stats.get("relaxation_gap")
        note = ("  (relaxation stopped by its limit" +
                (f", {100 * gap:.2f}% from its proved bound)" if gap is not None else ")"))
    return f"  {name:11s} {obj:>10s}{sec:15s} {res.status:9s} {res.runtime_s:7.2f} s{lb}{note}"


def run(args: argparse.Namespace) -> int:
    from hare_opt.cli import args as a
    from hare_opt.heuristics.rounds import warm_up
    from hare_opt.io import save_result
    from hare_opt.solvers.bnb import warm_up as warm_up_bnb

    out = a.check_folder(args.out_dir, owner="demo")
    out.mkdir(parents=True, exist_ok=True)
    compile_s = warm_up() + warm_up_bnb()
    if compile_s > 3.0:
        print(f"(first run after installing: compiled hare's round engine and the branch and "
              f"bound in {compile_s:.0f} s, once; later runs load them from numba's cache)")
    for inst, note in demo_instances():
        print(f"\n{inst.name}: {inst.num_jobs} jobs, {inst.num_tasks} tasks, "
              f"{inst.num_gpus} GPUs ({', '.join(inst.gpu_types)}), time unit {inst.time_unit}")
        if note:
            print(f"  {note}")
        print(f"  {'solver':11s} {'objective':>10s}{'':15s} {'status':9s} {'runtime':>9s}")
        best: Result | None = None
        # what the time limit is for: the searches (hare-paper's relaxation included)
        searching = {*solver_names("exact"), *solver_names("improver"), "hare-paper"}
        for name in _solvers_for(inst):
            limit = args.time_limit if name in searching else None
            try:
                res = solve(inst, name, time_limit=limit)
            except HareOptError as exc:
                print(_row(inst, name, None, str(exc)))
                continue
            print(_row(inst, name, res, None))
            if res.status.has_schedule and (best is None or res.objective < best.objective):
                best = res
        if best is not None:
            save_result(best, out / f"{inst.name}.{best.solver}.schedule.json")
            try:
                from hare_opt.plot import save_gantt
            except ImportError:
                continue
            png = out / f"{inst.name}.{best.solver}.png"
            from hare_opt.plot.style import schedule_title

            save_gantt(inst, best.schedule, png, title=schedule_title(
                inst.name, best.solver, best.objective, inst.time_unit))
            print(f"  best: {best.solver}; Gantt chart -> {png}")
    print("\nEvery schedule above passed the independent checker (hare-opt check).")
    return 0
