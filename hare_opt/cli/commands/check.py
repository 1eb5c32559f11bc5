"""``hare-opt check INSTANCE SCHEDULE [--json] [--all]``: the tasks and the header."""

from __future__ import annotations

import argparse
import json

from hare_opt.checker import check, check_header
from hare_opt.cli import args as a
from hare_opt.io import load_instance, load_result
from hare_opt.model.units import fmt_time

NAME = "check"
HELP = "verify a schedule against its instance, independently of any solver"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("instance", type=a.path, help="instance file (hare-opt/instance@1)")
    p.add_argument("schedule", type=a.path, help="schedule file (hare-opt/schedule@1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--all",
        action="store_true",
        help=f"list every violation (default: 50 per kind; at most {ALL:,} per kind)",
    )


#: ``--all`` lists this many messages per kind at most: a schedule missing 10^13 tasks
#: cannot be listed, and counts are exact either way.
ALL = 10**6


def run(args: argparse.Namespace) -> int:
    inst = load_instance(args.instance)
    result = load_result(args.schedule)
    report = check(inst, result.schedule, max_messages=ALL if args.all else 50)
    header = check_header(inst, result, report)
    if args.json:
        print(json.dumps({**report.to_json(), "header": header}))
    else:
        n_bad = sum(report.counts.values())
        verdict = "feasible" if report.feasible else f"INFEASIBLE ({n_bad} violations)"
        if header:
            verdict += (
                f"; its header contradicts its tasks ({len(header)} "
                f"statement{'s' if len(header) > 1 else ''})"
            )
        print(f"{args.schedule}: {verdict}")
        for v in [*header, *report.violations]:
            print(f"  {v}")
        unit = inst.time_unit
        for label, value in (
            ("total weighted completion time", report.objective),
            ("weighted flow time", report.weighted_flow_time),
            ("average JCT", report.avg_jct),
            ("makespan", report.makespan),
        ):
            if value is not None:
                print(f"  {label:31s} {fmt_time(value, unit)}")
    return 0 if report.feasible and not header else 1
