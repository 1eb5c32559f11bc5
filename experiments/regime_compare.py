"""Every policy on the reproduction's workloads in two regimes, side by side (prints tables).

    python experiments/regime_compare.py                       # testbed, seeds 3000-3002
    python experiments/regime_compare.py --setting 160 --policies "hare;sched-homo"
    python experiments/regime_compare.py --out rows.csv        # also the rows

A run is the reproduction's simulate cell (``sweeps.simulate.simulate_cell``, leases for
the gang baselines), the same run as ``hare-opt simulate --workload paper --regime R
--jobs N --cluster C --seed S --policies P``. Seeds 3000-3002 are neither evaluation
(1000-1009), tuning (0-5) nor calibration (100-119) seeds. Per run: total weighted JCT,
the share of processing time GPUs were held idle ahead of a task (reserved idle), and the
CPU seconds of the run in this process. The workloads' sync / compute is printed by
``experiments/calibrate_regime.py --exposure``.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from hare_opt.generators import TESTBED
from hare_opt.generators.clusters import cluster_of
from hare_opt.io import atomic_write_text
from hare_opt.sweeps.simulate import simulate_cell

POLICIES = (
    "hare;hare-paper;hare-paper:step3=start;allox;sched-homo;sched-homo:follow=strict;"
    "srtf;gavel-fifo;tiresias;gavel-las;hlas"
)
SETTINGS = {"testbed": (40, TESTBED), "160": (200, cluster_of(160))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--setting",
        choices=tuple(SETTINGS),
        default="testbed",
        help="testbed (40 jobs) or 160 (GPUs, 200 jobs)",
    )
    ap.add_argument("--regimes", default="paper-heavy-sync,paper")
    ap.add_argument("--seeds", default="3000-3002", help="LO-HI")
    ap.add_argument(
        "--policies", default=POLICIES, help="';'-separated, variants as NAME:KEY=VALUE[,KEY=VALUE]"
    )
    ap.add_argument("--out", help="write the rows (CSV)")
    args = ap.parse_args()
    lo, _, hi = args.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    n_jobs, cluster = SETTINGS[args.setting]
    rows = []
    for regime in args.regimes.split(","):
        for seed in seeds:
            for policy in args.policies.split(";"):
                t0 = time.process_time()
                [row] = simulate_cell(
                    seed=seed, policy=policy, n_jobs=n_jobs, cluster=cluster, regime=regime
                )
                cpu = time.process_time() - t0
                rows.append(
                    {
                        "regime": regime,
                        "setting": args.setting,
                        "seed": seed,
                        "policy": policy,
                        "twjct_ks": row["total_weighted_jct_s"] / 1e3,
                        "reserved_idle_pct": 100 * row["reserved_idle_share"],
                        "cpu_s": cpu,
                    }
                )
                print(
                    ",".join(
                        f"{v:.4f}" if isinstance(v, float) else str(v) for v in rows[-1].values()
                    ),
                    flush=True,
                )
    df = pd.DataFrame(rows)
    if args.out:
        atomic_write_text(args.out, df.to_csv(index=False))
    order = list(dict.fromkeys(df.policy))
    for col, fmt in (("twjct_ks", "{:.1f}"), ("reserved_idle_pct", "{:.1f}")):
        table = df.pivot_table(index="policy", columns=["regime", "seed"], values=col)
        table = table.loc[order]
        print(f"\n{col} ({args.setting}):")
        print(table.to_string(float_format=lambda x, f=fmt: f.format(x)))


if __name__ == "__main__":
    main()
