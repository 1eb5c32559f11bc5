"""Benchmark of the simulator with the ``hare`` policy: wall time, events/s, growth with jobs.

    python experiments/bench_sim.py                  # 1k, 2k, 5k, 10k jobs on 512 GPUs
    python experiments/bench_sim.py --jobs 1000 2000 # a subset
    python experiments/bench_sim.py --compare        # every policy on fig12's workloads:
                                                     # testbed 40 jobs, 160 GPUs 200 jobs
    python experiments/bench_sim.py --compare --seeds 0 1 2 3 4 5   # more seeds

Workload: paper-like jobs (hare_opt.generators.paper_jobs, Poisson arrivals,
Hare switching) on a 512-GPU cluster of the testbed's four types; the mean
inter-arrival is the paper-like 30 s scaled by 15/512 GPUs, so the load per
GPU stays that of the 15-GPU testbed. Target: 10,000 jobs in <= 120 s on 2 cores.
Prints one line per size; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import time

from hare_opt.generators import build_instance, paper_jobs, parse_cluster
from hare_opt.sim import simulate

CLUSTER = "V100:192,T4:128,K80:96,M60:96"


def workload(n_jobs: int, seed: int, cluster: str = CLUSTER):
    gpus = parse_cluster(cluster)
    specs = paper_jobs(seed, n_jobs, mean_interarrival=30.0 * 15 / len(gpus))
    return build_instance(specs, gpus, switching="hare", name=f"bench-{n_jobs}")


def compare_settings() -> dict[str, tuple[str, int, float]]:
    """name: (cluster, jobs, mean inter-arrival s), as ``hare-opt reproduce`` fig12 has them:
    the testbed, and 160 GPUs in its type proportions with arrivals 15/160 as far apart."""
    from hare_opt.sweeps.items import TESTBED, TESTBED_GAP_S, cluster_of, gap_for

    return {"testbed-40": (TESTBED, 40, TESTBED_GAP_S),
            "160gpu-200": (cluster_of(160), 200, gap_for(160))}


def compare(seeds: list[int], policies: list[str]) -> None:
    """Total weighted JCT (sum w (C - arrival)) of every policy; Hare switching.

    The workloads are those of the simulate cell of ``hare-opt reproduce``
    (hare_opt.sweeps.cells.simulate_paper, default arguments). ``bound`` is
    sum w (critical path - arrival), a lower bound no policy can beat.
    """
    import pandas as pd

    from hare_opt.bounds.combinatorial import critical_path_bound
    from hare_opt.sim import SimulationError

    rows = []
    for setting, (cluster, n, gap) in compare_settings().items():
        for seed in seeds:
            specs = paper_jobs(seed, n, mean_interarrival=gap)
            inst = build_instance(specs, cluster, switching="hare", name=f"sim-s{seed}")
            bound = float(critical_path_bound(inst)) - int((inst.weight * inst.release).sum())
            rows.append({"setting": setting, "seed": seed, "policy": "bound", "wjct": bound})
            for p in policies:
                t0 = time.perf_counter()
                try:
                    m = simulate(inst, p).metrics
                    value, avg = m["total_weighted_jct"], m["avg_jct"]
                except SimulationError as exc:  # hare-paper refuses large workloads
                    value, avg = None, str(exc)[:60]
                rows.append({"setting": setting, "seed": seed, "policy": p, "wjct": value,
                             "avg_jct": avg, "wall_s": round(time.perf_counter() - t0, 2)})
                print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    table = df.pivot_table(index="policy", columns=["setting", "seed"], values="wjct")
    hare = table.loc["hare"]
    print("\ntotal weighted JCT (time unit 100 ms; bound: a lower bound):")
    print(table.to_string(float_format=lambda x: f"{x:.0f}"))
    print("\nbest policy per workload:",
          table.drop(index="bound").idxmin().to_dict())
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
    args = ap.parse_args()
    if args.compare:
        from hare_opt.sim import policy_names

        compare(args.seeds, policy_names())
        return
    print(f"policy {args.policy}, cluster {args.cluster}")
    print(f"{'jobs':>6} {'tasks':>8} {'events':>8} {'plans':>6} {'sim_s':>7} {'total_s':>7} "
          f"{'events/s':>9} {'wJCT':>12}")
    prev = None
    for n in args.jobs:
        t0 = time.perf_counter()
        inst = workload(n, args.seed, args.cluster)
        run = simulate(inst, args.policy)
        total = time.perf_counter() - t0
        m = run.metrics
        plans = run.result.stats.get("plans", "-")
        growth = ("" if prev is None
                  else f"  x{total / prev[1]:.2f} time for x{n / prev[0]:.2f} jobs")
        print(f"{n:>6} {inst.num_tasks:>8} {m['events']:>8} {plans!s:>6} {m['wall_s']:>7.1f} "
              f"{total:>7.1f} {m['events_per_s']:>9.0f} {m['total_weighted_jct']:>12}{growth}",
              flush=True)
        prev = (n, total)


if __name__ == "__main__":
    main()
