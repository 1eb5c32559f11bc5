"""``hare-opt solve INSTANCE --solver NAME [--time-limit S] [--out FILE] [--json]``."""

from __future__ import annotations

import argparse
import json

from hare_opt.io import load_instance, save_result
from hare_opt.model import OptionError
from hare_opt.model.units import in_seconds
from hare_opt.solvers import solve, solver_names

NAME = "solve"
HELP = "solve an instance with an exact solver or a heuristic; the schedule is checked"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("instance", help="instance file (hare-opt/instance@1)")
    p.add_argument("--solver", default="hare", help=f"one of {', '.join(solver_names())} "
                   "(default: hare)")
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="wall-clock limit for solvers that search (default: none)")
    p.add_argument("--out", metavar="FILE", help="write the schedule file here")
    p.add_argument("--json", action="store_true",
                   help="print {status, objective, lower_bound, runtime_s} as JSON")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="solver option, e.g. --option node_limit=1000 (repeatable; shared "
                        "options: seed, threads, log)")


def _options(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise OptionError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def run(args: argparse.Namespace) -> int:
    if args.time_limit is not None and args.time_limit <= 0:
        raise OptionError("--time-limit must be positive")
    inst = load_instance(args.instance)
    result = solve(inst, args.solver, time_limit=args.time_limit, **_options(args.option))
    if args.out:
        save_result(result, args.out)
    if args.json:
        print(json.dumps(result.summary()))
    else:
        s = result.summary()
        unit = inst.time_unit
        print(f"{inst.name}: solver {args.solver}, status {s['status']}")
        if s["objective"] is not None:
            print(f"  objective   {s['objective']} {unit}{in_seconds(s['objective'], unit)}")
        if s["lower_bound"] is not None:
            print(f"  lower bound {s['lower_bound']} {unit}")
        if result.gap is not None:
            print(f"  gap         {100 * result.gap:.2f}%")
        print(f"  runtime     {result.runtime_s:.3f} s")
        if args.out:
            print(f"  schedule -> {args.out}")
    return 0
