"""Quality of the heuristics: objective / OPT, or / a lower bound where OPT is not proved.

For every instance of the chosen sets the exact solver runs with a time
limit; when it proves optimality the reference is OPT, else the best proved
lower bound (the exact solver's, hare_opt.bounds', hare-paper's relaxation
bound), and the row says which (``reference`` = ``opt`` or ``lb``): a ratio to a
lower bound over-states the true ratio. Per-instance rows go to
experiments/results/quality.csv, the per-set summary to quality_summary.csv.

    python experiments/quality.py --sets small paper --opt-time-limit 60
    python experiments/quality.py --sets small --limit 3 --opt-time-limit 5   # a quick slice
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import pandas as pd

from hare_opt.bounds import lower_bound
from hare_opt.io import load_instance
from hare_opt.solvers import available_solvers, solve

ROOT = Path(__file__).resolve().parents[1]
HEURISTICS = ("hare", "hare-paper", "fifo", "wspt", "eft")


def instance_files(set_name: str, limit: int | None) -> list[Path]:
    folder = ROOT / "instances" / set_name
    if not folder.is_dir():
        raise SystemExit(f"quality.py: no instance set {folder}")
    files = sorted(p for p in folder.glob("*.json")
                   if p.name != "manifest.json" and not p.name.endswith(".schedule.json"))
    return files[:limit] if limit else files


def reference(inst, results: dict, exact: str, time_limit: float) -> tuple[float, str, dict]:
    """(value, 'opt' | 'lb', details): OPT when proved, else the best proved lower bound."""
    best = min((r for r in results.values() if r is not None), key=lambda r: r.objective)
    opts = {"hint": best, "num_workers": 1} if exact == "cpsat" else {}
    ex = solve(inst, exact, time_limit=time_limit, **opts)
    if ex.status == "optimal":
        return float(ex.objective), "opt", {"exact_status": "optimal"}
    bounds = {"exact": ex.lower_bound, "bounds": lower_bound(inst)}
    paper = results.get("hare-paper")
    if paper is not None:
        bounds["relaxation"] = paper.lower_bound
    valid = {k: float(v) for k, v in bounds.items() if v is not None and math.isfinite(v)}
    key = max(valid, key=valid.get)
    return valid[key], "lb", {"exact_status": ex.status, "bound_from": key}


def run(args: argparse.Namespace) -> pd.DataFrame:
    solvers = [s for s in args.solvers if s in available_solvers()]
    missing = sorted(set(args.solvers) - set(solvers))
    if missing:
        print(f"skipping solvers not importable here: {', '.join(missing)}", file=sys.stderr)
    rows = []
    for set_name in args.sets:
        for path in instance_files(set_name, args.limit):
            inst = load_instance(path)
            results = {}
            for name in solvers:
                t0 = time.perf_counter()
                results[name] = solve(inst, name, time_limit=args.heuristic_time_limit)
                results[name].runtime_s = time.perf_counter() - t0
            ref, kind, info = reference(inst, results, args.exact, args.opt_time_limit)
            for name, res in results.items():
                rows.append({"set": set_name, "instance": path.stem, "tasks": inst.num_tasks,
                             "solver": name, "objective": res.objective, "reference": ref,
                             "reference_kind": kind, "ratio": res.objective / ref,
                             "runtime_s": round(res.runtime_s, 3),
                             "relaxation_optimal": res.stats.get("relaxation_optimal", ""),
                             **info})
            print(f"{set_name}/{path.stem}: {inst.num_tasks} tasks, reference {kind} {ref:g}: "
                  + ", ".join(f"{n} {r.objective / ref:.3f}" for n, r in results.items()),
                  flush=True)
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["set", "solver"], sort=False)
    return pd.DataFrame({
        "instances": g.size(),
        "mean_ratio": g["ratio"].mean().round(4),
        "max_ratio": g["ratio"].max().round(4),
        "vs_opt": g["reference_kind"].apply(lambda s: int((s == "opt").sum())),
        "vs_lb": g["reference_kind"].apply(lambda s: int((s == "lb").sum())),
    }).reset_index()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", nargs="+", default=["small", "paper"])
    p.add_argument("--solvers", nargs="+", default=list(HEURISTICS))
    p.add_argument("--exact", default="cpsat")
    p.add_argument("--opt-time-limit", type=float, default=60.0, metavar="SECONDS")
    p.add_argument("--heuristic-time-limit", type=float, default=30.0, metavar="SECONDS",
                   help="for heuristics that search (hare-paper's relaxation)")
    p.add_argument("--limit", type=int, default=None, help="first N instances of each set")
    p.add_argument("--out", default=str(ROOT / "experiments" / "results" / "quality.csv"))
    args = p.parse_args(argv)
    df = run(args)
    if df.empty:
        print("no instances")
        return 1
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    summary = summarise(df)
    summary.to_csv(out.with_name(out.stem + "_summary.csv"), index=False)
    print()
    print(summary.to_string(index=False))
    print(f"\nrows -> {out}\nsummary -> {out.with_name(out.stem + '_summary.csv')}")
    print("ratio = objective / reference; vs_lb rows compare with a lower bound (an over-estimate)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
