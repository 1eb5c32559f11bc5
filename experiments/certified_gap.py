"""Certified gap of ``hare`` on paper-like testbed instances: its objective over the highest
proved lower bound, ``hare-opt bound --strong`` included.

Each instance is what ``hare-opt generate paper --seed S --jobs N`` writes (the compressed
regime, the testbed, Hare switching; ``--regime paper`` for the paper regime); the gap is
``solve --solver hare``'s objective / ``bound --strong``'s ``lower_bound`` - 1, and the
line says which bound gave it (``lower_bound_from``). Prints one line per seed, then the
mean and the worst gap, and the CPU seconds of the solve and of the bounds.

``python experiments/certified_gap.py --seeds 3000 3001 3002 3003 3004`` (about 10 CPU s
a seed). ``--improve S`` also runs ``lns`` for S seconds from hare's schedule (one worker,
as ``solve --solver lns --start``) and prints that schedule's gap to the same bound: how
much of hare's gap a better schedule closes, and how much lies between the best schedule
found and the bound.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hare_opt.bounds import all_bounds, lower_bound
from hare_opt.cli.commands.bound import strong
from hare_opt.generators import TESTBED, paper_instance
from hare_opt.solvers import solve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(3000, 3005)))
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--regime", default="compressed", choices=("compressed", "paper"))
    ap.add_argument("--improve", type=float, default=0.0, metavar="SECONDS")
    args = ap.parse_args()
    gaps, better = [], []
    for seed in args.seeds:
        # ``hare-opt generate paper``'s defaults: the testbed, Hare switching
        inst = paper_instance(
            seed, args.jobs, TESTBED, switching="hare", regime=args.regime, name=f"paper-s{seed}"
        )
        t0 = time.process_time()
        found = solve(inst, "hare")
        hare = found.objective
        t1 = time.process_time()
        bounds = all_bounds(inst)
        value = strong(inst)
        if value is not None:
            bounds["strong"] = value
        lb = lower_bound(inst, bounds=bounds)
        source = max(bounds, key=lambda k: lower_bound(inst, bounds={k: bounds[k]}))
        gaps.append(hare / lb - 1)
        print(
            f"seed {seed}: {inst.num_tasks} tasks, hare {hare:.0f}, lower bound {lb:.0f} "
            f"({source}), gap {100 * gaps[-1]:.2f}% (solve {t1 - t0:.2f} CPU s, bounds "
            f"{time.process_time() - t1:.1f} CPU s)",
            flush=True,
        )
        if args.improve > 0:
            lns = solve(inst, "lns", hint=found, time_limit=args.improve, threads=1).objective
            better.append(lns / lb - 1)
            print(f"  lns {args.improve:g} s from it: {lns:.0f}, gap {100 * better[-1]:.2f}%")
    print(f"mean gap {100 * np.mean(gaps):.2f}%, worst {100 * max(gaps):.2f}%")
    if better:
        print(f"after lns: mean gap {100 * np.mean(better):.2f}%, worst {100 * max(better):.2f}%")


if __name__ == "__main__":
    main()
