"""Does the simulator execute `hare`'s plan as planned? Switches and objective, plan vs run.

    python experiments/follow_by_gpu.py                          # seed 1000, default switching
    python experiments/follow_by_gpu.py --seed 3004 --switching hare

One paper-regime workload (40 jobs, the testbed) twice. *All at 0*: every job
released at time 0, so `hare` makes one plan and only follows it; the plan's own
objective and GPU switches (a task whose GPU ran another job just before it)
against the simulator's run of it. *Arrivals*: the workload as generated, `hare` and
the baselines named by ``--policies`` (total weighted JCT, seconds). A strict follower
executes the plan GPU by GPU; the gap left between plan and run is a setup the plan
starts before the job's previous round is fully started, which the simulator cannot
(docs/simulator.md, the strict rule).
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from hare_opt.checker import check
from hare_opt.generators import workload_instance
from hare_opt.model import Instance, Schedule
from hare_opt.sim import simulate
from hare_opt.sim.workload import simulate_workload
from hare_opt.solvers.planners import get_planner


def switches(schedule: Schedule) -> int:
    """Tasks whose GPU ran another job just before."""
    order = np.lexsort((schedule.start, schedule.gpu))
    gpu, job = schedule.gpu[order], schedule.job[order]
    return int(((gpu[1:] == gpu[:-1]) & (job[1:] != job[:-1])).sum())


def jct_s(inst: Instance, objective: float) -> float:
    """Total weighted JCT in seconds from sum w C (ms)."""
    return (objective - float(inst.weight @ inst.release)) / 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--switching", default="default")
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--policies", default="hare,allox,hlas,srtf")
    a = ap.parse_args()
    inst = workload_instance(
        "paper", seed=a.seed, n_jobs=a.jobs, cluster="testbed", switching=a.switching,
        regime="paper",
    )  # fmt: skip
    at0 = inst.with_jobs([dataclasses.replace(j, release=0) for j in inst.jobs])
    t = time.process_time()
    plan = get_planner("hare").plan(at0, None, time.perf_counter() + 600)
    report = check(at0, plan)
    assert report.feasible and report.objective is not None
    run = simulate(at0, "hare")
    print(f"seed {a.seed}, {a.switching} switching, {inst.num_tasks} tasks, all released at 0")
    print(f"  plan: {report.objective / 1000:,.0f} s (sum w C), {switches(plan):,} switches")
    print(
        f"  run:  {run.result.objective / 1000:,.0f} s (sum w C), "
        f"{switches(run.result.schedule):,} switches"
    )
    print("arrivals, total weighted JCT:")
    for r in simulate_workload(
        "paper", a.policies.split(","), seed=a.seed, n_jobs=a.jobs, cluster="testbed",
        switching=a.switching, regime="paper",
    ):  # fmt: skip
        print(f"  {r.policy:12s} {jct_s(r.instance, r.result.objective):>12,.0f} s")
    print(f"({time.process_time() - t:.1f} CPU s)")


if __name__ == "__main__":
    main()
