"""``hare-opt generate {random,paper} --seed S ... (--out FILE | --count C --out-dir DIR)``."""

from __future__ import annotations

import argparse
from pathlib import Path

from hare_opt.generators import SWITCHING_MODES, TESTBED, paper_instance, random_instance
from hare_opt.generators.paper import ARRIVALS, DISTRIBUTIONS
from hare_opt.io import save_instance
from hare_opt.model import OptionError

NAME = "generate"
HELP = "write seeded random or paper-like (Hare testbed) instances"


def _pair(text: str) -> tuple[int, int]:
    """``"2"`` -> (2, 2); ``"1-3"`` or ``"1,3"`` -> (1, 3)."""
    parts = text.replace(",", "-").split("-")
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or LOW-HIGH, got {text!r}") from None
    if len(nums) not in (1, 2):
        raise argparse.ArgumentTypeError(f"expected N or LOW-HIGH, got {text!r}")
    return (nums[0], nums[-1])


def _mix(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected CV:NLP:Speech:Rec shares like 2:1:1:1, "
                                         f"got {text!r}") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    common.add_argument("--out", metavar="FILE", help="write one instance here")
    common.add_argument("--count", type=int, default=1, help="number of instances (seeds "
                        "SEED, SEED+1, ...); needs --out-dir when > 1")
    common.add_argument("--out-dir", metavar="DIR", help="write NAME.json files here")
    common.add_argument("--name", help="instance name (default: derived from kind and seed)")

    r = sub.add_parser("random", parents=[common], help="random instance with small integers")
    r.add_argument("--jobs", type=int, default=5)
    r.add_argument("--gpus", type=int, default=3)
    r.add_argument("--types", default="V100,P100,K80", help="comma-separated GPU types")
    r.add_argument("--rounds", type=_pair, default=(1, 3), metavar="LO-HI")
    r.add_argument("--tasks-per-round", type=_pair, default=(1, 3), metavar="LO-HI")
    r.add_argument("--heterogeneity", type=float, default=1.0,
                   help="max slowest/fastest ratio minus 1 (0: identical GPUs)")
    r.add_argument("--release-spread", type=int, default=0)
    r.add_argument("--sync", type=_pair, default=(0, 0), metavar="LO-HI")
    r.add_argument("--sync-map", action="store_true", help="sync time per GPU type")
    r.add_argument("--finite-alpha", action="store_true",
                   help="with --sync-map: each job's syncs all zero or all positive")
    r.add_argument("--switch-overhead", type=_pair, default=(0, 0), metavar="LO-HI")
    r.add_argument("--weights", type=_pair, default=(1, 5), metavar="LO-HI")
    r.add_argument("--max-task-time", type=int, default=20)
    r.add_argument("--max-tasks", type=int, default=None)
    r.add_argument("--eligibility", type=float, default=0.0,
                   help="probability that a job cannot run on a GPU type")

    q = sub.add_parser("paper", parents=[common], help="the paper's 8 models on its GPU types")
    q.add_argument("--jobs", type=int, default=30)
    q.add_argument("--cluster", default=TESTBED, help=f"TYPE:COUNT,... (default {TESTBED})")
    q.add_argument("--mix", type=_mix, default=(1, 1, 1, 1), help="CV:NLP:Speech:Rec shares")
    q.add_argument("--switching", choices=SWITCHING_MODES, default="hare")
    q.add_argument("--arrival", choices=ARRIVALS, default="poisson")
    q.add_argument("--mean-interarrival", type=float, default=30.0, metavar="SECONDS")
    q.add_argument("--durations", choices=DISTRIBUTIONS, default="philly")
    q.add_argument("--demand", choices=DISTRIBUTIONS, default="philly")
    q.add_argument("--rounds", type=_pair, default=(2, 40), metavar="LO-HI")
    q.add_argument("--bandwidth", type=float, default=25.0, metavar="GBPS")
    q.add_argument("--batch-scale", type=float, default=1.0)
    q.add_argument("--unit-ms", type=int, default=100, help="time unit in ms (default 100)")


def _make(args: argparse.Namespace, seed: int, name: str | None):
    if args.kind == "random":
        return random_instance(
            seed, n_jobs=args.jobs, n_gpus=args.gpus,
            gpu_types=tuple(t.strip() for t in args.types.split(",") if t.strip()),
            rounds=args.rounds, tasks_per_round=args.tasks_per_round,
            heterogeneity=args.heterogeneity, release_spread=args.release_spread,
            sync=args.sync, sync_map=args.sync_map, finite_alpha=args.finite_alpha,
            switch_overhead=args.switch_overhead,
            weights=args.weights, max_task_time=args.max_task_time, max_tasks=args.max_tasks,
            eligibility=args.eligibility, name=name)
    return paper_instance(
        seed, args.jobs, args.cluster, switching=args.switching, bandwidth_gbps=args.bandwidth,
        batch_scale=args.batch_scale, unit_ms=args.unit_ms, name=name, mix=args.mix,
        arrival=args.arrival, mean_interarrival=args.mean_interarrival,
        durations=args.durations, demand=args.demand, rounds=args.rounds)


def run(args: argparse.Namespace) -> int:
    if args.count < 1:
        raise OptionError(f"--count must be >= 1, got {args.count}")
    if (args.out is None) == (args.out_dir is None):
        raise OptionError("give exactly one of --out FILE or --out-dir DIR")
    if args.count > 1 and args.out:
        raise OptionError("--count > 1 writes several files: use --out-dir DIR")
    for i in range(args.count):
        seed = args.seed + i
        name = args.name if args.count == 1 else (f"{args.name}-{i}" if args.name else None)
        inst = _make(args, seed, name)
        path = Path(args.out) if args.out else Path(args.out_dir) / f"{inst.name}.json"
        save_instance(inst, path)
        print(f"{path}: {inst.num_jobs} jobs, {inst.num_gpus} GPUs, {inst.num_tasks} tasks "
              f"(time unit {inst.time_unit})")
    return 0
