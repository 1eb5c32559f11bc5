"""``hare-opt reproduce [--quick] [--out-dir DIR] [--executor local|dask] [--address A]``."""

from __future__ import annotations

import argparse
import json
import os
import sys

from hare_opt.cli import args as a
from hare_opt.model import OptionError
from hare_opt.sweeps.preview import fmt_cpu

NAME = "reproduce"
HELP = "regenerate the paper's tables and figures (and ours) into paper_figs/"
#: Where results go: a quick run never replaces the committed full-run files.
FULL_OUT, QUICK_OUT = "paper_figs", "paper_figs/quick"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"3 seeds and fewer points (from an empty cell cache 15 CPU-minutes, "
        f"8 minutes on 2 workers, measured 2026-12-05); "
        f"writes to {QUICK_OUT} unless --out-dir says otherwise",
    )
    p.add_argument(
        "--out-dir",
        type=a.path,
        default=None,
        metavar="DIR",
        help=f"output folder (default {FULL_OUT}, or {QUICK_OUT} with --quick; "
        "with --regime, its regime-NAME subfolder)",
    )
    p.add_argument(
        "--regime",
        default=None,
        metavar="NAME",
        help="run every simulator item's workloads in this regime instead of the "
        "items' own (a sensitivity run, e.g. paper-heavy-sync: the "
        "least-overlap network sync on every task); --cache paper_figs/.cells "
        "shares the cells that do not depend on it",
    )
    a.deprecated(p, "--out", "--out-dir")
    p.add_argument("--executor", choices=("local", "dask"), default="local")
    p.add_argument(
        "--address",
        help="Dask scheduler, e.g. tcp://127.0.0.1:8786 "
        "(default with --executor dask: a LocalCluster for this run)",
    )
    p.add_argument(
        "--workers", type=a.workers, default=None, help="worker processes (default: cores)"
    )
    p.add_argument("--only", type=a.names, help="comma-separated items, e.g. fig1,fig12")
    p.add_argument(
        "--cache", type=a.path, help="cell cache folder (default OUT/.cells); reruns reuse it"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--plan",
        action="store_true",
        help="do no work: per item, the cells current and to compute, why, and "
        "the estimated CPU (from the costs recorded in stored cells, scaled "
        "by job count where no cell of that size is stored)",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="do no reproduction: recompute the cheapest current cell of each "
        "cell function and of each policy or solver, and exit 1 if any row "
        "differs from the stored one (--verify-all: every current cell)",
    )
    p.add_argument("--verify-all", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--prune",
        action="store_true",
        help="remove cell files of the cache that no item of this run lists "
        "(older layouts, dropped settings), then run",
    )
    p.add_argument(
        "--json", action="store_true", help="with --plan or --verify: one JSON object on stdout"
    )


def run(args: argparse.Namespace) -> int:
    from hare_opt.generators import get_regime
    from hare_opt.sweeps.executors import check_address
    from hare_opt.sweeps.items import REGIME
    from hare_opt.sweeps.reproduce import check_items, plan_items, run_items

    regime = None if args.regime in (None, REGIME) else get_regime(args.regime).name
    out = args.out_dir or (QUICK_OUT if args.quick else FULL_OUT) + (
        f"/regime-{regime}" if regime else ""
    )
    check_items(args.only)
    if args.json and not (args.plan or args.verify or args.verify_all):
        raise OptionError(
            "applies with --plan or --verify only", option="--json", owner="reproduce"
        )
    if args.plan and (args.verify or args.verify_all or args.prune):
        raise OptionError(
            "does no work: it cannot be given with --verify or --prune",
            option="--plan",
            owner="reproduce",
        )
    a.check_folder(out, owner="reproduce")
    if args.cache:
        a.check_folder(args.cache, "--cache", owner="reproduce")
    if args.plan:
        _, _, plan = plan_items(
            out, quick=args.quick, only=args.only, cache=args.cache, regime=regime
        )
        print(json.dumps(plan.as_dict()) if args.json else plan.text())
        return 0
    if args.verify or args.verify_all:
        return _verify(args, out, regime)
    check_address(args.executor, args.address)
    if args.prune:
        cells, store, _ = plan_items(
            out, quick=args.quick, only=None, cache=args.cache, regime=regime
        )
        gone = store.prune(c for cs in cells.values() for c in cs)
        print(f"removed {gone} cell files no item lists from {store.root}", file=sys.stderr)

    def announce(plan) -> None:
        total = plan.total()
        print(
            f"hare-opt reproduce: {total.cells} cells, {total.current} current, "
            f"{total.compute} to compute, estimated {fmt_cpu(total.estimated_cpu_s)} of "
            "CPU"
            + (f" ({total.unknown} of unknown cost)" if total.unknown else "")
            + (f" on {args.workers or os.cpu_count()} workers" if total.compute else ""),
            file=sys.stderr,
        )

    outcomes = run_items(
        out,
        quick=args.quick,
        only=args.only,
        executor=args.executor,
        workers=args.workers,
        address=args.address,
        progress=not args.no_progress and sys.stderr.isatty(),
        cache=args.cache,
        announce=announce,
        regime=regime,
    )
    width = max(len(o.name) for o in outcomes)
    for o in outcomes:
        print(f"{o.name:{width}s}  {o.verdict}  ({o.seconds:.0f} s)")
        print(f"{'':{width}s}  ours: {o.ours}")
    print(f"wrote {out}/README.md and one CSV + PNG per item")
    failed = [o.name for o in outcomes if o.verdict == "FAILED"]
    if failed:
        print(
            f"hare-opt reproduce: {len(failed)} item(s) failed: {', '.join(failed)}",
            file=sys.stderr,
        )
        return 1
    return 0


def _verify(args: argparse.Namespace, out: str, regime: str | None) -> int:
    from hare_opt.sweeps import drift
    from hare_opt.sweeps.reproduce import plan_items

    cells, store, _ = plan_items(
        out, quick=args.quick, only=args.only, cache=args.cache, regime=regime
    )
    every = [c for cs in cells.values() for c in cs]
    chosen = every if args.verify_all else drift.sample(every, store)
    drifts, skipped = drift.check(
        chosen, store, workers=args.workers, progress=not args.no_progress and sys.stderr.isatty()
    )
    checked = len(chosen) - len(skipped)
    if args.json:
        print(
            json.dumps(
                {
                    "checked": checked,
                    "not_current": len(skipped),
                    "drifted": [str(d) for d in drifts],
                }
            )
        )
    else:
        print(
            f"recomputed {checked} cells of {store.root}: "
            + (f"{len(drifts)} differ from the stored rows" if drifts else "every row as stored")
        )
        for d in drifts:
            print(f"  {d}")
    return 1 if drifts else 0
