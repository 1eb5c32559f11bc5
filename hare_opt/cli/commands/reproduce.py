"""``hare-opt reproduce [--quick] [--out-dir DIR] [--executor local|dask] [--address A]``."""

from __future__ import annotations

import argparse
import sys

from hare_opt.cli import args as a

NAME = "reproduce"
HELP = "regenerate the paper's tables and figures (and ours) into paper_figs/"
#: Where results go: a quick run never replaces the committed full-run files.
FULL_OUT, QUICK_OUT = "paper_figs", "paper_figs/quick"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true",
                   help=f"3 seeds and fewer points (from an empty cell cache about an hour on 2 "
                        f"cores, mostly hare-paper on 160 GPUs: docs/reproduction.md); writes to "
                        f"{QUICK_OUT} unless --out-dir says otherwise")
    p.add_argument("--out-dir", type=a.path, default=None, metavar="DIR",
                   help=f"output folder (default {FULL_OUT}, or {QUICK_OUT} with --quick)")
    a.deprecated(p, "--out", "--out-dir")
    p.add_argument("--executor", choices=("local", "dask"), default="local")
    p.add_argument("--address", help="Dask scheduler, e.g. tcp://127.0.0.1:8786 "
                   "(default with --executor dask: a LocalCluster for this run)")
    p.add_argument("--workers", type=a.workers, default=None,
                   help="worker processes (default: cores)")
    p.add_argument("--only", type=a.names, help="comma-separated items, e.g. fig1,fig12")
    p.add_argument("--cache", type=a.path,
                   help="cell cache folder (default OUT/.cells); reruns reuse it")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from hare_opt.sweeps.executors import check_address
    from hare_opt.sweeps.reproduce import check_items, run_items

    out = args.out_dir or (QUICK_OUT if args.quick else FULL_OUT)
    check_items(args.only)
    a.check_folder(out, owner="reproduce")
    if args.cache:
        a.check_folder(args.cache, "--cache", owner="reproduce")
    check_address(args.executor, args.address)
    outcomes = run_items(out, quick=args.quick, only=args.only, executor=args.executor,
                         workers=args.workers, address=args.address,
                         progress=not args.no_progress and sys.stderr.isatty(),
                         cache=args.cache)
    width = max(len(o.name) for o in outcomes)
    for o in outcomes:
        print(f"{o.name:{width}s}  {o.verdict}  ({o.seconds:.0f} s)")
        print(f"{'':{width}s}  ours: {o.ours}")
    print(f"wrote {out}/README.md and one CSV + PNG per item")
    failed = [o.name for o in outcomes if o.verdict == "FAILED"]
    if failed:
        print(f"hare-opt reproduce: {len(failed)} item(s) failed: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0
