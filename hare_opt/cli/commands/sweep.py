"""``hare-opt sweep CONFIG.toml [--out-dir DIR] [--executor local|dask] [--address A]``."""

from __future__ import annotations

import argparse
import sys

from hare_opt.cli import args as a

NAME = "sweep"
HELP = "run a declarative TOML sweep (grid x seeds), resumable, locally or on Dask"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "config", type=a.path, help="TOML file: fn, seeds, [fixed], [grid] (docs/contributing.md)"
    )
    p.add_argument(
        "--out-dir",
        type=a.path,
        default="experiments/results/sweeps",
        metavar="DIR",
        help="folder for the cell store and NAME.csv",
    )
    a.deprecated(p, "--out", "--out-dir")
    p.add_argument("--executor", choices=("local", "dask"), default="local")
    p.add_argument(
        "--address",
        help="Dask scheduler address, e.g. tcp://127.0.0.1:8786 "
        "(default with --executor dask: a LocalCluster for this run)",
    )
    p.add_argument(
        "--workers", type=a.workers, default=None, help="worker processes (default: cores)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from hare_opt.sweeps import Sweep, run_sweep
    from hare_opt.sweeps.executors import check_address
    from hare_opt.sweeps.sweep import CellsFailed, results_path

    sweep = Sweep.load(args.config)
    a.check_folder(args.out_dir, owner="sweep")
    results_path(sweep, args.out_dir)  # not the config, not a special file: before any work
    check_address(args.executor, args.address)
    try:
        df = run_sweep(
            sweep,
            args.out_dir,
            executor=args.executor,
            workers=args.workers,
            address=args.address,
            progress=not args.no_progress and sys.stderr.isatty(),
        )
    except CellsFailed as exc:  # work was done and kept: not a refusal (exit 2) but 1
        print(
            f"hare-opt sweep: {exc}; the others are saved, and the same command retries "
            "the failed ones",
            file=sys.stderr,
        )
        return 1
    print(
        f"{sweep.name}: {len(sweep.cells())} cells, {len(df)} rows -> "
        f"{args.out_dir}/{sweep.name}.csv"
    )
    return 0
