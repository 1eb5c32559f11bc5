"""``hare-opt generate {random,paper} --seed S ... (--out FILE | --count C --out-dir DIR)``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hare_opt.cli import args as a
from hare_opt.generators import (
    SWITCHING_MODES,
    TESTBED,
    get_regime,
    paper_instance,
    parse_cluster,
    random_instance,
)
from hare_opt.generators.paper import ARRIVALS, DISTRIBUTIONS
from hare_opt.generators.regimes import REGIMES
from hare_opt.io import save_instance
from hare_opt.model import MAX_TIME, OptionError
from hare_opt.model.limits import MAX_TASKS

#: Most jobs and GPUs a generated instance may have (more is a typo, not a workload).
MAX_JOBS, MAX_GPUS, MAX_COUNT = 10**6, 10**5, 10**5

NAME = "generate"
HELP = "write seeded random or paper-like (Hare testbed) instances"


def _pair(text: str) -> tuple[int, int]:
    """``"2"`` -> (2, 2); ``"1-3"`` or ``"1,3"`` -> (1, 3)."""
    parts = text.replace(",", "-").split("-")
    if len(parts) not in (1, 2) or not all(
        p.strip().isdigit() and len(p.strip()) <= 15 for p in parts
    ):
        raise argparse.ArgumentTypeError(
            f"expected N or LOW-HIGH (non-negative integers), got {text!r}"
        )
    nums = [int(p) for p in parts]
    if nums[0] > nums[-1]:
        raise argparse.ArgumentTypeError(f"expected LOW <= HIGH, got {text!r}")
    return (nums[0], nums[-1])


def _mix(text: str) -> tuple[float, ...]:
    share = a.number(lo=0.0, hi=1e6, what="a share")
    try:
        out = tuple(share(x) for x in text.split(":"))
    except argparse.ArgumentTypeError:
        out = ()
    if len(out) != 4 or not sum(out) > 0:
        raise argparse.ArgumentTypeError(
            f"expected CV:NLP:Speech:Rec shares like 2:1:1:1 "
            f"(finite, >= 0, not all 0), got {text!r}"
        )
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--seed", type=a.seed, default=0, help="first seed (default 0)")
    common.add_argument(
        "--out", type=a.path, metavar="FILE", help="write one instance here (- for standard output)"
    )
    common.add_argument(
        "--count",
        type=a.integer(lo=1, hi=MAX_COUNT),
        default=1,
        help="number of instances (seeds SEED, SEED+1, ...); needs --out-dir when > 1",
    )
    common.add_argument("--out-dir", type=a.path, metavar="DIR", help="write NAME.json files here")
    common.add_argument(
        "--name",
        type=a.file_name,
        help="instance name, a plain file name: with --out-dir the file is "
        "DIR/NAME.json (default: derived from kind and seed)",
    )

    r = sub.add_parser("random", parents=[common], help="random instance with small integers")
    r.add_argument("--jobs", type=a.integer(lo=1, hi=MAX_JOBS), default=5)
    r.add_argument("--gpus", type=a.integer(lo=1, hi=MAX_GPUS), default=3)
    r.add_argument(
        "--types", type=a.names, default="V100,P100,K80", help="comma-separated GPU types"
    )
    r.add_argument("--rounds", type=_pair, default=(1, 3), metavar="LO-HI")
    r.add_argument("--tasks-per-round", type=_pair, default=(1, 3), metavar="LO-HI")
    r.add_argument(
        "--heterogeneity",
        type=a.number(lo=0.0, hi=1e6),
        default=1.0,
        help="max slowest/fastest ratio minus 1 (0: identical GPUs)",
    )
    r.add_argument("--release-spread", type=a.integer(lo=0, hi=MAX_TIME), default=0)
    r.add_argument("--sync", type=_pair, default=(0, 0), metavar="LO-HI")
    r.add_argument("--sync-map", action="store_true", help="sync time per GPU type")
    r.add_argument(
        "--finite-alpha",
        action="store_true",
        help="with --sync-map: each job's syncs all zero or all positive",
    )
    r.add_argument("--switch-overhead", type=_pair, default=(0, 0), metavar="LO-HI")
    r.add_argument("--weights", type=_pair, default=(1, 5), metavar="LO-HI")
    r.add_argument("--max-task-time", type=a.integer(lo=1, hi=MAX_TIME), default=20)
    r.add_argument("--max-tasks", type=a.integer(lo=1, hi=MAX_TASKS), default=None)
    r.add_argument(
        "--eligibility",
        type=a.number(lo=0.0, hi=1.0, what="a probability"),
        default=0.0,
        help="probability that a job cannot run on a GPU type",
    )

    q = sub.add_parser("paper", parents=[common], help="the paper's 8 models on its GPU types")
    q.add_argument("--jobs", type=a.integer(lo=1, hi=MAX_JOBS), default=30)
    q.add_argument(
        "--cluster",
        type=a.cluster,
        default="testbed",
        help=f"testbed ({TESTBED}, the default) or TYPE:COUNT,...",
    )
    q.add_argument(
        "--regime",
        choices=tuple(REGIMES),
        default="compressed",
        help="what a task is, the time unit, its sync, job lengths and the "
        "arrival rate by cluster size: 'paper' is the regime `hare-opt "
        "reproduce` uses, 'paper-heavy-sync' its sensitivity setting (every "
        "task pays the least-overlap network sync); --unit-ms, --rounds and "
        "--mean-interarrival override it (default compressed)",
    )
    q.add_argument("--mix", type=_mix, default=(1, 1, 1, 1), help="CV:NLP:Speech:Rec shares")
    q.add_argument("--switching", choices=SWITCHING_MODES, default="hare")
    q.add_argument("--arrival", choices=ARRIVALS, default="poisson")
    q.add_argument(
        "--mean-interarrival",
        type=a.number(lo=0.0, lo_open=True, hi=1e9, what="seconds"),
        default=None,
        metavar="SECONDS",
        help="mean gap between arrivals (default: the regime's for the cluster)",
    )
    q.add_argument("--durations", choices=DISTRIBUTIONS, default="philly")
    q.add_argument("--demand", choices=DISTRIBUTIONS, default="philly")
    q.add_argument(
        "--rounds",
        type=_pair,
        default=None,
        metavar="LO-HI",
        help="job length range in rounds (default: the regime's)",
    )
    q.add_argument(
        "--bandwidth",
        type=a.number(lo=0.0, lo_open=True, hi=1e6, what="Gbps"),
        default=25.0,
        metavar="GBPS",
    )
    q.add_argument("--batch-scale", type=a.number(lo=0.0, lo_open=True, hi=1e3), default=1.0)
    q.add_argument(
        "--unit-ms",
        type=a.integer(lo=1, hi=3_600_000),
        default=None,
        help="time unit in ms (default: the regime's, 100 when compressed)",
    )


def _make(args: argparse.Namespace, seed: int, name: str | None):
    if args.kind == "random":
        return random_instance(
            seed,
            n_jobs=args.jobs,
            n_gpus=args.gpus,
            gpu_types=tuple(args.types),
            rounds=args.rounds,
            tasks_per_round=args.tasks_per_round,
            heterogeneity=args.heterogeneity,
            release_spread=args.release_spread,
            sync=args.sync,
            sync_map=args.sync_map,
            finite_alpha=args.finite_alpha,
            switch_overhead=args.switch_overhead,
            weights=args.weights,
            max_task_time=args.max_task_time,
            max_tasks=args.max_tasks,
            eligibility=args.eligibility,
            name=name,
        )
    gpus = parse_cluster(args.cluster)
    gap = args.mean_interarrival
    if gap is None:
        gap = get_regime(args.regime).mean_interarrival(len(gpus))
    return paper_instance(
        seed,
        args.jobs,
        gpus,
        switching=args.switching,
        bandwidth_gbps=args.bandwidth,
        batch_scale=args.batch_scale,
        unit_ms=args.unit_ms,
        name=name,
        mix=args.mix,
        arrival=args.arrival,
        mean_interarrival=gap,
        durations=args.durations,
        demand=args.demand,
        rounds=args.rounds,
        regime=args.regime,
    )


def run(args: argparse.Namespace) -> int:
    if (args.out is None) == (args.out_dir is None):
        raise OptionError("give exactly one of --out FILE or --out-dir DIR", owner="generate")
    if args.count > 1 and args.out:
        raise OptionError("--count > 1 writes several files: use --out-dir DIR", owner="generate")
    if args.out:
        a.check_output(args.out, [], owner="generate")
    else:
        a.check_folder(args.out_dir, owner="generate")
    report = sys.stderr if a.uses_stdout(args.out) else sys.stdout  # stdout: the instance
    for i in range(args.count):
        seed = args.seed + i
        name = args.name if args.count == 1 else (f"{args.name}-{i}" if args.name else None)
        inst = _make(args, seed, name)
        path = Path(args.out) if args.out else Path(args.out_dir) / f"{inst.name}.json"
        save_instance(inst, path)
        shown = "standard output" if report is sys.stderr else path
        print(
            f"{shown}: {inst.num_jobs} jobs, {inst.num_gpus} GPUs, {inst.num_tasks} tasks "
            f"(time unit {inst.time_unit})",
            file=report,
        )
    return 0
