"""``hare``/OPT on the tuning instances of the ``ours-quality`` item, step by step.

The instances are ``sweeps.offline.quality_instance(seed, jobs, gpus, tasks)`` at the
item's sizes (4/3/20, 6/4/30, 8/5/40) for tuning seeds (2000-2029 by default; the item
evaluates on 1000-1004, never used here). OPT is CP-SAT's proved optimum (``--opt-time``
seconds on one thread; an instance it does not prove is left out), cached in
``--cache`` (JSON, written through the package's output helper, so a second run costs
seconds). Printed: per instance OPT and ``hare`` with its offline steps switched on one
at a time (``plain``: no slot penalties, no polish; ``penalties``: the penalised search
and the per-job descent; ``all``: also the polish, the default), then the mean ratio to
OPT of each over the instances with a proved optimum.

``python experiments/offline_tuning.py --cache experiments/results/tuning_opt.json``
(the committed cache: seconds; without it, about a minute of CP-SAT per 6- or 8-job
instance).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from hare_opt.io.output import atomic_write_text
from hare_opt.solvers import solve
from hare_opt.sweeps.offline import quality_instance

SIZES = ((4, 3, 20), (6, 4, 30), (8, 5, 40))
STEPS: dict[str, dict[str, Any]] = {
    "plain": {"penalties": False, "polish": False},
    "penalties": {"polish": False},
    "all": {},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(2000, 2030)))
    ap.add_argument("--sizes", nargs="+", default=["4", "6"], choices=["4", "6", "8"])
    ap.add_argument("--opt-time", type=float, default=60.0)
    ap.add_argument("--cache", help="JSON of proved optima to reuse and extend")
    args = ap.parse_args()
    cache: dict[str, int | None] = {}
    if args.cache and Path(args.cache).exists():
        cache = json.loads(Path(args.cache).read_text())
    ratios: dict[str, list[float]] = {s: [] for s in STEPS}
    for jobs, gpus, tasks in (s for s in SIZES if str(s[0]) in args.sizes):
        for seed in args.seeds:
            inst = quality_instance(seed, jobs, gpus, tasks)
            key = f"{seed}-{jobs}"
            if key not in cache:
                res = solve(inst, "cpsat", time_limit=args.opt_time, threads=1)
                cache[key] = int(res.objective) if res.status == "optimal" else None
                if args.cache:
                    atomic_write_text(args.cache, json.dumps(cache, indent=0, sort_keys=True))
            opt = cache[key]
            if opt is None:
                print(f"seed {seed}, {jobs} jobs: no proved optimum, left out", flush=True)
                continue
            got = {s: solve(inst, "hare", **o) for s, o in STEPS.items()}
            for s, r in got.items():
                ratios[s].append(r.objective / opt)
            print(
                f"seed {seed}, {jobs} jobs: OPT {opt}, "
                + ", ".join(f"{s} {r.objective} ({r.objective / opt:.4f})" for s, r in got.items())
                + f"; {got['all'].stats['dispatch']}",
                flush=True,
            )
    n = len(ratios["all"])
    print(
        f"mean hare/OPT on {n} instances with a proved optimum: "
        + ", ".join(f"{s} {np.mean(v):.4f}" for s, v in ratios.items() if v)
    )


if __name__ == "__main__":
    main()
