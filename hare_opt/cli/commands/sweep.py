"""``hare-opt sweep CONFIG.toml [--out DIR] [--executor local|dask] [--address A]``."""

from __future__ import annotations

import argparse
import sys

from hare_opt.cli import args as a

NAME = "sweep"
HELP = "run a declarative TOML sweep (grid x seeds), resumable, locally or on Dask"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", type=a.path,
                   help="TOML file: fn, seeds, [fixed], [grid] (docs/contributing.md)")
    p.add_argument("--out", type=a.path, default="experiments/results/sweeps",
                   help="folder for the cell store and NAME.csv")
    p.add_argument("--executor", choices=("local", "dask"), default="local")
    p.add_argument("--address", help="Dask scheduler address (default: a LocalCluster)")
    p.add_argument("--workers", type=a.workers, default=None)
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from hare_opt.sweeps import Sweep, run_sweep

    sweep = Sweep.load(args.config)
    df = run_sweep(sweep, args.out, executor=args.executor, workers=args.workers,
                   address=args.address, progress=not args.no_progress and sys.stderr.isatty())
    print(f"{sweep.name}: {len(sweep.cells())} cells, {len(df)} rows -> "
          f"{args.out}/{sweep.name}.csv")
    return 0
