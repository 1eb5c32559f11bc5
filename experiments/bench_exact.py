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

End-to-end mode (``--peer pyjobshop --e2e``): the table of random instances below
(``E2E``) solved as a user runs them, one process per solve through the command line
(``hare-opt solve FILE --solver portfolio --time-limit 30 --json --out ...``), against
the peer in its own process (``experiments/peer_pyjobshop.py FILE``), and, with
``--before DIR``, the same command of an older checkout (a ``git worktree`` with its own
venv) in the same run. Per solve: process CPU (user + system of the child, imports
included) and wall; each schedule is checked afterwards, outside the timed process.
Then in-process: every exact solver and the portfolio on the 20-task instances, with
imports and kernels loaded first (CPU and wall per solve). Rows go to
experiments/results/bench_e2e.csv.

    python experiments/bench_exact.py [--sets tiny small fig1] [--limit 60] [--solvers cpsat,milp]
    python experiments/bench_exact.py --frontier [--sizes 10 15 20 30 40 60] [--seeds 5]
    python experiments/bench_exact.py --peer pyjobshop --e2e [--before ../old] [--repeat 3]
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
        out += [
            load_instance(p) for p in sorted(folder.glob("*.json")) if p.name != "manifest.json"
        ]
    return out


def frontier_instance(tasks: int, seed: int) -> Instance:
    """Releases, sync, setups and heterogeneity all on; about ``tasks`` tasks (capped)."""
    return random_instance(
        seed,
        n_jobs=max(2, math.ceil(tasks / 3)),
        n_gpus=2 + seed % 5,
        heterogeneity=1.0,
        release_spread=2 * tasks,
        sync=(0, 2),
        switch_overhead=(0, 2),
        max_task_time=10,
        max_tasks=tasks,
        name=f"frontier-{tasks}-{seed}",
    )


def horn_instance(jobs: int, seed: int, gpus: int = 3) -> Instance:
    """R||sum C_j: single-task jobs, unit weights, no releases, sync or setups, on ``gpus``
    GPUs of different types (polynomial by Horn's assignment; solvers/special.py)."""
    inst = random_instance(
        seed, n_jobs=jobs, n_gpus=gpus, rounds=(1, 1), tasks_per_round=(1, 1), max_task_time=20
    )
    return inst.with_jobs([Job(j.id, j.task_time) for j in inst.jobs], name=f"horn-{jobs}-{seed}")


def run(inst: Instance, solver: str, limit: float, options: dict) -> dict:
    row = {
        "instance": inst.name,
        "tasks": inst.num_tasks,
        "jobs": inst.num_jobs,
        "gpus": inst.num_gpus,
        "solver": solver,
    }
    try:
        if solver == PEER:
            from peer_pyjobshop import solve_peer

            r = solve_peer(inst, limit)
        else:
            r = solve(inst, solver, time_limit=limit, **options)
    except (HareOptError, MemoryError) as exc:  # e.g. a model too large: a result, not a crash
        return {**row, "status": f"error: {type(exc).__name__}: {exc}"[:300]}
    return {
        **row,
        "status": r.status,
        "objective": r.objective,
        "lower_bound": r.lower_bound,
        "gap": r.gap,
        "seconds": round(r.runtime_s, 3),
    }


#: The end-to-end table: (tasks, seed) of ``hare-opt generate random`` with E2E_GEN.
E2E = [(n, s) for n in (20, 30, 40) for s in (7701, 7702)]
E2E_GEN = [
    "--jobs",
    "20",
    "--gpus",
    "3",
    "--heterogeneity",
    "1.0",
    "--release-spread",
    "120",
    "--sync",
    "0-2",
    "--switch-overhead",
    "0",
    "--max-task-time",
    "10",
]


