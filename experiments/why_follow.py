"""Why a plan follower's rule matters: where a strict follower leaves GPUs idle.

    python experiments/why_follow.py                       # testbed, seeds 3000-3002
    python experiments/why_follow.py --policies hare-paper --seeds 3000

A strict follower (``follow="strict"``) serves each GPU's queue head only. After
every decision this script looks at each idle GPU and at why its head did not
start: its planned time has not come (``planned``), its job still has tasks of an
earlier round queued on another type (``blocked``), or the queue is empty (``empty``);
the idle GPU-time until the next decision is booked to that reason, as a share of the
run's processing time. GPU time held for a task that waits for its barrier is the
``reserved`` idle the simulator reports. A work-conserving follower may use the first
two kinds of idle time (it takes a later ready entry); ``empty`` is idle for both. The
run is the reference engine's (the policy's ``_dispatch`` is wrapped), so it is slower
than the reproduction's; the schedule is the same.
"""

from __future__ import annotations

import argparse
import time

from hare_opt.generators import TESTBED, get_regime, paper_instance
from hare_opt.sim import simulate
from hare_opt.sim.policy import get_policy

REASONS = ("planned", "blocked", "empty")


def instrument(policy):
    """Wrap ``policy._dispatch`` to book idle GPU-time by the reason each head waits."""
    booked = dict.fromkeys(REASONS, 0.0)
    last: dict[str, object] = {"t": None, "idle": None}
    inner = policy._dispatch

    def dispatch(sim, work):
        now = sim.now
        if last["t"] is not None:
            for reason, gpus in last["idle"].items():
                booked[reason] += gpus * (now - last["t"])
        inner(sim, work)
        free, state = sim.state.free, sim.state
        idle = dict.fromkeys(REASONS, 0)
        for g in (free <= now).nonzero()[0].tolist():
            # the first entry that is not stale (read only: the run must not change)
            head = next((e for e in policy.queues[g] if int(state.round[e[1]]) <= e[2]), None)
            if head is None:
                idle["empty"] += 1
            elif int(state.round[head[1]]) < head[2]:
                idle["blocked"] += 1
            else:
                idle["planned"] += 1
        last["t"], last["idle"] = now, idle

    policy._dispatch = dispatch
    return booked


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--policies", default="hare-paper,hare-paper:step3=start,hare,sched-homo:follow=strict"
    )
    ap.add_argument("--seeds", default="3000-3002", help="LO-HI")
    ap.add_argument("--regime", default="paper")
    args = ap.parse_args()
    lo, _, hi = args.seeds.partition("-")
    reg = get_regime(args.regime)
    print(
        "policy, seed: idle GPU-time while a type's head waits, % of processing time "
        f"(testbed, 40 jobs, {args.regime} regime)"
    )
    for seed in range(int(lo), int(hi or lo) + 1):
        inst = paper_instance(
            seed, 40, TESTBED, regime=args.regime, mean_interarrival=reg.testbed_gap_s
        )
        for name in args.policies.split(","):
            pol = get_policy(name)
            booked = instrument(pol)
            t0 = time.process_time()
            run = simulate(inst, pol, engine="python")
            s = run.result.schedule
            proc = float((s.end - s.start).sum())
            parts = ", ".join(f"{r} {100 * booked[r] / proc:.1f}" for r in REASONS)
            print(
                f"  {name:26s} {seed}: {parts}; reserved "
                f"{100 * run.metrics['reserved_idle_share']:.1f}; total weighted JCT "
                f"{run.metrics['total_weighted_jct'] / 1e3:.1f} s "
                f"({time.process_time() - t0:.0f} CPU s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
