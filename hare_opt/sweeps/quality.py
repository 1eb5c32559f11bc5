"""Heuristic quality: objective / OPT, or / the best proved lower bound where OPT is not proved.

The one home of this measurement: ``experiments/quality.py`` (instance files)
and the reproduction item ``ours-quality`` (random instances) both call
``score``. A ratio to a lower bound over-states the true ratio to OPT, so a
mean taken over such ratios is an upper bound on the mean true ratio; each row
says which reference it used.
"""

from __future__ import annotations

import math
import time
from typing import Any

import pandas as pd

from hare_opt.bounds import lower_bound, strong_bound
from hare_opt.model import Instance, Result, ceil_bound
from hare_opt.model.options import parse_spec
from hare_opt.solvers import solve, solver_names
from hare_opt.sweeps.pure import pure_solve

#: Named variants scored next to a heuristic: the paper leaves step 3 open (docs/theory.md).
VARIANTS = {"hare-paper": ("hare-paper:step3=start",)}


def all_heuristics() -> tuple[str, ...]:
    """Every registered heuristic and rule, in registration order, each followed by its
    ``VARIANTS``."""
    names = solver_names("heuristic") + solver_names("rule")
    return tuple(v for n in names for v in (n, *VARIANTS.get(n, ())))


def reference(
    inst: Instance,
    exact: Result | None,
    results: dict[str, Result] | None = None,
    *,
    strong: bool = False,
) -> tuple[float, str, str]:
    """(value, 'opt' | 'lb', source): OPT when ``exact`` proved it, else the highest proved
    lower bound among ``hare_opt.bounds``, the exact run's and hare-paper's relaxation's
    (with ``strong``, also ``bounds.strong_bound`` from the best schedule found)."""
    if exact is not None and exact.status == "optimal":
        return float(exact.objective), "opt", exact.solver
    found: dict[str, float | None] = {"bounds": lower_bound(inst)}
    if strong:
        upper = min(
            [r.objective for r in (results or {}).values()]
            + ([exact.objective] if exact is not None else [])
        )
        value = strong_bound(inst, int(upper))
        if value is not None:
            found["strong"] = ceil_bound(value)
    if exact is not None:
        found["exact"] = exact.lower_bound
    paper = (results or {}).get("hare-paper")
    if paper is not None:
        found["relaxation"] = paper.lower_bound
    valid = {k: float(v) for k, v in found.items() if v is not None and math.isfinite(v)}
    source = max(valid, key=lambda k: valid[k])
    return valid[source], "lb", source


def _run(
    inst: Instance, spec: str, limit: float, *, pure: bool, hint: Result | None = None
) -> Result:
    name, options = parse_spec(spec)  # a variant: "hare-paper:step3=start"
    if pure:
        return pure_solve(inst, name, limit, hint=hint, **options)
    return solve(inst, name, time_limit=limit, hint=hint, **options)


def heuristic_row(
    inst: Instance, spec: str, limit: float, *, pure: bool = False, result: Result | None = None
) -> dict[str, Any]:
    """One heuristic's objective and runtime (``ratios`` adds the reference);
    ``result``: its run, if made already."""
    t0 = time.perf_counter()
    r = result or _run(inst, spec, limit, pure=pure)
    return {
        "solver": spec,
        "tasks": inst.num_tasks,
        "objective": r.objective,
        "lower_bound": r.lower_bound,
        "runtime_s": round(r.runtime_s if result else time.perf_counter() - t0, 3),
        "relaxation_optimal": r.stats.get("relaxation_optimal", ""),
        "wall_clock_limited": bool(r.stats.get("wall_clock_limited")),
    }


def reference_row(
    inst: Instance,
    exact: str,
    limit: float,
    *,
    pure: bool = False,
    hint: Result | None = None,
    results: dict[str, Result] | None = None,
    strong: bool = False,
) -> dict[str, Any]:
    """The reference: ``exact``'s OPT when proved, else the highest proved lower bound
    (``reference``); with no ``hint`` it depends on no heuristic's code."""
    ex = _run(inst, exact, limit, pure=pure, hint=hint)
    value, kind, source = reference(inst, ex, results, strong=strong)
    return {
        "solver": "reference",
        "tasks": inst.num_tasks,
        "reference": value,
        "reference_kind": kind,
        "reference_from": source,
        "exact_status": ex.status,
        "objective": ex.objective,
        "wall_clock_limited": bool(ex.stats.get("wall_clock_limited")),
    }


