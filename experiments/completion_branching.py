"""Does branching on completion times lift ``bound --strong``? A best-first branch and
bound over the strong LP (a research measurement; ``hare-opt bound`` does not use it).

    python experiments/completion_branching.py --seeds 3108 --nodes 40

Every schedule completes job j either by t or after it, so splitting a node into
"C_j <= t" and "C_j >= t + 1" (``bounds.strong.strong_lp``'s completion windows) keeps
every schedule in some open node, and the least LP value over the open nodes is a lower
bound. A node branches on the job whose completion share X_j is most spread out (weight
x the time from its first share to its last), at the time its share passes one half
(or halfway through the spread when that is the end of the job's window: both sides
are then narrower than the node by more than a unit).
Prints the bound every five nodes, then hare's gap to it, and the CPU seconds.

Why: the strong LP lets a large job be "complete" a share at a time, while a schedule
completes it at its last task; branching is the textbook way to charge for that.
"""

from __future__ import annotations

import argparse
import heapq
import math
import time

import numpy as np

from hare_opt.bounds.strong import StrongLP, strong_lp
from hare_opt.generators import TESTBED, paper_instance
from hare_opt.model import Instance
from hare_opt.solvers import solve

Branch = dict[int, tuple[float, float]]


def branch_job(inst: Instance, lp: StrongLP, branch: Branch) -> tuple[Branch, Branch] | None:
    """The node's two children: the job whose completion share is most spread, split where
    its share passes one half, kept inside the job's window so that both sides are
    narrower than the node (no node is split into itself)."""
    best: tuple[float, int, int] | None = None
    for j in range(inst.num_jobs):
        lo, hi = branch.get(j, (0.0, math.inf))
        if hi - lo < 1:
            continue
        share = lp.share[j]
        first = lp.ends[np.argmax(share > 1e-6)]
        last = lp.ends[np.argmax(share > 1 - 1e-6)]
        if last - first < 1:
            continue
        # where the share passes one half; if that is the window's end (the share jumps
        # to 1 there), halfway through the spread instead: splitting off the window's
        # last unit would leave the same node less one unit, again and again
        a, b = max(lo, float(first)), min(hi, float(last))
        t_half = float(lp.ends[np.argmax(share >= 0.5)])
        t = int(min(max(math.floor(t_half if a <= t_half < b else (a + b) / 2), lo), hi - 1))
        score = float(inst.weight[j]) * float(last - first)
        if best is None or score > best[0]:
            best = (score, j, t)
    if best is None:
        return None
    _, j, t = best
    lo, hi = branch.get(j, (0.0, math.inf))
    return {**branch, j: (lo, float(t))}, {**branch, j: (float(t + 1), hi)}


def branch_and_bound(inst: Instance, upper: int, nodes: int) -> float:
    """The least open node's LP value after ``nodes`` branchings (a lower bound)."""
    t0 = time.process_time()
    root = strong_lp(inst, upper)
    if root is None:
        raise SystemExit("the root LP has no optimum in time")
    heap: list[tuple[float, int, Branch, StrongLP]] = [(root.value, 0, {}, root)]
    made = 0
    print(f"  root {root.value:.0f}", flush=True)
    for done in range(1, nodes + 1):
        value, _, branch, lp = heap[0]
        pick = branch_job(inst, lp, branch) if math.isfinite(value) else None
        if pick is None:  # nothing left to split: this node's value stands
            break
        heapq.heappop(heap)
        for side in pick:
            child = strong_lp(inst, upper, completion=side)
            if child is None:
                raise SystemExit("a node's LP has no optimum in time")
            made += 1
            heapq.heappush(heap, (child.value, made, side, child))
        if done % 5 == 0:
            print(
                f"  nodes {done}: bound {heap[0][0]:.0f}, {len(heap)} open, "
                f"{time.process_time() - t0:.0f} CPU s",
                flush=True,
            )
    return heap[0][0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", nargs="+", type=int, default=[3108])
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--nodes", type=int, default=40, help="branchings per seed")
    args = ap.parse_args()
    for seed in args.seeds:
        inst = paper_instance(
            seed, args.jobs, TESTBED, switching="hare", regime="compressed", name=f"s{seed}"
        )
        hare = int(solve(inst, "hare").objective)
        t0 = time.process_time()
        bound = branch_and_bound(inst, hare, args.nodes)
        print(
            f"seed {seed}: hare {hare}, bound {bound:.0f}, gap {100 * (hare / bound - 1):.2f}% "
            f"({time.process_time() - t0:.0f} CPU s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
