"""``hare-opt solve INSTANCE --solver NAME [--time-limit S] [--start FILE] [--out FILE] ...``."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Mapping
from typing import Any

from hare_opt.cli import args as a
from hare_opt.cli.clock import process_age
from hare_opt.io import load_instance, load_result, save_result
from hare_opt.model import Instance, OptionError, Result
from hare_opt.model.units import fmt_number, fmt_time
from hare_opt.solvers import SOLVERS, check_hint, solve, solver_names
from hare_opt.solvers.kernels import LOADER
from hare_opt.util import progress

NAME = "solve"
HELP = "solve an instance with an exact solver or a heuristic; the schedule is checked"

#: The process ends without the interpreter's tear-down (``cli.main._leave``).
SKIP_TEARDOWN = True
#: Shared options that have their own flag (or are not for the command line).
RESERVED = {"time_limit": "--time-limit", "hint": "--start", "verify_result": None, "stop": None}
#: Kinds whose solvers continue from a given schedule (``--start``, the library's
#: ``hint``): an exact solver takes it as its first incumbent (``exact.best_start``), an
#: improver as the schedule it improves; the others build their own and would ignore it.
STARTS_FROM = ("exact", "improver")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("instance", type=a.path, help="instance file (hare-opt/instance@1)")
    p.add_argument(
        "--solver", default="hare", help=f"one of {', '.join(solver_names())} (default: hare)"
    )
    p.add_argument(
        "--time-limit",
        type=a.seconds,
        default=None,
        metavar="SECONDS",
        help="wall-clock limit for solvers that search (default: none)",
    )
    p.add_argument(
        "--start",
        type=a.path,
        metavar="FILE",
        help="a schedule file to continue from (e.g. an earlier --out): checked against "
        "the instance first, then the first incumbent of an exact solver or the schedule "
        "lns improves",
    )
    p.add_argument(
        "--out",
        type=a.path,
        metavar="FILE",
        help="write the schedule file here (never the instance file itself; - for standard output)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print {status, objective, lower_bound, runtime_s, stats} as JSON",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="solver option, e.g. --solver cpsat --option threads=2 --option "
        "symmetry=false (repeatable; values are JSON, else strings); seed, "
        "threads and log are accepted by every solver",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress lines on stderr (they appear only on a terminal)",
    )
    a.deprecated(p, "--quiet", "--no-progress")


def _options(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise OptionError(
                f"expected KEY=VALUE, got {pair!r}", option=key or None, owner="solve --option"
            )
        if key in RESERVED:
            flag = RESERVED[key]
            raise OptionError(
                f"is set with {flag}, not --option"
                if flag
                else "is not available on the command line",
                option=key,
                owner="solve --option",
            )
        if key in out:
            raise OptionError("given twice", option=key, owner="solve --option")
        try:
            out[key] = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            out[key] = value
    return out


def _start(inst: Instance, path: str) -> Result:
    """The schedule file as a checked start, or an error that names the file and why."""
    try:
        return check_hint(inst, load_result(path))
    except OptionError as exc:
        raise OptionError(f"{path}: {exc.reason}", option="--start", owner="solve") from None


def bound_label(result) -> str:
    """What the printed lower bound is, so that it is not mistaken for another one."""
    if result.status == "optimal":
        return "proved optimal"
    kind = SOLVERS.spec(result.solver).kind if result.solver in SOLVERS else ""
    label = result.stats.get("lower_bound_from")  # a heuristic's own bound
    if label:
        return label
    if result.stats.get("relaxation_bound") is not None:  # hare-paper: its step 1's bound
        return "its relaxation's proved bound (step 1)"
    source = result.stats.get("bound_from")  # an exact run: its own proof or the bounds
    if source == "bounds":
        return "from hare_opt.bounds (critical path, load)"
    if source:
        return f"proved by {source}"
    return "proved by the solver" if kind == "exact" else "from the solver"


def run(args: argparse.Namespace) -> int:
    spec = SOLVERS.spec(args.solver)  # an unknown name fails before the file is read
    options = _options(args.option)
    spec.parse_options({k: v for k, v in options.items() if k not in ("seed", "threads", "log")})
    if args.start and spec.kind not in STARTS_FROM:
        takers = ", ".join(SOLVERS.names(lambda s: s.kind in STARTS_FROM))
        raise OptionError(
            f"solver {args.solver!r} builds its own schedule and would ignore it; "
            f"solvers that continue from one: {takers}",
            option="--start",
            owner="solve",
        )
    if args.out:
        a.check_output(args.out, [args.instance, args.start], owner="solve")
    inst = load_instance(args.instance)
    if args.start:
        options["hint"] = _start(inst, args.start)
    forced = os.environ.get("HARE_OPT_PROGRESS") == "1"  # e.g. for logs and tests
    show = not args.no_progress and (forced or (not args.json and sys.stderr.isatty()))
    unit = inst.time_unit
    with progress.reporting(
        sys.stderr if show else None, overwrite=sys.stderr.isatty(), fmt=lambda x: fmt_time(x, unit)
    ) as line:
        # start-up: the process up to here, plus the kernels loaded before and during the
        # solve (left out of its clock); reported, so the run is judged by its own start-up
        loaded, age = LOADER.mid_solve_s, process_age()
        result = solve(
            inst,
            args.solver,
            time_limit=args.time_limit,
            progress=None if line is None else line.update,
            **options,
        )
        result.stats["startup_s"] = round(
            age + LOADER.mid_solve_s - loaded + (result.stats.compile_s or 0.0), 3
        )
    if args.out:
        save_result(result, args.out)
    report = sys.stderr if a.uses_stdout(args.out) else sys.stdout  # stdout: the schedule
    if args.json:
        print(json.dumps({**result.summary(), "stats": _plain(result.stats)}), file=report)
        return 0
    s = result.summary()
    stopped = result.stats.get("stopped")
    lines = [
        f"{inst.name}: solver {args.solver}, status {s['status']}"
        + (f" (stopped early: {stopped})" if stopped else "")
    ]
    if args.start:
        given = options["hint"].objective
        lines.append(f"  start       {fmt_time(given, unit)} (from {args.start})")
    if s["objective"] is not None:
        lines.append(f"  objective   {fmt_time(s['objective'], unit)}")
    if s["lower_bound"] is not None:
        lines.append(
            f"  lower bound {fmt_time(s['lower_bound'], unit)}  "
            f"[{bound_label(result)}; `hare-opt bound` lists every bound]"
        )
    if result.gap is not None:
        lines.append(f"  gap         {100 * result.gap:.2f}%")
    st = result.stats
    if st.get("relaxation_objective") is not None:  # hare-paper: what step 1 achieved
        gap, bound = st.get("relaxation_gap"), st.get("relaxation_bound")
        lines.append(
            f"  relaxation  objective {fmt_number(st['relaxation_objective'])}, "
            f"bound {'none' if bound is None else fmt_number(bound)}"
            + (f", gap {100 * gap:.2f}%" if gap is not None else "")
            + (
                " (optimal)"
                if st.get("relaxation_optimal")
                else f" ({st.get('relaxation_status', 'stopped')})"
            )
        )
    lines.append(
        f"  runtime     {fmt_number(result.runtime_s)} s (start-up before it "
        f"{fmt_number(st['startup_s'])} s: interpreter, imports, compiled kernels)"
    )
    if args.out:
        lines.append(f"  schedule -> {'standard output' if report is sys.stderr else args.out}")
    print("\n".join(lines), file=report)
    return 0


def _plain(stats: Mapping[str, Any]) -> dict[str, Any]:
    """``stats`` as JSON: finite numbers, strings, booleans and None, nested in lists and
    objects (a portfolio member's brief stays an object, not its Python repr); the rest
    as text."""
    return {str(k): _plain_value(v) for k, v in stats.items()}


def _plain_value(v: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if hasattr(v, "tolist"):  # NumPy scalars and arrays
        return _plain_value(v.tolist())
    if isinstance(v, (int, float)):
        return v if isinstance(v, int) or math.isfinite(v) else None
    if isinstance(v, Mapping):
        return _plain(v)
    if isinstance(v, (list, tuple)):
        return [_plain_value(x) for x in v]
    return str(v)
