"""Benchmarks of the simulator: every policy at the paper regime's largest setting, and more.

    python experiments/bench_sim.py --paper           # every policy, 300 jobs on 160 GPUs,
                                                      # paper regime, both semantics: CPU s
                                                      # (checker apart), events, memory
    python experiments/bench_sim.py --paper --policies gavel-fifo,srtf,tiresias,allox,gavel-las \
        --base /tmp/b2d8f44                           # ... side by side with an older checkout
    python experiments/bench_sim.py --paper --jobs 200 --gpus 100 --policies hare,srtf
    python experiments/bench_sim.py                   # hare, 1k-10k jobs on 512 GPUs (compressed)
    python experiments/bench_sim.py --compare         # every policy on fig12's old workloads
                                                      # (compressed regime), 3 seeds, the
                                                      # first --semantics (lease)

``--paper``: the reproduction's largest simulator setting (Fig. 15's 300 jobs on 160
GPUs, seed 0, regime ``paper``: one batch per task, 1 ms, calibrated lengths and
arrivals, about 1.2 million tasks). Each (policy, semantics) runs in a fresh process so
that its CPU time and peak resident memory (ru_maxrss) are its own. Columns: ``sim_cpu``
is the process CPU of ``simulate()`` less the independent checker it runs (``check_cpu``,
timed once more on its own); ``load_cpu`` the process CPU before it (imports, loading the
compiled kernels, building the workload); ``reserved%``/``lease_idle%`` the idle GPU time
as a share of the processing time. ``--base DIR``: the same measurement with the package
in DIR (e.g. ``git worktree add /tmp/b2d8f44 b2d8f44``), per-round (the only semantics
before leases), in the same run, so ratios are side by side on one loaded machine.
``--reference``: also run the reference engine (``engine="python"``) and say whether it
executed the same schedule, task for task (the 160-GPU check of the compiled engines).

Without ``--paper``: paper-like jobs in the ``compressed`` regime (100 batches a task)
on a 512-GPU cluster of the testbed's four types; the mean inter-arrival is 30 s
scaled by 15/512 GPUs. Target: 10,000 jobs in <= 120 s on 2 cores.
Prints one line per run; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from hare_opt.generators import build_instance, paper_jobs, parse_cluster
from hare_opt.sim import simulate

CLUSTER = "V100:192,T4:128,K80:96,M60:96"


def workload(n_jobs: int, seed: int, cluster: str = CLUSTER):
    gpus = parse_cluster(cluster)
    specs = paper_jobs(seed, n_jobs, mean_interarrival=30.0 * 15 / len(gpus))
    return build_instance(specs, gpus, switching="hare", name=f"bench-{n_jobs}")


def compare_settings() -> dict[str, tuple[str, int, float]]:
    """name: (cluster, jobs, mean inter-arrival s) of fig12 in the compressed regime (the
    reproduction's before it moved to the paper regime): the testbed, and 160 GPUs in its
    type proportions with arrivals 15/160 as far apart."""
    from hare_opt.sweeps.items import TESTBED, cluster_of, gap_for

    return {
        "testbed-40": (TESTBED, 40, gap_for(15, "compressed")),
        "160gpu-200": (cluster_of(160), 200, gap_for(160, "compressed")),
    }


def paper_one(
    policy: str,
    n_jobs: int,
    n_gpus: int,
    seed: int,
    semantics: str,
    label: str,
    reference: bool = False,
) -> None:
    """One policy on the paper-regime workload, in this process: one line of figures.
    Written against the API older checkouts share (``--base``): no semantics there."""
    import resource

    from hare_opt.checker import check
    from hare_opt.generators import paper_instance
    from hare_opt.generators.regimes import REGIMES
    from hare_opt.sweeps.items import cluster_of

    try:
        from hare_opt.sim.policy import POLICIES
        from hare_opt.sim.semantics import switching_for

        switching = switching_for(POLICIES.spec(policy).mode, semantics, "hare")
        options: dict[str, Any] = {"semantics": semantics}
    except ImportError:  # before semantics: per-round, Hare's switching
        switching, options = "hare", {}
    inst = paper_instance(
        seed,
        n_jobs,
        cluster_of(n_gpus),
        regime="paper",
        switching=switching,
        mean_interarrival=REGIMES["paper"].mean_interarrival(n_gpus),
    )
    if options:  # load the compiled kernels (numba's cache) before timing
        from hare_opt.heuristics.rounds import warm_up
        from hare_opt.sim.policy import POLICIES, get_policy

        try:  # a spec names its compiled core
            fast = POLICIES.spec(policy.split(":", 1)[0]).engine is not None
        except AttributeError:  # older checkouts: the cores say which policies they run
            from hare_opt.sim import compiled, relaxed  # type: ignore[attr-defined]

            fast = any(core.supports(get_policy(policy)) for core in (compiled, relaxed))
        if fast:
            warm_up()
            simulate(paper_instance(0, 2, "V100:2", max_gpus=1), policy, **options)
    load = time.process_time()
    run = simulate(inst, policy, **options)  # includes the independent check
    sim = time.process_time() - load
    t0 = time.process_time()
    assert check(inst, run.result.schedule).feasible
    check_s = time.process_time() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    m = run.metrics
    print(
        f"{policy:11s} {label:9s} {semantics:9s} {inst.num_tasks:>9} {run.num_events:>8} "
        f"{m.get('leases', '-')!s:>6} {run.result.stats.get('plans', '-')!s:>5} "
        f"{load:>8.1f} {sim - check_s:>7.2f} {check_s:>9.2f} {rss:>7.0f} "
        f"{100 * m.get('reserved_idle_share', float('nan')):>9.3f} "
        f"{100 * m.get('lease_idle_share', float('nan')):>10.1f} "
        f"{m['total_weighted_jct']:>14}",
        flush=True,
    )
    st = run.result.stats
    if st.get("plan_cpu_s_mean") is not None:  # hare-paper: what one plan costs, and sees
        gap = st.get("relaxation_gap_max")
        print(
            f"{'':11s} per plan: {st['plan_cpu_s_mean']:.3f} CPU s (relaxation "
            f"{st['relaxation_cpu_s'] / max(1, st['plans']):.3f}), pairs <= {st['pairs_max']} "
            f"(budget {st['pairs_budget']}, exceeded in {st['pairs_over_budget']} plans), "
            f"blocks per job >= {st['blocks_per_job_median_min']} (median), block <= "
            f"{st['block_rounds_max']} rounds, relaxation gap <= "
            f"{'-' if gap is None else f'{100 * gap:.1f}%'}, order changed by the start "
            f"search / MILP in {st['order_changed_by_search']} / "
            f"{st['order_changed_by_milp']} of {st['plans']} plans",
            flush=True,
        )
    if reference:  # the reference engine on the same workload: the same schedule?
        t0 = time.process_time()
        ref = simulate(inst, policy, engine="python", **options)
        same = (
            ref.result.schedule.sorted() == run.result.schedule.sorted()
            and ref.num_events == run.num_events
        )
        print(
            f"{'':11s} reference engine: {time.process_time() - t0:.1f} CPU s, "
            f"{'the same schedule, task for task' if same else 'A DIFFERENT SCHEDULE'}",
            flush=True,
        )


def paper(
    policies: list[str],
    n_jobs: int,
    n_gpus: int,
    seed: int,
    semantics: list[str],
    base: str | None,
    reference: bool = False,
) -> None:
    import subprocess
    import sys

    print(
        f"paper regime, {n_jobs} jobs on {n_gpus} GPUs, seed {seed}; CPU s of the process "
        "(shared 2-core machine)"
    )
    print(
        f"{'policy':11s} {'code':9s} {'semantics':9s} {'tasks':>9} {'events':>8} "
        f"{'leases':>6} {'plans':>5} {'load_cpu':>8} {'sim_cpu':>7} {'check_cpu':>9} "
        f"{'peak_MB':>7} {'reserved%':>9} {'lease_idle%':>10} {'total wJCT (ms)':>14}",
        flush=True,
    )
    from hare_opt.sim import POLICIES

    for p in policies:  # the semantics concerns gang policies only
        runs: list[tuple[str | None, str, str]] = [
            (None, "this", s)
            for s in (semantics if POLICIES.spec(p).mode == "gang" else semantics[:1])
        ]
        if base:
            runs.insert(0, (base, os.path.basename(base.rstrip("/")) or "base", "per-round"))
        for path, label, sem in runs:
            cmd = [
                sys.executable,
                __file__,
                "--one",
                p,
                "--jobs",
                str(n_jobs),
                "--gpus",
                str(n_gpus),
                "--seed",
                str(seed),
                "--semantics",
                sem,
                "--label",
                label,
            ]
            if reference and not path:
                cmd.append("--reference")
            env = dict(os.environ)
            if path:
                env["PYTHONPATH"] = os.path.abspath(path)
            subprocess.run(cmd, check=False, env=env, cwd=os.path.abspath(path) if path else None)


def compare(seeds: list[int], policies: list[str], semantics: str) -> None:
    """Total weighted JCT (sum w (C - arrival)) of every policy; Hare switching (under
    leases the gang policies: Table 3's default, ``semantics.switching_for``).

    The workloads are those of the simulate cell of ``hare-opt reproduce`` in the
    compressed regime. ``bound`` is sum w (critical path - arrival), a lower bound no
    policy can beat.
    """
    import pandas as pd

    from hare_opt.bounds.combinatorial import critical_path_bound
    from hare_opt.sim import POLICIES, SimulationError
    from hare_opt.sim.semantics import switching_for

    rows = []
    for setting, (cluster, n, gap) in compare_settings().items():
        for seed in seeds:
            specs = paper_jobs(seed, n, mean_interarrival=gap, regime="compressed")
            built = {
                sw: build_instance(specs, cluster, switching=sw, name=f"sim-s{seed}")
                for sw in ("hare", switching_for("gang", semantics, "hare"))
            }
            inst = built["hare"]
            bound = float(critical_path_bound(inst)) - int((inst.weight * inst.release).sum())
            rows.append({"setting": setting, "seed": seed, "policy": "bound", "wjct": bound})
            for p in policies:
                t0 = time.perf_counter()
                try:
                    inst = built[switching_for(POLICIES.spec(p).mode, semantics, "hare")]
                    m = simulate(inst, p, semantics=semantics).metrics
                    value, avg = m["total_weighted_jct"], m["avg_jct"]
                except SimulationError as exc:  # hare-paper refuses large workloads
                    value, avg = None, str(exc)[:60]
                rows.append(
                    {
                        "setting": setting,
                        "seed": seed,
                        "policy": p,
                        "wjct": value,
                        "avg_jct": avg,
                        "wall_s": round(time.perf_counter() - t0, 2),
                    }
                )
                print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    table = df.pivot_table(index="policy", columns=["setting", "seed"], values="wjct")
    hare = table.loc["hare"]
    print("\ntotal weighted JCT (time unit 100 ms; bound: a lower bound):")
    print(table.to_string(float_format=lambda x: f"{x:.0f}"))
    print("\nbest policy per workload:", table.drop(index="bound").idxmin().to_dict())
    print("\nhare's reduction vs each policy, % (mean over seeds; < 0: hare worse):")
    print(((1 - hare / table).T.groupby(level=0).mean().T * 100).round(1).to_string())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, nargs="+", default=[1000, 2000, 5000, 10000])
    ap.add_argument("--policy", default="hare")
    ap.add_argument("--cluster", default=CLUSTER)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compare", action="store_true", help="the policy comparison instead")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--paper", action="store_true", help="every policy, paper regime")
    ap.add_argument("--gpus", type=int, default=160)
    ap.add_argument("--policies", default=None, help="comma-separated (default: all)")
    ap.add_argument(
        "--semantics",
        default="lease,per-round",
        help="comma-separated semantics for --paper (default: both)",
    )
    ap.add_argument(
        "--base",
        default=None,
        metavar="DIR",
        help="--paper: also run the package in DIR (an older checkout)",
    )
    ap.add_argument(
        "--reference",
        action="store_true",
        help="--paper: also run the reference engine, compare the schedules",
    )
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--label", default="this", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        paper_one(
            args.one, args.jobs[0], args.gpus, args.seed, args.semantics, args.label, args.reference
        )
        return
    if args.paper:
        from hare_opt.sim import policy_names

        jobs = args.jobs[0] if args.jobs != [1000, 2000, 5000, 10000] else 300
        paper(
            args.policies.split(",") if args.policies else policy_names(),
            jobs,
            args.gpus,
            args.seed,
            args.semantics.split(","),
            args.base,
            args.reference,
        )
        return
    if args.compare:
        from hare_opt.sim import policy_names

        compare(args.seeds, policy_names(), args.semantics.split(",")[0])
        return
    print(f"policy {args.policy}, cluster {args.cluster}")
    print(
        f"{'jobs':>6} {'tasks':>8} {'events':>8} {'plans':>6} {'sim_s':>7} {'total_s':>7} "
        f"{'events/s':>9} {'wJCT':>12}"
    )
    prev = None
    for n in args.jobs:
        t0 = time.perf_counter()
        inst = workload(n, args.seed, args.cluster)
        run = simulate(inst, args.policy)
        total = time.perf_counter() - t0
        m = run.metrics
        plans = run.result.stats.get("plans", "-")
        growth = (
            "" if prev is None else f"  x{total / prev[1]:.2f} time for x{n / prev[0]:.2f} jobs"
        )
        print(
            f"{n:>6} {inst.num_tasks:>8} {m['events']:>8} {plans!s:>6} {m['wall_s']:>7.1f} "
            f"{total:>7.1f} {m['events_per_s']:>9.0f} {m['total_weighted_jct']:>12}{growth}",
            flush=True,
        )
        prev = (n, total)


if __name__ == "__main__":
    main()
