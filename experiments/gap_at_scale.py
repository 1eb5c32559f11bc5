"""Where hare's certified gap on paper-like instances comes from: the schedule or the bound.

At paper scale (10^5 tasks) only ``hare`` and the bounds run, so a gap of hare over
``bound --strong`` cannot tell a weak schedule from a weak bound. This script shrinks each
instance with ``heuristics.paper_planning.coarsen`` (every b rounds of a job become one
round, times in a unit b times longer: the same jobs, cluster, arrival pattern and
contention, b times fewer tasks) until the anytime solvers can search it, and prints,
per seed and factor b:

* the full instance: hare's objective, the strong bound, the gap;
* the coarse copy: hare's gap to the copy's strong bound (the same figure if the
  shrinking preserves the structure: it is the check that the result does not hinge on
  b), and how far hare is above the best schedule each other solver finds in the time
  limit (lns, cpsat by default), with the proved bound CP-SAT reports;
* optionally (``--order-search``) hare's full search run on the coarse copy, its best
  (dispatcher, order) then replayed on the full instance: whether searching orders, which
  the full instance's budget does not allow (it has more rounds than hare's budget), would
  have helped.

If hare is within a fraction of a percent of every schedule the exact solvers' searches
find while the gap to the bound stays, the gap is the bound's.

``python experiments/gap_at_scale.py --seeds 3000 3001 --factors 100 1000 --time-limit 60``
(about 3 CPU min a seed and factor with both solvers).
"""

from __future__ import annotations

import argparse
import time

from hare_opt.bounds.strong import strong_bound
from hare_opt.generators import TESTBED, paper_instance
from hare_opt.heuristics.hare import dispatch, search_hare
from hare_opt.heuristics.paper_planning import coarsen
from hare_opt.model import Instance
from hare_opt.solvers import solve


def _gap(value: float, bound: float | None) -> str:
    return "n/a" if not bound else f"{100 * (value / bound - 1):.2f}%"


def one(
    inst: Instance, hare_full: int, b: int, solvers: list[str], limit: float, order_search: bool
) -> None:
    """Print the coarse copy's line for factor b (``hare_full``: hare's objective on ``inst``)."""
    small = coarsen(inst, b)
    hare = solve(small, "hare")
    bound = strong_bound(small, int(hare.objective), time_limit=None)
    line = (
        f"  b={b}: {small.num_tasks} tasks, hare {hare.objective:.0f} "
        f"({hare.stats['dispatch']}), gap to strong {_gap(hare.objective, bound)}"
    )
    for name in solvers:
        res = solve(small, name, time_limit=limit)
        proved = "" if res.lower_bound is None else f", its bound {res.lower_bound:.0f}"
        line += (
            f"; {name} {limit:.0f} s: {res.objective:.0f} ({res.status.value}{proved}), "
            f"hare {_gap(hare.objective, res.objective)} above it"
        )
    print(line, flush=True)
    if order_search:
        t0 = time.process_time()
        found = search_hare(small, budget=10**9, deadline=time.perf_counter() + limit)
        full = dispatch(inst, found.best.mode, found.best.order, found.best.penalty).objective()
        print(
            f"  b={b} order search ({found.evaluations} schedules, {found.best.mode}) replayed "
            f"on the full instance: {full:.0f}, {_gap(full, hare_full)} vs hare's "
            f"({time.process_time() - t0:.0f} CPU s)",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(3000, 3005)))
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--regime", default="paper", choices=("compressed", "paper"))
    ap.add_argument("--factors", nargs="+", type=int, default=[100, 1000])
    ap.add_argument("--solvers", nargs="*", default=["lns", "cpsat"])
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--order-search", action="store_true")
    args = ap.parse_args()
    for seed in args.seeds:
        inst = paper_instance(
            seed, args.jobs, TESTBED, switching="hare", regime=args.regime, name=f"paper-s{seed}"
        )
        hare = int(solve(inst, "hare").objective)
        bound = strong_bound(inst, int(hare), time_limit=None)
        print(
            f"seed {seed} ({args.regime}): {inst.num_tasks} tasks, hare {hare:.0f}, "
            f"strong {bound:.0f}, gap {_gap(hare, bound)}",
            flush=True,
        )
        for b in args.factors:
            one(inst, hare, b, args.solvers, args.time_limit, args.order_search)


if __name__ == "__main__":
    main()
