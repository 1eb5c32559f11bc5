"""Quality table of the heuristics on instance sets: objective / OPT (or / a proved lower bound).

For every instance the heuristics run, then the exact solver (default: the
CP-SAT + MILP portfolio, warm-started with the best heuristic schedule) with a
time limit; the reference is OPT when proved, else the highest proved lower
bound, and each row says which (``reference_kind`` = opt | lb, ``reference_from``).
A ratio to a lower bound over-states the ratio to OPT, so ``mean_ratio`` over a
set bounds the true mean ratio from above. The measurement itself lives in
``hare_opt.sweeps.quality`` (shared with the reproduction item ``ours-quality``).
Rows go to experiments/results/quality.csv, the summary to quality_summary.csv.

    python experiments/quality.py                                  # small + paper, 60 s
    python experiments/quality.py --sets small --limit 3 --opt-time-limit 5   # a quick slice
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from hare_opt.io import load_instance
from hare_opt.model import HareOptError
from hare_opt.solvers import available_solvers
from hare_opt.sweeps.quality import all_heuristics, score, summarise

ROOT = Path(__file__).resolve().parents[1]


def instance_files(set_name: str, limit: int | None) -> list[Path]:
    folder = ROOT / "instances" / set_name
    if not folder.is_dir():
        raise SystemExit(f"quality.py: no instance set {folder}")
    files = sorted(
        p
        for p in folder.glob("*.json")
        if p.name != "manifest.json" and not p.name.endswith(".schedule.json")
    )
    return files[:limit] if limit else files


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", nargs="+", default=["small", "paper"])
    p.add_argument("--solvers", nargs="+", default=list(all_heuristics()))
    p.add_argument("--exact", default="portfolio", help="exact solver for the reference")
    p.add_argument("--opt-time-limit", type=float, default=60.0, metavar="SECONDS")
    p.add_argument(
        "--heuristic-time-limit",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="for heuristics that search (hare-paper's relaxation)",
    )
    p.add_argument("--limit", type=int, default=None, help="first N instances of each set")
    p.add_argument(
        "--strong",
        action="store_true",
        help="also the contention LP (hare_opt.bounds.strong_bound) as reference",
    )
    p.add_argument("--out", default=str(ROOT / "experiments" / "results" / "quality.csv"))
    args = p.parse_args(argv)
    solvers = [s for s in args.solvers if s in available_solvers()]
    missing = sorted(set(args.solvers) - set(solvers))
    if missing:
        print(f"skipping solvers not importable here: {', '.join(missing)}", file=sys.stderr)
    files = [(s, f) for s in args.sets for f in instance_files(s, args.limit)]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    failed = []
    for set_name, path in tqdm(files, desc="instances", unit="inst", file=sys.stderr):
        inst = load_instance(path)
        try:
            mine = score(
                inst,
                heuristics=solvers,
                exact=args.exact,
                time_limit=args.opt_time_limit,
                heuristic_time_limit=args.heuristic_time_limit,
                strong=args.strong,
            )
        except HareOptError as exc:  # one instance's failure must not cost the others
            failed.append(f"{set_name}/{path.stem}: {type(exc).__name__}: {exc}")
            tqdm.write(f"FAILED {failed[-1]}", file=sys.stderr)
            continue
        rows = pd.DataFrame([{"set": set_name, "instance": path.stem, **r} for r in mine])
        rows.to_csv(out, mode="a", header=not out.exists(), index=False)  # kept as it comes
        tqdm.write(
            f"{set_name}/{path.stem}: {inst.num_tasks} tasks, reference "
            f"{mine[0]['reference_kind']} {mine[0]['reference']:g}: "
            + ", ".join(f"{r['solver']} {r['ratio']:.3f}" for r in mine),
            file=sys.stderr,
        )
    if not out.exists():
        print("no results", file=sys.stderr)
        return 1
    df = pd.read_csv(out)
    summary = summarise(df)
    summary.to_csv(out.with_name(out.stem + "_summary.csv"), index=False)
    print(summary.to_string(index=False))
    print(f"\nrows -> {out}\nsummary -> {out.with_name(out.stem + '_summary.csv')}")
    print(
        "ratio = objective / reference; vs_lb rows compare with a lower bound, which "
        "over-states the ratio: mean_ratio is an upper bound on the mean ratio to OPT"
    )
    for line in failed:
        print(f"FAILED {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
