"""``hare-opt bound INSTANCE [--json] [--no-lp]``."""

from __future__ import annotations

import argparse
import json
import math

from hare_opt.bounds import all_bounds, guarantee, guarantee_plan, lower_bound, rho
from hare_opt.io import load_instance
from hare_opt.model.units import fmt_number, fmt_time

NAME = "bound"
HELP = "lower bounds on the optimum and the proved guarantee of the hare heuristic"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from hare_opt.cli import args as a

    p.add_argument("instance", type=a.path, help="instance file (hare-opt/instance@1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-lp", action="store_true",
                   help="skip the LP bound (the only one whose cost grows beyond linear)")


def _num(x: float) -> float | int | None:
    if not math.isfinite(x):
        return None  # JSON has no infinity; null means "no finite value"
    return int(x) if float(x).is_integer() else float(x)


def run(args: argparse.Namespace) -> int:
    inst = load_instance(args.instance)
    bounds = all_bounds(inst, lp=not args.no_lp)
    lb = lower_bound(inst, bounds=bounds)
    alpha = inst.alpha
    out = {"lower_bound": _num(lb), **{k: _num(v) for k, v in bounds.items()},
           "guarantee": _num(guarantee(inst, lb)),
           "guarantee_closed_form": _num(1 + 2 * rho(inst)),
           "hare_upper_bound": guarantee_plan(inst)[1],
           "alpha_paper_factor": _num(float((alpha * (2 + alpha)).max()))}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{inst.name}: {inst.num_jobs} jobs, {inst.num_gpus} GPUs, {inst.num_tasks} tasks")
    width = max(len(k) for k in out)
    for k, v in out.items():
        if v is None:
            text = "none (no finite value)"
        elif k in FACTORS:
            text = f"x {fmt_number(v, 4)}  ({FACTORS[k]})"
        else:
            text = fmt_time(v, inst.time_unit) + ("  (the highest bound below, rounded up)"
                                                  if k == "lower_bound" else "")
        print(f"  {k:{width}s} {text}")
    return 0


#: Lines that are factors, not times, and what each one means.
FACTORS = {"guarantee": "hare's objective <= this x lower_bound, proved",
           "guarantee_closed_form": "1 + 2 rho, the closed form of the guarantee",
           "alpha_paper_factor": "the paper's claimed alpha(2 + alpha)"}
