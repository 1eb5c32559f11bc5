"""Why `hare-paper` as printed gains little from more GPUs (fig14): where its batches run.

For one of fig14's workloads (200 jobs) on two cluster sizes, prints per policy its
total weighted JCT, the processing time it placed against the same batches each on its
job's fastest GPU type ("placed / fastest"), the share of batches per GPU type and how
busy each type was (processing over GPUs x makespan). The workloads and switching
columns are those of the reproduction's cells (``simulate_paper``); seed 1000 is an
evaluation seed, used here to explain a published number, not to tune anything.

    python experiments/why_paper_flat.py                     # seed 1000, 100 and 180 GPUs
    python experiments/why_paper_flat.py --seed 1001 --policies hare-paper,allox

`hare-paper` runs take about 100-120 CPU s each at this size; the others seconds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hare_opt.generators import build_instance, get_regime, paper_jobs, parse_cluster
from hare_opt.model.units import unit_seconds
from hare_opt.sim.policy import policy_mode
from hare_opt.sim.semantics import DEFAULT_SEMANTICS, LEASE_SWITCHING, switching_for
from hare_opt.sim.simulator import simulate

CLUSTERS = ("V100:53,T4:27,K80:7,M60:13", "V100:96,T4:48,K80:12,M60:24")  # 100, 180 GPUs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--clusters", default=";".join(CLUSTERS), help="';'-separated")
    ap.add_argument("--policies", default="hare-paper,hare-paper:step3=start,hare,allox")
    args = ap.parse_args()
    reg = get_regime("paper")
    print(
        f"{'cluster':28s} {'policy':24s} {'wJCT (s)':>11s} {'placed/fastest':>14s}  "
        "batches by type | busy share by type"
    )
    for cluster in args.clusters.split(";"):
        jobs = paper_jobs(
            args.seed,
            200,
            mix=(1, 1, 1, 1),
            arrival="poisson",
            mean_interarrival=reg.mean_interarrival(len(parse_cluster(cluster))),
            max_gpus=8,
            regime=reg,
        )
        for policy in args.policies.split(","):
            column = switching_for(policy_mode(policy), DEFAULT_SEMANTICS, "hare", LEASE_SWITCHING)
            inst = build_instance(jobs, cluster, switching=column, name=f"s{args.seed}", regime=reg)
            t0 = time.process_time()
            run = simulate(inst, policy)
            s = run.result.schedule
            job, gpu = s.job_indices(inst), s.gpu_indices(inst)
            placed = inst.proc[job, gpu]
            by_type = np.where(inst.proc_by_type > 0, inst.proc_by_type, np.iinfo(np.int64).max)
            fastest = by_type.min(axis=1)[job]
            kind = inst.gpu_type_index[gpu]
            span = run.metrics["makespan"]
            share = " ".join(
                f"{t} {100 * np.mean(kind == k):.1f}%" for k, t in enumerate(inst.gpu_types)
            )
            load = [placed[kind == k].sum() / (n * span) for k, n in enumerate(inst.type_count)]
            busy = " ".join(f"{t} {100 * x:.0f}%" for t, x in zip(inst.gpu_types, load))
            sec = run.metrics["total_weighted_jct"] * (unit_seconds(inst.time_unit) or 1.0)
            print(
                f"{cluster:28s} {policy:24s} {sec:11.0f} {placed.sum() / fastest.sum():14.3f}  "
                f"{share} | {busy}  ({time.process_time() - t0:.0f} CPU s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
