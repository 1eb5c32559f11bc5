"""``hare-opt plot INSTANCE SCHEDULE --out FILE.png [--title T]``."""

from __future__ import annotations

import argparse

from hare_opt.io import load_instance, load_result
from hare_opt.model.units import in_seconds

NAME = "plot"
HELP = "draw a schedule as a Gantt chart (PNG, SVG or PDF by the file suffix)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("instance", help="instance file (hare-opt/instance@1)")
    p.add_argument("schedule", help="schedule file (hare-opt/schedule@1)")
    p.add_argument("--out", required=True, help="output image, e.g. chart.png")
    p.add_argument("--title", help="chart title (default: instance, solver and objective)")
    p.add_argument("--dpi", type=int, default=120, help="resolution of raster output")


def run(args: argparse.Namespace) -> int:
    from hare_opt.plot import save_gantt  # matplotlib only for this command

    inst = load_instance(args.instance)
    res = load_result(args.schedule)
    title = args.title
    if title is None:
        title = inst.name + (f": {res.solver}" if res.solver else "")
        if res.objective is not None:
            unit = inst.time_unit
            title += f", objective {res.objective:g}" + (in_seconds(res.objective, unit)
                                                         or f" {unit}")
    path = save_gantt(inst, res.schedule, args.out, title=title, dpi=args.dpi)
    print(path)
    return 0