def ratios(df: pd.DataFrame, instance: list[str]) -> pd.DataFrame:
    """Heuristic rows with their instance's reference (columns ``instance`` name it):
    OPT, or the highest of the reference's bound and hare-paper's relaxation bound."""
    ref = df[df["solver"] == "reference"].set_index(instance)
    out = (
        df[df["solver"] != "reference"]
        .drop(
            columns=[
                c
                for c in ("reference", "reference_kind", "reference_from", "exact_status")
                if c in df.columns
            ]
        )
        .join(ref[["reference", "reference_kind", "reference_from", "exact_status"]], on=instance)
    )
    paper = df[df["solver"] == "hare-paper"].set_index(instance)["lower_bound"]
    relax = pd.to_numeric(
        out.join(paper.rename("relax_lb"), on=instance)["relax_lb"], errors="coerce"
    )
    better = (out["reference_kind"] == "lb") & (relax > out["reference"])
    out.loc[better, "reference"] = relax[better]
    out.loc[better, "reference_from"] = "relaxation"
    out["ratio"] = out["objective"] / out["reference"]
    return out.reset_index(drop=True)


def score(
    inst: Instance,
    *,
    heuristics: tuple[str, ...] | list[str] | None = None,
    exact: str | None = "portfolio",
    time_limit: float = 60.0,
    heuristic_time_limit: float | None = None,
    strong: bool = False,
    pure: bool = False,
) -> list[dict[str, Any]]:
    """One row per heuristic: objective, reference, ratio, runtime.

    The exact solver gets the best heuristic schedule as warm start, so its
    result is never worse than the heuristics'. ``heuristic_time_limit`` caps
    heuristics that search (hare-paper's relaxation); default ``time_limit``.
    ``pure``: limits in work units instead (``sweeps.pure``: the rows depend on nothing
    but the instance; ``wall_clock_limited`` says where the safety net acted).
    """
    results: dict[str, Result] = {}
    rows = []
    for name in heuristics or all_heuristics():
        t0 = time.perf_counter()
        results[name] = _run(inst, name, heuristic_time_limit or time_limit, pure=pure)
        results[name].runtime_s = time.perf_counter() - t0
        rows.append(heuristic_row(inst, name, 0.0, result=results[name]))
    best = min(results.values(), key=lambda r: r.objective)
    if exact is None:
        value, kind, source = reference(inst, None, results, strong=strong)
        ref = {
            "reference": value,
            "reference_kind": kind,
            "reference_from": source,
            "exact_status": None,
            "wall_clock_limited": False,
        }
    else:
        ref = reference_row(
            inst, exact, time_limit, pure=pure, hint=best, results=results, strong=strong
        )
    return [
        {
            **r,
            **{
                k: ref[k] for k in ("reference", "reference_kind", "reference_from", "exact_status")
            },
            "ratio": r["objective"] / ref["reference"],
            "wall_clock_limited": r["wall_clock_limited"] or ref["wall_clock_limited"],
        }
        for r in rows
    ]


def summarise(df: pd.DataFrame, by: tuple[str, ...] = ("set",)) -> pd.DataFrame:
    """Per group and heuristic: mean and max ratio, mean where OPT is proved, counts."""
    keys = [k for k in by if k in df.columns] + ["solver"]
    g = df.groupby(keys, sort=False)
    opt = df[df["reference_kind"] == "opt"].groupby(keys, sort=False)["ratio"]
    out = pd.DataFrame(
        {
            "instances": g.size(),
            "mean_ratio": g["ratio"].mean(),
            "max_ratio": g["ratio"].max(),
            "mean_ratio_opt": opt.mean(),
            "vs_opt": opt.size(),
        }
    )
    out["vs_opt"] = out["vs_opt"].fillna(0).astype(int)
    out["vs_lb"] = out["instances"] - out["vs_opt"]
    return out.round(4).reset_index()