def timed(cmd: list[str], timeout: float = 300.0) -> tuple[float, float, str]:
    """(process CPU s of the child: user + system, wall s, stdout) of one command."""
    import resource
    import subprocess
    import time

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {out.returncode}: {out.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, out.stdout


def e2e(before: Path | None, repeat: int, limit: float) -> pd.DataFrame:
    """The end-to-end table (see the module docstring); one row per (instance, contender,
    repeat), interleaved so that load affects every contender alike."""
    import tempfile

    from hare_opt.checker import check
    from hare_opt.io import load_result

    folder = RESULTS / "cache" / "e2e"
    folder.mkdir(parents=True, exist_ok=True)
    ours = ROOT / ".venv" / "bin" / "hare-opt"
    files = {}
    for n, seed in E2E:
        path = folder / f"random-{n}-{seed}.json"
        if not path.exists():
            timed(
                [
                    str(ours),
                    "generate",
                    "random",
                    *E2E_GEN,
                    "--max-tasks",
                    str(n),
                    "--seed",
                    str(seed),
                    "--out",
                    str(path),
                ]
            )
        files[n, seed] = path
    contenders = {"ours": ours}
    if before is not None:
        contenders["before"] = before / ".venv" / "bin" / "hare-opt"
    python = ROOT / ".venv" / "bin" / "python"
    for exe in contenders.values():  # compile or load each checkout's kernels once
        timed([str(exe), "solve", str(files[E2E[0]]), "--solver", "portfolio", "--json"])
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
    for rep in range(repeat):
        for (n, seed), path in files.items():
            inst = load_instance(path)
            for name, exe in contenders.items():
                out = tmp / f"{name}.json"
                cpu, wall, text = timed(
                    [
                        str(exe),
                        "solve",
                        str(path),
                        "--solver",
                        "portfolio",
                        "--time-limit",
                        f"{limit:g}",
                        "--json",
                        "--out",
                        str(out),
                    ]
                )
                summary = json.loads(text)
                res = load_result(out)
                report = check(inst, res.schedule)
                assert report.feasible and report.objective == summary["objective"], name
                rows.append(
                    {
                        "tasks": n,
                        "seed": seed,
                        "who": name,
                        "repeat": rep,
                        "status": summary["status"],
                        "objective": summary["objective"],
                        "solver_s": summary["runtime_s"],
                        "cpu_s": round(cpu, 3),
                        "wall_s": round(wall, 3),
                    }
                )
                print(rows[-1], flush=True)
            cpu, wall, text = timed(
                [
                    str(python),
                    str(ROOT / "experiments" / "peer_pyjobshop.py"),
                    str(path),
                    "--time-limit",
                    f"{limit:g}",
                ]
            )
            raw = json.loads(text)
            from peer_pyjobshop import checked

            peer = checked(inst, raw)
            rows.append(
                {
                    "tasks": n,
                    "seed": seed,
                    "who": PEER,
                    "repeat": rep,
                    "status": str(peer.status),
                    "objective": peer.objective,
                    "solver_s": round(raw["runtime_s"], 3),
                    "cpu_s": round(cpu, 3),
                    "wall_s": round(wall, 3),
                }
            )
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def in_process(repeat: int) -> pd.DataFrame:
    """Every exact solver and the portfolio on the 20-task instances of the end-to-end
    table, in this process, after a first solve of each (imports and kernels loaded)."""
    import time

    rows = []
    insts = [
        load_instance(RESULTS / "cache" / "e2e" / f"random-20-{s}.json") for n, s in E2E if n == 20
    ]
    for solver in available_solvers("exact"):
        solve(insts[0], solver, time_limit=30)  # loads what the solver imports
        for inst in insts:
            for _ in range(repeat):
                c0, t0 = time.process_time(), time.perf_counter()
                res = solve(inst, solver, time_limit=30)
                rows.append(
                    {
                        "instance": inst.name,
                        "solver": solver,
                        "status": str(res.status),
                        "objective": res.objective,
                        "proved_by": res.stats.proved_by,
                        "cpu_s": round(time.process_time() - c0, 4),
                        "wall_s": round(time.perf_counter() - t0, 4),
                    }
                )
    return pd.DataFrame(rows)


def summarise_e2e(df: pd.DataFrame, inproc: pd.DataFrame) -> None:
    g = (
        df.groupby(["tasks", "seed", "who"])
        .agg(
            status=("status", "first"),
            objective=("objective", "first"),
            solver_s=("solver_s", "median"),
            cpu_s=("cpu_s", "median"),
            wall_s=("wall_s", "median"),
        )
        .reset_index()
    )
    wide = g.pivot_table(
        index=["tasks", "seed"],
        columns="who",
        values=["cpu_s", "wall_s", "solver_s"],
        aggfunc="first",
    )
    wide.columns = [f"{w}:{v}" for v, w in wide.columns]
    if f"{PEER}:cpu_s" in wide:
        wide["ours/peer cpu"] = (wide["ours:cpu_s"] / wide[f"{PEER}:cpu_s"]).round(2)
    with pd.option_context("display.width", 220, "display.max_columns", 30):
        print(wide.reset_index().to_string(index=False))
        agree = g.groupby(["tasks", "seed"]).apply(
            lambda x: x[x.status == "optimal"].objective.nunique() <= 1, include_groups=False
        )
        print("every optimum proved by two contenders agrees:", bool(agree.all()))
        print()
        print(
            inproc.groupby("solver")
            .agg(
                proved=("status", lambda s: f"{(s == 'optimal').sum()}/{len(s)}"),
                median_cpu_s=("cpu_s", "median"),
                max_cpu_s=("cpu_s", "max"),
                median_wall_s=("wall_s", "median"),
                max_wall_s=("wall_s", "max"),
            )
            .to_string()
        )


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
    wide = df.pivot_table(
        index=["instance", "tasks"],
        columns="solver",
        values=["status", "objective", "lower_bound", "seconds"],
        aggfunc="first",
    )
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
            print(
                f"{s}: proved {len(proved)}/{n}; largest proved {big.instance} "
                f"({big.tasks} tasks, {big.seconds} s)"
            )


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
        rows.append(
            {
                by: group,
                "solver": solver,
                "proved": f"{len(proved)}/{len(x)}",
                "median_s_proved": round(proved.seconds.median(), 3) if len(proved) else None,
                "max_s_proved": round(proved.seconds.max(), 3) if len(proved) else None,
                "incumbent/best": round(y.inc.mean(), 4),
                "bound/best": round(y.bnd.mean(), 4),
                "median_gap": round(y.gap.median(), 4),
                "worse_than_peer": int((y.vs_peer > 0).sum()),
                "better_than_peer": int((y.vs_peer < 0).sum()),
            }
        )
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table.to_string(index=False))
    return table


