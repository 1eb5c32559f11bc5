"""``hare-opt explain INSTANCE SCHEDULE [--job ID] [--json] [--out FILE.png]``."""

from __future__ import annotations

import argparse
import json

from hare_opt.cli import args as a

NAME = "explain"
HELP = (
    "why each job of a schedule completes when it does: the chain of tasks, syncs, "
    "releases and GPU orders that sets it, GPU time idle while tasks waited, GPU time "
    "held for tasks not yet ready"
)

#: Formats of --out by suffix (as ``plot``).
FORMATS = (".png", ".svg", ".pdf")
#: Most tasks drawn with --out (as ``plot``).
MAX_DRAWN = 10**6


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("instance", type=a.path, help="instance file (hare-opt/instance@1)")
    p.add_argument(
        "schedule",
        type=a.path,
        help="schedule file (hare-opt/schedule@1), e.g. from solve --out or simulate --out-dir",
    )
    p.add_argument(
        "--job",
        action="append",
        default=None,
        metavar="ID",
        help="print this job's chain (repeatable; default: every job's when there "
        "are at most 6, else the job with the largest weighted completion); "
        "with --out, outline the first one's",
    )
    p.add_argument(
        "--links",
        type=a.integer(lo=0, hi=10**7, what="a number of links"),
        default=12,
        metavar="N",
        help="links of each chain printed, the last N (0: all; default 12)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the whole explanation as JSON (every job's chain in full)",
    )
    p.add_argument(
        "--out",
        type=a.path,
        metavar="FILE",
        help=f"also draw it: the Gantt chart with idle and reserved GPU time "
        f"shaded and a chain outlined ({', '.join(FORMATS)})",
    )


def run(args: argparse.Namespace) -> int:
    from hare_opt.analysis import explain
    from hare_opt.io import destination, load_instance, load_result
    from hare_opt.model import OptionError
    from hare_opt.model.limits import check_size

    out, discard = None, False
    if args.out is not None:
        out = a.check_output(args.out, [args.instance, args.schedule], owner="explain")
        discard = destination(out).kind == "discard"
        if a.uses_stdout(out) or (not discard and out.suffix.lower() not in FORMATS):
            raise OptionError(
                f"{args.out!r}: the suffix chooses the format; use one of "
                f"{', '.join(FORMATS)} (or /dev/null)",
                option="--out",
                owner="explain",
            )
    inst = load_instance(args.instance)
    res = load_result(args.schedule)
    for job in args.job or []:
        if job not in set(inst.job_ids.tolist()):
            raise OptionError(
                f"job {job!r} is not in instance {inst.name!r}", option="--job", owner="explain"
            )
    if out is not None:
        check_size(
            "explain",
            inst.name,
            len(res.schedule),
            MAX_DRAWN,
            "tasks to draw",
            "explain without --out, or a smaller instance",
        )
    e = explain(inst, res.schedule, res.solver)
    if out is not None:  # drawn first: a reader of the text that stops early (| head)
        from hare_opt.plot.explain import explain_figure  # does not cost the figure
        from hare_opt.plot.style import write_figure

        write_figure(
            explain_figure(e, args.job[0] if args.job else None),
            out,
            fmt="png" if discard else None,
        )
    if args.json:
        print(json.dumps(e.to_json()))
    else:
        print("\n".join(e.lines(args.job, args.links)))
        if out is not None:
            print(f"figure -> {out}")
    return 0
