"""Proved optima of small paper-like instances: how far are hare and the bounds from OPT?

    python experiments/small_optima.py --jobs 8 --seeds $(seq 5200 5211)
    python experiments/small_optima.py --check 20      # pool=types against pool=gpus
    python experiments/small_optima.py --files instances/paper/paper-0[0124].json --colgen 0
    python experiments/small_optima.py --pools --seconds 30 --files instances/small/small-*.json

On 40-job paper-like instances nothing proves the optimum, so a certified gap (hare over the
highest bound) cannot say whether the schedule or the bound is loose. Smaller instances of
the same generator (``hare-opt generate paper --jobs N --seed S``: compressed regime,
testbed, Hare switching) often can be solved by `solve --solver cpsat` with its pooled
model (``pool=types``, the default when no job has a switching setup, as here): a GPU
type per task and one cumulative per type, so the symmetry of eight identical V100s that
kept the per-GPU model (``pool=gpus``) from proving seed 5208 at 8 jobs (50 tasks) in
600 s is gone (docs/formulations.md). It proves that seed in seconds.

Per seed it prints hare's objective, the optimum (or CP-SAT's best and bound when the time
runs out), `bound --strong`'s bound, the ceiling of the time-indexed relaxation at full
resolution (`lagrangian_bound.py --method colgen --capped`, grid 1: no bound of that kind
proves more), and hare / OPT and OPT / bound. ``--check N``: on N small random instances
without setups (types of several GPUs, syncs, releases) the pooled model's proved optimum
equals the per-GPU model's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from hare_opt.model import Instance, Result
from hare_opt.solvers import solve


def _colgen():
    """``lagrangian_bound.colgen_bound`` (a sibling script, not a package module)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from lagrangian_bound import colgen_bound

    return colgen_bound


def pooled(inst: Instance, hint: Result | None, seconds: float, workers: int, pool: str = "types"):
    """``solve --solver cpsat --option pool=types`` (started from ``hint``): the solver's
    checked result."""
    return solve(
        inst, "cpsat", hint=hint, time_limit=seconds, threads=workers, special=False, pool=pool
    )


def check_instance(seed: int) -> Instance:
    """A small random instance of ``--check`` (and of the tests): no setups (the
    generator's default), syncs, releases, and types with two or more GPUs."""
    from hare_opt.generators import random_instance

    return random_instance(
        seed,
        n_jobs=4,
        n_gpus=5,
        rounds=(1, 3),
        tasks_per_round=(1, 4),
        sync=(0, 3),
        release_spread=10,
    )


def _check(count: int, seconds: float, workers: int) -> None:
    agree = 0
    for seed in range(count):
        inst = check_instance(seed)
        ref = pooled(inst, None, seconds, workers, pool="gpus")
        got = pooled(inst, None, seconds, workers)
        if ref.status.value != "optimal" or got.status.value != "optimal":
            print(f"random {seed}: not both proved ({ref.status.value}, {got.status.value})")
            continue
        assert got.objective == ref.objective, f"random {seed}: {got.objective} != {ref.objective}"
        agree += 1
        print(f"random {seed}: OPT {got.objective:.0f} (both)", flush=True)
    print(f"{agree} of {count} proved by both, all equal")


def _pools(files: list[str], seconds: float, workers: int) -> None:
    """Each file, setups removed, solved by both models: status, objective, bound, time."""
    from hare_opt.io import load_instance

    for f in files:
        inst = load_instance(f).without_setups()
        row = [f"{Path(f).name}: {inst.num_tasks} tasks, {inst.num_gpus} GPUs"]
        for pool in ("gpus", "types"):
            r = pooled(inst, None, seconds, workers, pool=pool)
            row.append(
                f"{pool} {r.status.value} {r.objective:.0f} (bound {r.lower_bound:.0f}, "
                f"{r.runtime_s:.1f} s)"
            )
        print(" | ".join(row), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--seeds", nargs="*", type=int, default=list(range(5200, 5212)))
    ap.add_argument("--files", nargs="*", default=[], help="instance files instead of seeds")
    ap.add_argument("--seconds", type=float, default=120.0, help="CP-SAT's limit per instance")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--colgen", type=int, default=300, help="pricing rounds (0: skip)")
    ap.add_argument("--check", type=int, default=0, help="small random instances vs cpsat")
    ap.add_argument(
        "--pools", action="store_true", help="--files without setups, by both cpsat models"
    )
    a = ap.parse_args()
    if a.pools:
        _pools(a.files, a.seconds, a.workers)
        return
    if a.check:
        _check(a.check, a.seconds, a.workers)
        return
    from hare_opt.cli.commands.bound import strong
    from hare_opt.generators import TESTBED, paper_instance
    from hare_opt.io import load_instance

    colgen = _colgen() if a.colgen else None
    ratios, loose = [], []
    cases = [(f, lambda f=f: load_instance(f)) for f in a.files] or [
        (
            f"seed {seed}",
            lambda seed=seed: paper_instance(
                seed, a.jobs, TESTBED, switching="hare", regime="compressed"
            ),
        )
        for seed in a.seeds
    ]
    for label, make in cases:
        inst = make()
        if (inst.overhead > 0).any():
            print(f"{label}: has switching setups, which the model does not cover; skipped")
            continue
        hare = solve(inst, "hare")
        t0 = time.process_time()
        found = pooled(inst, hare, a.seconds, a.workers)
        t1 = time.process_time()
        best, proved = int(found.objective), found.status.value == "optimal"
        lp = strong(inst) or 0.0
        ceiling = colgen(inst, 1, a.colgen, hare, True)[1] if colgen and proved else None
        what = f"OPT {best}" if proved else f"best {best} (bound {found.lower_bound:.0f})"
        line = (
            f"{label}: {inst.num_tasks} tasks, hare {hare.objective:.0f}, {what} "
            f"({t1 - t0:.0f} CPU s), strong LP {lp:.0f}"
        )
        if proved:
            ratios.append(hare.objective / best)
            loose.append(best / max(lp, ceiling or 0.0))
            line += f", hare/OPT {ratios[-1]:.4f}, OPT/strong {best / lp:.4f}" if lp else ""
            if ceiling:
                line += f", time-indexed ceiling {ceiling:.0f} (OPT/ceiling {best / ceiling:.4f})"
        print(line, flush=True)
    if ratios:
        print(
            f"{len(ratios)} of {len(cases)} proved: hare/OPT mean {np.mean(ratios):.4f}, "
            f"worst {max(ratios):.4f}; OPT / max(strong LP, ceiling) mean {np.mean(loose):.4f}, "
            f"worst {max(loose):.4f}"
        )


if __name__ == "__main__":
    main()
