"""``hare-opt simulate``: run online policies on a workload and compare them."""

from __future__ import annotations

import argparse
import json
import sys

from hare_opt.model import OptionError

NAME = "simulate"
HELP = "simulate online scheduling policies on an instance or a generated workload"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from hare_opt.cli import args as a
    from hare_opt.sim.policy import policy_names

    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--instance", type=a.path, metavar="FILE",
                     help="instance file (releases = arrivals)")
    src.add_argument("--workload", choices=("paper", "philly", "random"),
                     help="generate a workload instead")
    p.add_argument("--jobs", type=a.integer(lo=1, hi=10**6), default=40, metavar="N",
                   help="jobs to generate (40)")
    p.add_argument("--cluster", default="testbed",
                   help="testbed (V100:8,T4:4,K80:1,M60:2) or a spec like V100:8,T4:4")
    p.add_argument("--trace", type=a.path, metavar="FILE",
                   help="Philly-style trace CSV for --workload philly (else the shipped tables)")
    p.add_argument("--policies", default="hare",
                   help=f"comma-separated, from {', '.join(policy_names())}")
    p.add_argument("--switching", default=None,
                   help="default|pipeswitch|hare|none for workloads (default hare; gang "
                        "policies under leases use default); instance|none for --instance "
                        "(default instance)")
    p.add_argument("--semantics", choices=("lease", "per-round"), default="lease",
                   help="lease (default): gang policies hold their GPUs for a lease, syncs "
                        "included, and pay Table 3's default switching on generated "
                        "workloads; per-round: they give GPUs back at every task end")
    p.add_argument("--seed", type=a.seed, default=0, help="workload seed (0)")
    p.add_argument("--out", type=a.path, metavar="FILE",
                   help="write per-job records of all policies (CSV)")
    p.add_argument("--summary-json", action="store_true",
                   help="print {policy: {total_weighted_jct, avg_jct, makespan}} as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    import pandas as pd
    from tqdm import tqdm

    from hare_opt.generators import instance_switching, workload_instance
    from hare_opt.io import load_instance
    from hare_opt.model import Instance
    from hare_opt.sim import compare, policy_names, simulate
    from hare_opt.sim.policy import UnknownPolicyError, policy_mode
    from hare_opt.sim.semantics import switching_for

    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    unknown = [p for p in policies if p not in policy_names()]
    if not policies or unknown:
        raise UnknownPolicyError(f"--policies: unknown {unknown or 'empty list'}; choose from "
                                 f"{', '.join(policy_names())}")
    from hare_opt.cli.args import check_output

    if args.trace and args.workload != "philly":
        raise OptionError("applies to --workload philly only", option="--trace",
                          owner="simulate")
    if args.out:
        check_output(args.out, [args.instance, args.trace], owner="simulate")
    built: dict[str, Instance] = {}

    def instance_for(policy: str) -> Instance:
        """The instance file as it is; a workload built with the policy's switching."""
        column = "instance" if args.instance else switching_for(
            policy_mode(policy), args.semantics, args.switching or "hare")
        if column not in built:
            built[column] = (instance_switching(load_instance(args.instance), args.switching)
                             if args.instance else
                             workload_instance(args.workload, seed=args.seed,
                                               n_jobs=args.jobs, cluster=args.cluster,
                                               switching=column, trace=args.trace))
        return built[column]

    runs = []
    for name in policies:
        inst = instance_for(name)
        with tqdm(total=inst.num_jobs, desc=name, unit="job", file=sys.stderr,
                  disable=args.no_progress, leave=False) as bar:
            runs.append(simulate(inst, name, progress=bar, semantics=args.semantics))
    if args.out:
        pd.concat([r.jobs for r in runs]).to_csv(args.out, index=False)
    if args.summary_json:
        print(json.dumps({r.policy: r.summary() for r in runs}))
    else:
        table = compare(runs)[["total_weighted_jct", "avg_jct", "p90_jct", "makespan",
                               "switching_share", "reserved_idle_share", "lease_idle_share",
                               "wall_s"]]
        inst = runs[0].instance
        print(f"{inst.name}: {inst.num_jobs} jobs, {inst.num_tasks} tasks, "
              f"{inst.num_gpus} GPUs, time unit {inst.time_unit}; semantics {args.semantics}")
        print(table.to_string(float_format=lambda x: f"{x:.4g}"))
        if args.out:
            print(f"per-job records -> {args.out}")
    return 0
