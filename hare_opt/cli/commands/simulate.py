"""``hare-opt simulate``: run online policies on a workload and compare them."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hare_opt.model import OptionError

NAME = "simulate"
HELP = "simulate online scheduling policies on an instance or a generated workload"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from hare_opt.cli import args as a
    from hare_opt.generators.regimes import REGIMES
    from hare_opt.sim.policy import policy_names

    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--instance", type=a.path, metavar="FILE", help="instance file (releases = arrivals)"
    )
    src.add_argument(
        "--workload", choices=("paper", "philly", "random"), help="generate a workload instead"
    )
    p.add_argument(
        "--jobs",
        type=a.integer(lo=1, hi=10**6),
        default=None,
        metavar="N",
        help="jobs to generate (40)",
    )
    p.add_argument(
        "--cluster",
        type=a.cluster,
        default=None,
        help="testbed (V100:8,T4:4,K80:1,M60:2) or a spec like V100:8,T4:4",
    )
    p.add_argument(
        "--regime",
        choices=tuple(REGIMES),
        default=None,
        help="workload regime of --workload paper|philly: 'paper' is the one "
        "`hare-opt reproduce` uses (one batch per task, 1 ms unit, the sync "
        "compute leaves exposed, calibrated lengths and arrivals), "
        "'paper-heavy-sync' its sensitivity setting (the least-overlap "
        "network sync on every task); default: compressed lengths with the "
        "testbed's arrival rate",
    )
    p.add_argument(
        "--trace",
        type=a.path,
        metavar="FILE",
        help="Philly-style trace CSV for --workload philly (else the shipped tables)",
    )
    p.add_argument(
        "--policies",
        type=a.names,
        default="hare",
        help=f"comma-separated, from {', '.join(policy_names())}; a variant as "
        "NAME:KEY=VALUE, e.g. hare-paper:step3=start",
    )
    p.add_argument(
        "--switching",
        default=None,
        help="default|pipeswitch|hare|none for workloads (default hare; gang "
        "policies under leases use default); instance|none for --instance "
        "(default instance)",
    )
    p.add_argument(
        "--semantics",
        choices=("lease", "per-round"),
        default="lease",
        help="lease (default): gang policies hold their GPUs for a lease, syncs "
        "included, and pay Table 3's default switching on generated "
        "workloads; per-round: they give GPUs back at every task end",
    )
    p.add_argument("--seed", type=a.seed, default=None, help="workload seed (0)")
    p.add_argument(
        "--out",
        type=a.path,
        metavar="FILE",
        help="write per-job records of all policies (CSV; - for standard output)",
    )
    p.add_argument(
        "--out-dir",
        type=a.path,
        metavar="DIR",
        help="write each policy's executed schedule and the instance it ran on "
        "here (POLICY.schedule.json, POLICY.instance.json), e.g. for "
        "`hare-opt explain`",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print {policy: {total_weighted_jct, avg_jct, makespan}} as JSON",
    )
    a.deprecated(p, "--summary-json", "--json")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    import pandas as pd
    from tqdm import tqdm

    from hare_opt.cli import args as a
    from hare_opt.generators import instance_switching
    from hare_opt.io import atomic_path, load_instance
    from hare_opt.model import Instance
    from hare_opt.sim import compare, policy_names, simulate
    from hare_opt.sim.policy import UnknownPolicyError, get_policy
    from hare_opt.sim.workload import simulate_workload
    from hare_opt.solvers.kernels import LOADER

    policies = args.policies
    unknown = [p for p in policies if p.partition(":")[0] not in policy_names()]
    if not policies or unknown:
        raise UnknownPolicyError(
            f"--policies: unknown {unknown or 'empty list'}; choose from "
            f"{', '.join(policy_names())}"
        )
    for name in policies:  # a variant's options (NAME:KEY=VALUE) fail now, by name
        get_policy(name)
    if args.trace and args.workload != "philly":
        raise OptionError("applies to --workload philly only", option="--trace", owner="simulate")
    if args.instance:  # the file fixes what the generator options would choose
        given = [
            f"--{k}" for k in ("jobs", "cluster", "regime", "seed") if getattr(args, k) is not None
        ]
        if given:
            raise OptionError(
                "applies to a generated --workload, not to --instance",
                option=given[0],
                owner="simulate",
            )
    if args.out:
        a.check_output(args.out, [args.instance, args.trace], owner="simulate")
    folder = a.check_folder(args.out_dir, owner="simulate") if args.out_dir else None

    def bar(name: str, inst: Instance) -> Any:
        return tqdm(
            total=inst.num_jobs,
            desc=name,
            unit="job",
            file=sys.stderr,
            disable=args.no_progress or not sys.stderr.isatty(),
            leave=False,
        )

    if args.instance:  # the file as it is (or without setups), for every policy
        inst = instance_switching(load_instance(args.instance), args.switching)
        runs = []
        for name in policies:
            with bar(name, inst) as progress:
                run = simulate(inst, name, progress=progress, semantics=args.semantics)
            run.metrics["switching_model"] = args.switching or "instance"
            runs.append(run)
    else:  # each policy on the workload built with its column (as in Python)
        runs = simulate_workload(
            args.workload,
            policies,
            seed=args.seed or 0,
            n_jobs=args.jobs or 40,
            cluster=args.cluster or "testbed",
            switching=args.switching or "hare",
            semantics=args.semantics,
            regime=args.regime,
            trace=args.trace,
            bars=bar,
        )
    columns = {r.policy: r.metrics["switching_model"] for r in runs}
    if args.out:
        with atomic_path(args.out) as tmp:
            pd.concat([r.jobs for r in runs]).to_csv(tmp, index=False)
    if folder is not None:
        from hare_opt.io import save_instance, save_result
        from hare_opt.io.output import plain_name

        for r in runs:
            name = plain_name(r.policy, "--policies")
            save_instance(r.instance, folder / f"{name}.instance.json")
            save_result(r.result, folder / f"{name}.schedule.json")
    report = sys.stderr if a.uses_stdout(args.out) else sys.stdout  # stdout: the CSV
    if args.json:
        print(
            json.dumps(
                {r.policy: {**r.summary(), "switching_model": columns[r.policy]} for r in runs}
            ),
            file=report,
        )
    else:
        table = compare(runs)[
            [
                "total_weighted_jct",
                "avg_jct",
                "p90_jct",
                "makespan",
                "switching_share",
                "reserved_idle_share",
                "lease_idle_share",
                "wall_s",
            ]
        ]
        table.insert(0, "switching", [columns[r.policy] for r in runs])
        inst = runs[0].instance
        print(
            f"{inst.name}: {inst.num_jobs} jobs, {inst.num_tasks} tasks, "
            f"{inst.num_gpus} GPUs, time unit {inst.time_unit}; semantics {args.semantics}"
            + (
                "; switching: the Table 3 column each policy's workload was built with "
                "(gang policies under leases pay the default column)\n"
                if not args.instance
                else "\n"
            )
            + table.to_string(float_format=lambda x: f"{x:.4g}")
            + (f"\nper-job records -> {args.out}" if args.out and report is sys.stdout else "")
            + (
                f"\nexecuted schedules -> {folder}/POLICY.schedule.json (instances: "
                "POLICY.instance.json)"
                if folder is not None
                else ""
            ),
            file=report,
        )
    LOADER.complete()  # a cold cache: every other kernel group compiles now, once
    return 0
