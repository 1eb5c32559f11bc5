"""Benchmark of the exact solvers: time to a proved optimum, and how far that reaches.

Library mode (default): every instance of the chosen sets (``tiny``, ``small``,
``fig1``) is solved by every chosen exact solver with the same wall-clock
limit; the table gives status, objective, bound, seconds and the ratio of the
two solvers' times where both proved the optimum, then for each solver the
largest instance (in tasks) it proved. Rows go to
experiments/results/bench_exact.csv.

Frontier mode (``--frontier``): random instances (``random_instance``, knobs
below) of 10..60 tasks on 2..6 GPUs (``2 + seed % 5``), several seeds per size;
per solver and size it reports the share proved within the limit, the median
time of the proved ones and the median final gap; rows go to
experiments/results/frontier.csv (per instance) and are summarised on screen.

    python experiments/bench_exact.py [--sets tiny small fig1] [--limit 60] [--solvers cpsat,milp]
    python experiments/bench_exact.py --frontier [--sizes 10 15 20 30 40 60] [--seeds 5]
    # a model variant, labelled in the CSV:
    python experiments/bench_exact.py --sets small --option setup_energy=false --tag noenergy
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pandas as pd

from hare_opt.generators import random_instance
from hare_opt.io import load_instance
from hare_opt.model import HareOptError, Instance, Job
from hare_opt.solvers import available_solvers, solve

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
#: The generic CP model compared against (experiments/peer_pyjobshop.py).
PEER = "pyjobshop"


def library(sets: list[str]) -> list[Instance]:
    out = []
    for name in sets:
        if name == "horn":  # R||sum C_j, 12-30 jobs: solvers/special.py's first case
            out += [horn_instance(n, seed) for n in (12, 20, 30) for seed in range(3)]
            continue
        if name == "fig1":
            out.append(load_instance(ROOT / "instances" / "fig1.json"))
            continue
        folder = ROOT / "instances" / name
        if not folder.is_dir():
            raise SystemExit(f"no instance set {name!r} under {folder.parent}")
        out += [load_instance(p) for p in sorted(folder.glob("*.json"))
                if p.name != "manifest.json"]
    return out


def frontier_instance(tasks: int, seed: int) -> Instance:
    """Releases, sync, setups and heterogeneity all on; about ``tasks`` tasks (capped)."""
    return random_instance(seed, n_jobs=max(2, math.ceil(tasks / 3)), n_gpus=2 + seed % 5,
                           heterogeneity=1.0, release_spread=2 * tasks, sync=(0, 2),
                           switch_overhead=(0, 2), max_task_time=10, max_tasks=tasks,
                           name=f"frontier-{tasks}-{seed}")


def horn_instance(jobs: int, seed: int, gpus: int = 3) -> Instance:
    """R||sum C_j: single-task jobs, unit weights, no releases, sync or setups, on ``gpus``
    GPUs of different types (polynomial by Horn's assignment; solvers/special.py)."""
    inst = random_instance(seed, n_jobs=jobs, n_gpus=gpus, rounds=(1, 1),
                           tasks_per_round=(1, 1), max_task_time=20)
    return inst.with_jobs([Job(j.id, j.task_time) for j in inst.jobs],
                          name=f"horn-{jobs}-{seed}")


def run(inst: Instance, solver: str, limit: float, options: dict) -> dict:
    row = {"instance": inst.name, "tasks": inst.num_tasks, "jobs": inst.num_jobs,
           "gpus": inst.num_gpus, "solver": solver}
    try:
        if solver == PEER:
            from peer_pyjobshop import solve_peer
            r = solve_peer(inst, limit)
        else:
            r = solve(inst, solver, time_limit=limit, **options)
    except (HareOptError, MemoryError) as exc:  # e.g. a model too large: a result, not a crash
        return {**row, "status": f"error: {type(exc).__name__}: {exc}"[:300]}
    return {**row, "status": r.status,
            "objective": r.objective, "lower_bound": r.lower_bound,
            "gap": r.gap, "seconds": round(r.runtime_s, 3)}


def warm_up_peer() -> None:
    """Import PyJobShop and solve a one-task model, so no clock pays its imports."""
    from peer_pyjobshop import solve_peer

    from hare_opt.model import GPU
    solve_peer(Instance((GPU("g", "A"),), (Job("j", {"A": 1}),), "warm-up"), 5)


def _options(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def summarise_library(df: pd.DataFrame, solvers: list[str]) -> None:
    wide = df.pivot_table(index=["instance", "tasks"], columns="solver",
                          values=["status", "objective", "lower_bound", "seconds"],
                          aggfunc="first")
    wide.columns = [f"{s}:{v}" for v, s in wide.columns]
    if len(solvers) == 2:
        a, b = solvers
        both = (wide[f"{a}:status"] == "optimal") & (wide[f"{b}:status"] == "optimal")
        wide[f"{b}/{a}"] = (wide[f"{b}:seconds"] / wide[f"{a}:seconds"]).where(both).round(2)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(wide.reset_index().to_string(index=False))
    for s in solvers:
        proved = df[(df.solver == s) & (df.status == "optimal")]
        n = int((df.solver == s).sum())
        if proved.empty:
            print(f"{s}: proved 0/{n}")
        else:
            big = proved.sort_values(["tasks", "seconds"]).iloc[-1]
            print(f"{s}: proved {len(proved)}/{n}; largest proved {big.instance} "
                  f"({big.tasks} tasks, {big.seconds} s)")


def summarise_peer(df: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per group and solver: proved, median seconds to proof, incumbent and bound relative
    to the best of all solvers on the same instance (1 = best), and on how many instances
    the incumbent is worse / better than the peer's."""
    ok = df[df.status.isin(["optimal", "feasible"])].copy()
    best_obj = ok.groupby("instance").objective.transform("min")
    best_lb = ok.groupby("instance").lower_bound.transform("max")
    ok["inc"] = ok.objective / best_obj
    ok["bnd"] = ok.lower_bound / best_lb
    peer = ok[ok.solver == PEER].set_index("instance").objective
    ok["vs_peer"] = ok.objective - ok.instance.map(peer)
    rows = []
    for (group, solver), x in df.groupby([by, "solver"], sort=False):
        y = ok[(ok[by] == group) & (ok.solver == solver)]
        proved = y[y.status == "optimal"]
        rows.append({by: group, "solver": solver, "proved": f"{len(proved)}/{len(x)}",
                     "median_s_proved": round(proved.seconds.median(), 3) if len(proved)
                     else None,
                     "max_s_proved": round(proved.seconds.max(), 3) if len(proved) else None,
                     "incumbent/best": round(y.inc.mean(), 4),
                     "bound/best": round(y.bnd.mean(), 4),
                     "median_gap": round(y.gap.median(), 4),
                     "worse_than_peer": int((y.vs_peer > 0).sum()),
                     "better_than_peer": int((y.vs_peer < 0).sum())})
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table.to_string(index=False))
    return table


def summarise_frontier(df: pd.DataFrame) -> None:
    g = df.assign(proved=df.status == "optimal").groupby(["solver", "size"])
    table = pd.DataFrame({
        "n": g.size(), "proved": g.proved.mean().round(2),
        "median_s_proved": g.apply(lambda x: x.seconds[x.proved].median(), include_groups=False),
        "median_gap": g.gap.median().round(4), "max_gap": g.gap.max().round(4)})
    print(table.to_string())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["tiny", "small", "fig1"])
    ap.add_argument("--limit", type=float, default=60.0, help="seconds per solve")
    ap.add_argument("--solvers", default=None,
                    help="comma-separated (default: every registered exact solver that imports)")
    ap.add_argument("--frontier", action="store_true", help="random instances by size")
    ap.add_argument("--sizes", nargs="+", type=int, default=[10, 15, 20, 30, 40, 60])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="solver option (JSON value), e.g. threads=2; repeatable")
    ap.add_argument("--tag", default="default", help="label of this configuration in the CSV")
    ap.add_argument("--out", default=None, help="CSV path (default: experiments/results/...)")
    ap.add_argument("--replace", action="store_true",
                    help="overwrite the CSV (default: replace only the rows of this run's "
                         "instances x solvers x tag, keep the others)")
    ap.add_argument("--peer", choices=[PEER], default=None,
                    help="also run the generic model of experiments/peer_pyjobshop.py, "
                         "interleaved with ours (pip install -e '.[peer]')")
    args = ap.parse_args()
    solvers = (args.solvers.split(",") if args.solvers
               else available_solvers("exact"))
    if args.peer:
        solvers = [s for s in solvers if s != PEER] + [PEER]
        import peer_pyjobshop  # noqa: F401 - fail now if the extra is missing
        warm_up_peer()
    options = _options(args.option)
    if {"bnb", "portfolio", "cpsat", "milp"} & set(solvers):  # numba: load or compile
        from hare_opt.heuristics.rounds import warm_up  # before any clock runs
        from hare_opt.solvers.bnb import warm_up as warm_up_bnb
        print(f"numba kernels loaded in {warm_up() + warm_up_bnb():.1f} s")
    rows = []
    if args.frontier:
        for size in args.sizes:
            for seed in range(args.seeds):
                inst = frontier_instance(size, seed)
                for s in solvers:
                    rows.append({"size": size, "seed": seed, **run(inst, s, args.limit, options)})
                    print(rows[-1], flush=True)
    else:
        for name in args.sets:
            for inst in library([name]):
                for s in solvers:
                    rows.append({"set": name, **run(inst, s, args.limit, options)})
                    print(rows[-1], flush=True)
    df = pd.DataFrame(rows).assign(tag=args.tag, limit_s=args.limit,
                                   options=json.dumps(options, sort_keys=True))
    default = ("bench_peer_frontier.csv" if args.frontier else "bench_peer.csv") if args.peer \
        else ("frontier.csv" if args.frontier else "bench_exact.csv")
    out = Path(args.out) if args.out else RESULTS / default
    out.parent.mkdir(parents=True, exist_ok=True)
    merged = df
    if out.exists() and not args.replace:  # keep rows of other solvers / tags: runs add up
        old = pd.read_csv(out)
        key = ["instance", "solver", "tag"]
        stale = old.set_index(key).index.isin(df.set_index(key).index)
        merged = pd.concat([old[~stale], df], ignore_index=True)
    merged.to_csv(out, index=False)
    print()
    if args.peer:
        summarise_peer(merged[merged.tag == args.tag], "size" if args.frontier else "set")
    elif args.frontier:
        summarise_frontier(merged)
    else:
        summarise_library(df, solvers)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
