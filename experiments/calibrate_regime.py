"""Calibrate a paper-like workload regime (hare_opt/generators/regimes.py); prints the values.

    python experiments/calibrate_regime.py              # the paper regime: lengths, arrivals
    python experiments/calibrate_regime.py --regime paper-heavy-sync   # the sensitivity one
    python experiments/calibrate_regime.py --measure    # + baselines' JCTs on seeds 0-2
    python experiments/calibrate_regime.py --exposure 3000-3002   # sync / compute, no policy

No policy is run to choose a value: both targets are properties of the workload.

1. Job length: the Philly duration shape is mapped log-linearly onto [lo, 20 lo]
   batches (the ratio of the compressed regime's 2-40 rounds); lo is chosen so that,
   pooled over the calibration seeds, 90% of testbed jobs would finish within 25 min
   if each ran alone (``isolated_jct``): Fig. 13's 25-min mark then measures what
   contention costs each policy (the paper's Hare has 90.5% of jobs within it).
2. Arrivals: the mean inter-arrival is chosen so that the mean ``isolated_demand``
   (how crowded an arriving job finds the GPUs it runs best on) over the calibration
   seeds is 1.0 at the least contended setting of each family: the testbed with 40
   jobs, and the largest cluster of Fig. 14 (180 GPUs, 200 jobs) for every large
   cluster (one rate: Figs. 14-15 keep the workload and vary the cluster or the count).

Calibration seeds are 100-119; the reproduction evaluates seeds 1000-1009; `--measure` runs
the development seeds 0-2 and `--exposure` any seeds given (no policy).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from hare_opt.generators import TESTBED, build_instance, paper_jobs
from hare_opt.generators.regimes import REGIMES, isolated_demand, isolated_jct, sync_exposure

SEEDS = range(100, 120)
LIMIT_MIN = 25.0
SHARE = 0.90
DEMAND = 1.0


def cluster_of(n_gpus: int) -> str:
    from hare_opt.sweeps.items import cluster_of as of

    return of(n_gpus)


def instance(seed: int, n: int, cluster: str, gap: float, lo: int, regime: str):
    jobs = paper_jobs(seed, n, mean_interarrival=gap, rounds=(lo, 20 * lo), regime=regime)
    return build_instance(jobs, cluster, regime=regime)


def isolated_share(lo: int, regime: str) -> float:
    iso = np.concatenate([isolated_jct(instance(s, 40, TESTBED, 30.0, lo, regime)) for s in SEEDS])
    return float((iso <= LIMIT_MIN * 60_000).mean())


def mean_demand(n: int, cluster: str, gap: float, lo: int, regime: str) -> float:
    return float(
        np.mean([isolated_demand(instance(s, n, cluster, gap, lo, regime)) for s in SEEDS])
    )


def bisect(f, lo: float, hi: float, *, geometric: bool, steps: int = 30) -> float:
    """x in [lo, hi] with f(x) = 0 for f decreasing in x."""
    for _ in range(steps):
        mid = math.sqrt(lo * hi) if geometric else (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


def two_digits(x: float) -> float:
    e = math.floor(math.log10(abs(x))) - 1
    return round(x / 10**e) * 10**e


def seed_range(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--regime",
        default="paper",
        choices=[r for r in REGIMES if REGIMES[r].iters_per_task == 1],
        help="the regime whose syncs the calibration uses (default paper)",
    )
    ap.add_argument(
        "--measure",
        action="store_true",
        help="simulate the baselines on seeds 0-2 with the committed values",
    )
    ap.add_argument(
        "--exposure",
        type=seed_range,
        metavar="SEEDS",
        help="only print the workloads' sync / compute (e.g. 3000-3002)",
    )
    args = ap.parse_args()
    regime = args.regime
    if args.exposure:
        exposure(regime, args.exposure)
        return
    lo = int(
        two_digits(
            bisect(
                lambda b: isolated_share(int(b), regime) - SHARE, 50, 5000, geometric=True, steps=20
            )
        )
    )
    print(
        f"{regime}: job length: [{lo}, {20 * lo}] batches; isolated share within 25 min "
        f"{isolated_share(lo, regime):.3f} (target {SHARE})"
    )
    tb = two_digits(
        bisect(
            lambda g: mean_demand(40, TESTBED, g, lo, regime) - DEMAND,
            1,
            1000,
            geometric=True,
            steps=16,
        )
    )
    print(
        f"testbed mean inter-arrival: {tb:g} s; mean demand "
        f"{mean_demand(40, TESTBED, tb, lo, regime):.2f} (target {DEMAND})"
    )
    big = two_digits(
        bisect(
            lambda g: mean_demand(200, cluster_of(180), g, lo, regime) - DEMAND,
            0.05,
            100,
            geometric=True,
            steps=16,
        )
    )
    print(
        f"large-cluster mean inter-arrival: {big:g} s; mean demand at 180 GPUs, 200 jobs "
        f"{mean_demand(200, cluster_of(180), big, lo, regime):.2f} (target {DEMAND})"
    )
    reg = REGIMES[regime]
    print(
        f"\ncommitted: rounds {reg.rounds}, testbed gap {reg.testbed_gap_s} s, "
        f"large gap {reg.large_gap_s} s"
    )
    print("mean isolated demand of the reproduction's settings (committed values):")
    settings = (
        [("testbed, 40 jobs", 40, TESTBED)]
        + [(f"{g} GPUs, 200 jobs", 200, cluster_of(g)) for g in (100, 120, 140, 160, 180)]
        + [(f"160 GPUs, {n} jobs", n, cluster_of(160)) for n in (100, 150, 250, 300)]
    )
    for label, n, cluster in settings:
        gap = reg.mean_interarrival(sum(int(c.split(":")[1]) for c in cluster.split(",")))
        demand = mean_demand(n, cluster, gap, reg.rounds[0], regime)
        print(f"  {label:18s} gap {gap:5g} s  demand {demand:.2f}")
    if args.measure:
        measure(regime)


def exposure(regime: str, seeds: list[int]) -> None:
    """Sync / compute of the committed regime's workloads (``regimes.sync_exposure``) on
    the testbed (40 jobs) and 160 GPUs (200 jobs): no policy is run."""
    reg = REGIMES[regime]
    print(
        f"{regime}: per seed, work-weighted sync / compute on V100 and on each job's "
        "fastest type; share of jobs whose sync is longer than their task; 1-GPU jobs"
    )
    for label, n, cluster in (
        ("testbed, 40 jobs", 40, TESTBED),
        ("160 GPUs, 200 jobs", 200, cluster_of(160)),
    ):
        gap = reg.mean_interarrival(sum(int(c.split(":")[1]) for c in cluster.split(",")))
        for seed in seeds:
            inst = instance(seed, n, cluster, gap, reg.rounds[0], regime)
            e = sync_exposure(inst)
            print(
                f"  {label:18s} seed {seed}: ratio V100 {e['ratio:V100']:.3f} fastest "
                f"{e['ratio:fastest']:.3f}; longer V100 {100 * e['longer:V100']:.1f}% "
                f"fastest {100 * e['longer:fastest']:.1f}%; 1-GPU jobs "
                f"{int((inst.tasks_per_round == 1).sum())} of {n}"
            )


def measure(regime: str) -> None:
    """JCT scale of the baselines on the testbed (development seeds 0-2), committed regime."""
    from hare_opt.sweeps.simulate import simulate_paper

    for seed in (0, 1, 2):
        rows = simulate_paper(
            seed=seed,
            policies=["allox", "sched-homo", "gavel-fifo", "srtf"],
            keep_jct=True,
            regime=regime,
        )
        for r in rows:
            jct = np.array(r["jct_s"]) / 60
            print(
                f"seed {seed} {r['policy']:10s} median {np.median(jct):5.1f} min  "
                f"p90 {np.percentile(jct, 90):5.1f} min  within 25 min "
                f"{100 * (jct <= 25).mean():5.1f}%  tasks {r['tasks']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
