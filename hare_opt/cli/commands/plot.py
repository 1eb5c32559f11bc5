"""``hare-opt plot INSTANCE SCHEDULE --out FILE.png [--title T]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from hare_opt.cli import args as a
from hare_opt.io import destination, load_instance, load_result
from hare_opt.model import OptionError
from hare_opt.model.limits import check_size

NAME = "plot"
HELP = "draw a schedule as a Gantt chart (PNG, SVG or PDF by the file suffix)"

#: Formats by suffix; a raster's resolution is capped (100000 dpi asks for terabytes).
FORMATS = (".png", ".svg", ".pdf")
MAX_DPI = 1200
#: Most tasks drawn: one rectangle each (10^6 take about 30 s; far more would take hours).
MAX_DRAWN = 10**6
#: Longest --title (characters): a chart title is a line; 10^5 characters took 50 s to lay out.
MAX_TITLE = 300


def _title(text: str) -> str:
    if len(text) > MAX_TITLE:
        raise argparse.ArgumentTypeError(
            f"a chart title of at most {MAX_TITLE} characters, got {len(text)}"
        )
    return text


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("instance", type=a.path, help="instance file (hare-opt/instance@1)")
    p.add_argument("schedule", type=a.path, help="schedule file (hare-opt/schedule@1)")
    p.add_argument(
        "--out",
        type=a.path,
        required=True,
        help=f"output image, e.g. chart.png ({', '.join(FORMATS)})",
    )
    p.add_argument(
        "--title",
        type=_title,
        help=f"chart title, at most {MAX_TITLE} "
        "characters (default: instance, solver and objective)",
    )
    p.add_argument(
        "--dpi",
        type=a.integer(lo=10, hi=MAX_DPI, what="dots per inch"),
        default=120,
        help=f"resolution of raster output (10-{MAX_DPI})",
    )


def run(args: argparse.Namespace) -> int:
    from hare_opt.plot import save_gantt  # matplotlib only for this command

    out = a.check_output(args.out, [args.instance, args.schedule], owner="plot")
    discard = destination(out).kind == "discard"  # /dev/null: drawn, then thrown away
    if a.uses_stdout(out) or (not discard and out.suffix.lower() not in FORMATS):
        raise OptionError(
            f"{args.out!r}: the suffix chooses the format; use one of "
            f"{', '.join(FORMATS)} (or /dev/null)",
            option="--out",
            owner="plot",
        )
    inst = load_instance(args.instance)
    res = load_result(args.schedule)
    check_size(
        "plot",
        inst.name,
        len(res.schedule),
        MAX_DRAWN,
        "tasks to draw",
        "plot a smaller instance or a window of it",
    )
    title = args.title
    if title is None:
        from hare_opt.plot.style import schedule_title

        title = schedule_title(inst.name, res.solver, res.objective, inst.time_unit[:20])
    path = save_gantt(
        inst, res.schedule, out, title=title, dpi=args.dpi, fmt="png" if discard else None
    )
    print(Path(path))
    return 0
