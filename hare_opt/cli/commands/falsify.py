"""``hare-opt falsify --solver NAME [--against opt|bound] [--budget S] [--seed S] ...``."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from hare_opt.cli import args as a
from hare_opt.falsify import FAMILIES, Space, falsify, shrink
from hare_opt.io import atomic_write_text, save_instance, save_result
from hare_opt.model import OptionError
from hare_opt.solvers import SOLVERS, solver_names
from hare_opt.util import interrupt

NAME = "falsify"
HELP = "search for instances on which a heuristic is worst against OPT or a lower bound"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--solver", required=True, help="heuristic to attack, e.g. hare-paper, hare")
    p.add_argument(
        "--against",
        choices=("opt", "bound"),
        default="opt",
        help="reference: proved optimum (small instances) or lower bound",
    )
    p.add_argument(
        "--budget",
        type=a.seconds,
        default=None,
        metavar="SECONDS",
        help="wall-clock budget (default 60 s; none with --iterations)",
    )
    p.add_argument(
        "--iterations",
        type=a.integer(lo=1, hi=10**9),
        default=None,
        metavar="N",
        help="stop after N candidates: a work budget, so the run is the same on "
        "any machine (unless a --budget is also given and reached)",
    )
    p.add_argument("--seed", type=a.seed, default=0)
    p.add_argument(
        "--max-tasks",
        type=a.integer(lo=1, hi=1000),
        default=8,
        metavar="N",
        help="most tasks per instance (default 8)",
    )
    p.add_argument(
        "--family",
        choices=FAMILIES,
        default="random",
        help="random (default): instances as the options below shape them; smith: "
        "1||sum w_j C_j (one GPU, one task per job, no sync, releases or "
        "setups) with weights up to --max-weight, where Algorithm 1's "
        "relaxation orders by processing time alone (docs/theory.md (a))",
    )
    p.add_argument(
        "--max-weight",
        type=a.integer(lo=1, hi=10**7),
        default=None,
        metavar="W",
        help="with --family smith: the largest weight (default 1000)",
    )
    p.add_argument(
        "--max-gpus",
        type=a.integer(lo=1, hi=1000),
        default=None,
        metavar="N",
        help="most GPUs (default 3)",
    )
    p.add_argument(
        "--min-gpus",
        type=a.integer(lo=1, hi=1000),
        default=None,
        metavar="N",
        help="fewest GPUs (default 1)",
    )
    p.add_argument(
        "--max-time",
        type=a.integer(lo=1, hi=10**9),
        default=20,
        metavar="T",
        help="largest task time",
    )
    p.add_argument(
        "--model",
        choices=("paper", "full"),
        default=None,
        help="paper (default): no setups, sync < task time (the theorem's "
        "setting); full: everything the spec allows",
    )
    p.add_argument(
        "--eligibility",
        choices=("any", "full"),
        default=None,
        help="full: every job may run on every GPU (default any: random subsets)",
    )
    p.add_argument(
        "--types",
        type=a.integer(lo=1, hi=3),
        default=None,
        metavar="N",
        help="GPU types to draw from, 1-3 (1: identical GPUs; default 3)",
    )
    p.add_argument(
        "--allow-infinite-alpha",
        action="store_true",
        help="also visit jobs with sync 0 on one type and > 0 on another",
    )
    p.add_argument(
        "--score",
        choices=("relative", "ratio"),
        default="relative",
        help="what the search climbs: ratio / claimed guarantee (default; "
        "reported as such), or the ratio itself (reported as the worst ratio)",
    )
    p.add_argument(
        "--exact", default=None, help="exact solver giving OPT with --against opt (default cpsat)"
    )
    p.add_argument(
        "--exact-time-limit",
        type=a.seconds,
        default=None,
        metavar="SECONDS",
        help="with --against opt: seconds per exact solve (default 10)",
    )
    p.add_argument(
        "--solver-time-limit",
        type=a.seconds,
        default=30.0,
        metavar="SECONDS",
        help="time limit passed to the heuristic (hare-paper's relaxation)",
    )
    p.add_argument(
        "--out",
        type=a.path,
        metavar="FILE",
        default=None,
        help="write the best-scoring instance here (its schedule to "
        "FILE.schedule.json) and, when another instance had a higher ratio "
        "(the relative score), that one to FILE.worst-ratio.json",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--no-shrink",
        action="store_true",
        help="keep a violating instance as found instead of simplifying it",
    )


#: Options that shape random instances only: refused with ``--family smith``.
RANDOM_ONLY = ("max_gpus", "min_gpus", "model", "eligibility", "types", "allow_infinite_alpha")


def _outputs(out: str) -> tuple[Path, ...]:
    """The instance file and those named after it: its schedule, solver errors, and the
    instance of the highest ratio with its schedule."""
    base = Path(out)
    return (
        base,
        base.with_suffix(".schedule.json"),
        base.with_suffix(".errors.json"),
        base.with_suffix(".worst-ratio.json"),
        base.with_suffix(".worst-ratio.schedule.json"),
    )


def _check(args: argparse.Namespace) -> tuple[str, float]:
    """Every option checked before the search: the exact solver and the outputs."""
    SOLVERS.spec(args.solver)  # unknown names: one-line error before any search
    if args.family == "smith":
        for name in RANDOM_ONLY:
            if getattr(args, name) not in (None, False):
                raise OptionError(
                    "does not apply with --family smith (one GPU, one task per "
                    "job, no sync, releases or setups)",
                    option="--" + name.replace("_", "-"),
                    owner="falsify",
                )
    elif args.max_weight is not None:
        raise OptionError(
            "applies with --family smith only", option="--max-weight", owner="falsify"
        )
    if args.against == "bound":
        for flag, value in (("--exact", args.exact), ("--exact-time-limit", args.exact_time_limit)):
            if value is not None:
                raise OptionError(
                    "applies with --against opt only (against a bound no exact solver runs)",
                    option=flag,
                    owner="falsify",
                )
    exact = args.exact or "cpsat"
    if SOLVERS.spec(exact).kind != "exact":
        raise OptionError(
            f"{exact!r} proves no optimum, so every candidate would be "
            f"skipped; choose one of {', '.join(solver_names('exact'))}",
            option="--exact",
            owner="falsify",
        )
    if args.out:
        for path in _outputs(args.out):
            a.check_output(path, [], owner="falsify", streams=False)
    return exact, args.exact_time_limit or 10.0


def run(args: argparse.Namespace) -> int:
    exact, exact_limit = _check(args)
    space = Space(
        args.max_tasks,
        args.max_gpus or 3,
        args.max_time,
        args.model or "paper",
        args.min_gpus or 1,
        args.eligibility or "any",
        args.types or 3,
        not args.allow_infinite_alpha,
        args.family,
        args.max_weight or 1000,
    )
    f = falsify(
        args.solver,
        against=args.against,
        budget=args.budget,
        iterations=args.iterations,
        seed=args.seed,
        space=space,
        exact=exact,
        exact_time_limit=exact_limit,
        progress=not args.no_progress,
        solver_time_limit=args.solver_time_limit,
        score=args.score,
    )
    if f.violates and not args.no_shrink and interrupt.requested() is None:
        assert f.instance is not None  # a violation is found on an instance
        tasks, ratio = f.instance.num_tasks, f.ratio
        f = shrink(f, space, exact=exact, exact_time_limit=exact_limit)
        assert f.instance is not None
        print(
            f"violating ratio found {ratio:.6g}; shrunk that instance from {tasks} to "
            f"{f.instance.num_tasks} tasks (ratio {f.ratio:.6g}, still violating)"
        )
    ref = "OPT" if args.against == "opt" else "lower bound"
    print(
        f"falsify {args.solver} against {ref}: {f.evaluated} instances evaluated, "
        f"{f.skipped} skipped (invalid or no proved reference)"
    )
    for data, msg in f.errors[:3]:
        print(f"  SOLVER BUG on instance {data['name']!r}: {msg}")
    instance_out, schedule_out, errors_out, worst_out, worst_schedule_out = (
        _outputs(args.out) if args.out else (None,) * 5
    )
    if errors_out and f.errors:
        atomic_write_text(
            errors_out, json.dumps([{"error": m, "instance": d} for d, m in f.errors], indent=1)
        )
        print(f"  {len(f.errors)} solver error(s) -> {errors_out}")
    if f.instance is None:
        print("no instance evaluated; raise --budget or --exact-time-limit")
        return 0
    assert f.result is not None  # set with the instance
    where = (
        f"(objective {f.result.objective:g} / {ref} {f.reference:g}) on "
        f"{f.instance.num_jobs} jobs, {f.instance.num_gpus} GPUs, "
        f"{f.instance.num_tasks} tasks"
    )
    relative = args.score == "relative" and f.guarantee is not None and math.isfinite(f.guarantee)
    if relative:  # the search climbed ratio / claim: its best instance is not the worst ratio
        print(f"  highest ratio / claimed guarantee  {f.score:.6g}: ratio {f.ratio:.6g} {where}")
        print(
            f"  highest ratio of any instance evaluated  {f.max_ratio:.6g}  "
            "(--score ratio searches for the worst ratio)"
        )
    else:
        print(f"  worst ratio  {f.ratio:.6g}  {where}")
    if f.guarantee is None:
        print("  claimed guarantee: none known for this solver")
    else:
        g = "inf" if math.isinf(f.guarantee) else f"{f.guarantee:.6g}"
        claim = SOLVERS.spec(args.solver).guarantee
        what = claim if isinstance(claim, str) else getattr(claim, "__name__", "?")
        print(f"  claimed guarantee {g} = {what}, alpha = {f.alpha:.6g}")
        if f.violates:
            print("  VIOLATED: the ratio to the proved optimum exceeds the claimed guarantee")
        elif args.against == "bound" and args.solver == "hare-paper" and f.ratio > f.guarantee:
            print("  above the claim, but only against a lower bound: not a proof")
    if instance_out and schedule_out:
        save_instance(f.instance, instance_out)
        save_result(f.result, schedule_out)
        print(f"  instance -> {instance_out}\n  schedule -> {schedule_out}")
    if worst_out and worst_schedule_out and f.worst is not None and f.worst[0] is not f.instance:
        save_instance(f.worst[0], worst_out)
        save_result(f.worst[1], worst_schedule_out)
        print(
            f"  instance of the highest ratio ({f.max_ratio:.6g}) -> {worst_out}, schedule "
            f"-> {worst_schedule_out}"
        )
    return 0
