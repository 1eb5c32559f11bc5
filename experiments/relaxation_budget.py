"""Does `hare-paper`'s result hinge on the budget of its relaxation's search (step 1)?

The planner's step 1 is a local search over the relaxation's assignments, each
evaluated exactly, run until no move improves (a local optimum); ``search_evals`` only
caps it (docs/simulator.md). This script reruns both readings of step 3 with the cap
set lower and higher on the same workloads and prints, per seed, the total weighted JCT
against the default cap, how many plans the cap cut short, the most evaluations a plan
used, and the CPU seconds a run costs.

The workloads use seeds 3000-... (neither evaluation seeds 1000-1009 nor the tuning and
calibration seeds): this measures a knob, it does not pick one.

    python experiments/relaxation_budget.py                          # testbed, 5 seeds
    python experiments/relaxation_budget.py --gpus 160 --jobs 300 --seeds 2
"""

from __future__ import annotations

import argparse
import time

from hare_opt.generators.clusters import cluster_of
from hare_opt.heuristics.relaxation_points import SEARCH_EVALS
from hare_opt.sweeps.items import TESTBED
from hare_opt.sweeps.simulate import simulate_paper

READINGS = ("hare-paper", "hare-paper:step3=start")
#: Caps of the search, the default among them; every change is read against the default.
BUDGETS = (20, 200, 2000, SEARCH_EVALS, 10 * SEARCH_EVALS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds 3000, 3001, ...")
    ap.add_argument("--gpus", type=int, default=15, help="15: the testbed; else cluster_of")
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    cluster = TESTBED if args.gpus == 15 else cluster_of(args.gpus)
    print(f"{args.jobs} jobs on {cluster}; default cap {SEARCH_EVALS} evaluations a plan")
    print(
        f"{'seed':>5s} {'reading':24s} {'cap':>6s} {'total wJCT, s':>14s} {'vs default':>10s} "
        f"{'capped plans':>12s} {'evals max':>9s} {'CPU s':>7s}"
    )
    for seed in range(3000, 3000 + args.seeds):
        for reading in READINGS:
            rows = {}
            for cap in budgets:
                t0 = time.process_time()
                row = simulate_paper(
                    policies=[reading],
                    seed=seed,
                    n_jobs=args.jobs,
                    cluster=cluster,
                    policy_options={reading: {"search_evals": cap}},
                )[0]
                rows[cap] = (row, time.process_time() - t0)
            base = rows[SEARCH_EVALS][0]["total_weighted_jct_s"] if SEARCH_EVALS in rows else None
            for cap, (row, cpu) in rows.items():
                w = row["total_weighted_jct_s"]
                change = f"{100 * (w / base - 1):+9.2f}%" if base else "-"
                print(
                    f"{seed:5d} {reading:24s} {cap:6d} {w:14.1f} {change:>10s} "
                    f"{row.get('search_capped', 0):5d} of {row['plans']:<4d} "
                    f"{row.get('search_evals_max', 0):9d} {cpu:7.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
