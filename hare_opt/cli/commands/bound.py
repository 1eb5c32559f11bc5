"""``hare-opt bound INSTANCE [--json] [--no-lp] [--strong [--strong-time-limit S]]``."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from hare_opt.bounds import (
    all_bounds,
    guarantee,
    guarantee_plan,
    lower_bound,
    rho,
    strong_bound,
)
from hare_opt.bounds.approx import best_restriction
from hare_opt.io import load_instance
from hare_opt.model import Instance, OptionError
from hare_opt.model.units import fmt_number, fmt_time

NAME = "bound"
HELP = "lower bounds on the optimum and the proved guarantee of the hare heuristic"


#: Seconds for the strong bound's LP unless --strong-time-limit says otherwise.
STRONG_LIMIT = 120.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    from hare_opt.cli import args as a

    p.add_argument("instance", type=a.path, help="instance file (hare-opt/instance@1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--no-lp",
        action="store_true",
        help="skip the LP bound (the only one whose cost grows beyond linear)",
    )
    p.add_argument(
        "--strong",
        action="store_true",
        help="also the time-bucketed LP that sees jobs compete for GPU types and "
        "rounds mixing types last longer (slower: up to --strong-time-limit "
        "seconds)",
    )
    p.add_argument(
        "--strong-time-limit",
        type=a.seconds,
        default=None,
        metavar="SECONDS",
        help=f"with --strong: seconds for its LP (default {STRONG_LIMIT:g})",
    )


def strong(inst: Instance, time_limit: float = STRONG_LIMIT) -> float | None:
    """The time-bucketed LP bound as ``--strong`` prints it (None: no value in time)."""
    from hare_opt.solvers import solve  # the horizon: hare's schedule is a tight upper bound

    return strong_bound(inst, int(solve(inst, "hare").objective), time_limit=time_limit)


def _num(x: float) -> float | int | None:
    if not math.isfinite(x):
        return None  # JSON has no infinity; null means "no finite value"
    return int(x) if float(x).is_integer() else float(x)


def run(args: argparse.Namespace) -> int:
    if args.strong_time_limit is not None and not args.strong:
        raise OptionError("applies with --strong only", option="--strong-time-limit", owner="bound")
    inst = load_instance(args.instance)
    bounds = all_bounds(inst, lp=not args.no_lp)
    if args.strong:
        value = strong(inst, args.strong_time_limit or STRONG_LIMIT)
        if value is not None:
            bounds["strong"] = value
    lb = lower_bound(inst, bounds=bounds)
    source = max(bounds, key=lambda k: lower_bound(inst, bounds={k: bounds[k]}))
    alpha = inst.alpha
    theta, _, terms = best_restriction(inst)
    out: dict[str, Any] = {
        "lower_bound": _num(lb),
        "lower_bound_from": source,
        **{k: _num(v) for k, v in bounds.items()},
        "guarantee": _num(guarantee(inst, lb)),
        "guarantee_closed_form": _num(1 + 2 * rho(inst)),
        "hare_upper_bound": guarantee_plan(inst)[1],
        "alpha_paper_factor": _num(float((alpha * (2 + alpha)).max())),
        # geobatch (hence hare) <= approx_factor x OPT; free of M and N (theory.md (c))
        "approx_factor": _num(math.nextafter(float(terms["factor"]), math.inf)),
        "approx_terms": {
            "theta": _num(theta),
            **{k: _num(float(terms[k])) for k in ("lambda", "mu", "gamma")},
        },
    }
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{inst.name}: {inst.num_jobs} jobs, {inst.num_gpus} GPUs, {inst.num_tasks} tasks")
    width = max(len(k) for k in out)
    for k, v in out.items():
        if k == "lower_bound_from":
            text = f"{v}  (the bound that gave lower_bound)"
        elif v is None:
            text = "none (no finite value)"
        elif k in FACTORS:
            text = f"x {fmt_number(v, 4)}  ({FACTORS[k]})"
        elif isinstance(v, dict):  # the terms of a factor: ratios, not times
            text = ", ".join(
                f"{name} {'none' if x is None else fmt_number(x, 4)}" for name, x in v.items()
            )
        else:
            text = fmt_time(v, inst.time_unit) + (
                "  (the highest bound below, rounded up)" if k == "lower_bound" else ""
            )
        print(f"  {k:{width}s} {text}")
    return 0


#: Lines that are factors, not times, and what each one means.
FACTORS = {
    "guarantee": "hare's objective <= this x lower_bound, proved",
    "guarantee_closed_form": "1 + 2 rho, the closed form of the guarantee",
    "alpha_paper_factor": "the paper's claimed alpha(2 + alpha)",
    "approx_factor": "geobatch's (hence hare's) objective <= this x OPT, proved; "
    "free of the cluster size",
}