def summarise_frontier(df: pd.DataFrame) -> None:
    g = df.assign(proved=df.status == "optimal").groupby(["solver", "size"])
    table = pd.DataFrame(
        {
            "n": g.size(),
            "proved": g.proved.mean().round(2),
            "median_s_proved": g.apply(
                lambda x: x.seconds[x.proved].median(), include_groups=False
            ),
            "median_gap": g.gap.median().round(4),
            "max_gap": g.gap.max().round(4),
        }
    )
    print(table.to_string())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["tiny", "small", "fig1"])
    ap.add_argument("--limit", type=float, default=60.0, help="seconds per solve")
    ap.add_argument(
        "--solvers",
        default=None,
        help="comma-separated (default: every registered exact solver that imports)",
    )
    ap.add_argument("--frontier", action="store_true", help="random instances by size")
    ap.add_argument("--sizes", nargs="+", type=int, default=[10, 15, 20, 30, 40, 60])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="solver option (JSON value), e.g. threads=2; repeatable",
    )
    ap.add_argument("--tag", default="default", help="label of this configuration in the CSV")
    ap.add_argument("--out", default=None, help="CSV path (default: experiments/results/...)")
    ap.add_argument(
        "--replace",
        action="store_true",
        help="overwrite the CSV (default: replace only the rows of this run's "
        "instances x solvers x tag, keep the others)",
    )
    ap.add_argument(
        "--e2e", action="store_true", help="end to end through the command line (with --peer)"
    )
    ap.add_argument(
        "--before",
        type=Path,
        default=None,
        help="an older checkout with its own .venv, timed in the same run",
    )
    ap.add_argument("--repeat", type=int, default=3, help="e2e: solves per contender")
    ap.add_argument(
        "--peer",
        choices=[PEER],
        default=None,
        help="also run the generic model of experiments/peer_pyjobshop.py, "
        "interleaved with ours (pip install -e '.[peer]')",
    )
    args = ap.parse_args()
    if args.e2e:
        df = e2e(args.before, args.repeat, 30.0 if args.limit == 60.0 else args.limit)
        inproc = in_process(args.repeat)
        RESULTS.mkdir(parents=True, exist_ok=True)
        pd.concat([df.assign(mode="e2e"), inproc.assign(mode="in-process")]).to_csv(
            RESULTS / "bench_e2e.csv", index=False
        )
        summarise_e2e(df, inproc)
        return
    solvers = args.solvers.split(",") if args.solvers else available_solvers("exact")
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
    df = pd.DataFrame(rows).assign(
        tag=args.tag, limit_s=args.limit, options=json.dumps(options, sort_keys=True)
    )
    default = (
        ("bench_peer_frontier.csv" if args.frontier else "bench_peer.csv")
        if args.peer
        else ("frontier.csv" if args.frontier else "bench_exact.csv")
    )
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
