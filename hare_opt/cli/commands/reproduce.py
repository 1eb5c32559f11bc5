"""``hare-opt reproduce [--quick] [--out DIR] [--executor local|dask] [--address A]``."""

from __future__ import annotations

import argparse
import sys

NAME = "reproduce"
HELP = "regenerate the paper's tables and figures (and ours) into paper_figs/"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true",
                   help="fewer seeds and smaller sweeps (<= 10 min on 2 cores)")
    p.add_argument("--out", default="paper_figs", help="output folder (default paper_figs)")
    p.add_argument("--executor", choices=("local", "dask"), default="local")
    p.add_argument("--address", help="Dask scheduler, e.g. tcp://127.0.0.1:8786 "
                   "(default with --executor dask: a LocalCluster for this run)")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: cores)")
    p.add_argument("--only", help="comma-separated items, e.g. fig1,fig12")
    p.add_argument("--cache", help="cell cache folder (default OUT/.cells); reruns reuse it")
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from hare_opt.sweeps.reproduce import run_items

    only = [s for s in args.only.split(",") if s] if args.only else None
    outcomes = run_items(args.out, quick=args.quick, only=only, executor=args.executor,
                         workers=args.workers, address=args.address,
                         progress=not args.no_progress, cache=args.cache)
    width = max(len(o.name) for o in outcomes)
    for o in outcomes:
        print(f"{o.name:{width}s}  {o.verdict}  ({o.seconds:.0f} s)")
        print(f"{'':{width}s}  ours: {o.ours}")
    print(f"wrote {args.out}/README.md and one CSV + PNG per item")
    failed = [o.name for o in outcomes if o.verdict == "FAILED"]
    if failed:
        print(f"hare-opt reproduce: {len(failed)} item(s) failed: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0
