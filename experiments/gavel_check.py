"""Cross-check of ``gavel-fifo`` and ``gavel-las`` against Gavel's own simulator.

Gavel (Narayanan et al., OSDI '20; github stanford-futuredata/gavel) is not part of this
project: the user supplies a checkout (``--gavel DIR``, its root or its ``scheduler/``)
set up as its README says (its Python requirements, ``make rpc_stubs``) and the Python
that runs it (``--gavel-python``). This script never downloads or builds anything.

1. Traces: read ``--traces DIR`` (``*.trace``, Gavel's format), or with ``--generate``
   make them with Gavel's ``scripts/utils/generate_trace.py`` (``--jobs``, ``--lam``,
   ``--seeds``, multi-GPU jobs) into ``--out-dir``.
2. Gavel: ``scripts/drivers/simulate_scheduler_with_trace.py`` with ``fifo_perf`` and
   ``max_min_fairness_perf`` on the cluster ``--cluster`` (#v100:#p100:#k80), its
   defaults otherwise (360 s rounds, ECOS); its average JCT is read from its output.
3. Ours: each trace translated by ``hare_opt.io.gavel.gavel_instance`` with Gavel's
   ``simulation_throughputs.json`` from the checkout (or ``--throughputs`` FILE), and run
   under ``gavel-fifo`` and ``gavel-las`` (lease semantics, the defaults).

Prints one row a trace: Gavel's average JCT, ours, their ratio. ``--save FILE`` writes
Gavel's figures with their provenance (commit, commands, date) in the format of
``tests/data/gavel/results.json``; ``--committed`` runs ours on that committed data
alone (no Gavel needed), what the test ``tests/test_gavel_check.py`` asserts.

Example (2026-12-05, the committed data: 8 traces, about 20 CPU s for Gavel and 4 for
ours): ``python experiments/gavel_check.py --gavel /path/to/gavel --gavel-python
/path/to/venv/bin/python --generate --out-dir /tmp/gavel-traces --save
/tmp/results.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from hare_opt.io.gavel import (
    gavel_cluster,
    gavel_instance,
    load_gavel_throughputs,
    read_gavel_trace,
)
from hare_opt.io.output import atomic_write_text
from hare_opt.model.units import unit_seconds
from hare_opt.sim import simulate

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "gavel"
#: Gavel's policy name -> ours.
POLICIES = {"fifo_perf": "gavel-fifo", "max_min_fairness_perf": "gavel-las"}
_AVG = re.compile(r"Average job completion time: ([0-9.]+) seconds")


def scheduler_dir(path: Path) -> Path:
    for d in (path, path / "scheduler"):
        if (d / "scheduler.py").is_file() and (d / "scripts" / "drivers").is_dir():
            return d
    sys.exit(f"--gavel {path}: not a Gavel checkout (no scheduler/scheduler.py)")


def gavel_commit(sched: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(sched), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return out.stdout.strip() if out.returncode == 0 else "unknown (not a git checkout)"


def generate(sched: Path, python: str, seed: int, jobs: int, lam: float, out: Path) -> str:
    """One trace with Gavel's generator, written to ``out``; returns the command."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "t.trace"
        cmd = [
            python,
            "scripts/utils/generate_trace.py",
            "--num_jobs",
            str(jobs),
            "--lam",
            str(lam),
            "--seed",
            str(seed),
            "-m",
            "--throughputs_file",
            "simulation_throughputs.json",
            "--output_file",
            str(raw),
        ]
        subprocess.run(cmd, cwd=sched, check=True, capture_output=True, text=True)
        atomic_write_text(out, raw.read_text(encoding="utf-8"))
    cmd[-1] = out.name
    return shlex.join(cmd[1:])


def run_gavel(
    sched: Path, python: str, trace: Path, policy: str, cluster: str
) -> tuple[float, float, str]:
    """Gavel's average JCT (s) on ``trace``, the CPU seconds it took, the command."""
    cmd = [
        python,
        "scripts/drivers/simulate_scheduler_with_trace.py",
        "-t",
        str(trace.resolve()),
        "-p",
        policy,
        "--throughputs_file",
        "simulation_throughputs.json",
        "-c",
        cluster,
        "--seed",
        "0",
    ]
    t0 = time.process_time()
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, cwd=sched, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (
        (after.ru_utime - before.ru_utime)
        + (after.ru_stime - before.ru_stime)
        + time.process_time()
        - t0
    )
    m = _AVG.search(out.stdout + out.stderr)
    if out.returncode != 0 or not m:
        sys.exit(f"Gavel failed on {trace.name} ({policy}):\n{(out.stderr or out.stdout)[-2000:]}")
    cmd[3] = trace.name
    return float(m[1]), cpu, shlex.join(cmd[1:])


def ours(trace: Path, thr: pd.DataFrame, cluster: str, chunk_s: float = 1.0) -> dict[str, float]:
    """Our average JCT (s) of each policy on ``trace``."""
    inst = gavel_instance(
        read_gavel_trace(trace),
        thr,
        gavel_cluster(cluster),
        chunk_s=chunk_s,
        name=trace.stem.replace(".", "-"),
    )
    sec = unit_seconds(inst.time_unit) or 1.0
    return {g: simulate(inst, p).metrics["avg_jct"] * sec for g, p in POLICIES.items()}


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| trace | jobs | "
        + " | ".join(f"Gavel {g} s | ours {p} s | ratio" for g, p in POLICIES.items())
        + " |"
    )
    lines = [head, "|" + "---|" * (2 + 3 * len(POLICIES))]
    for r in rows:
        cells = [r["trace"], str(r["jobs"])]
        for g in POLICIES:
            cells += [
                f"{r['gavel'][g]:,.0f}",
                f"{r['ours'][g]:,.0f}",
                f"{r['ours'][g] / r['gavel'][g]:.3f}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    for g in POLICIES:
        ratios = [r["ours"][g] / r["gavel"][g] for r in rows]
        lines.append(
            f"{g}: ratio min {min(ratios):.3f}, max {max(ratios):.3f}, "
            f"mean {sum(ratios) / len(ratios):.3f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gavel", type=Path, help="a Gavel checkout (its root or scheduler/)")
    ap.add_argument(
        "--gavel-python",
        default=sys.executable,
        help="the Python that runs Gavel (its requirements installed)",
    )
    ap.add_argument("--traces", type=Path, help="a directory of Gavel *.trace files")
    ap.add_argument(
        "--generate", action="store_true", help="make traces with Gavel's generator into --out-dir"
    )
    ap.add_argument("--out-dir", type=Path, help="where --generate writes the traces")
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument(
        "--lam", type=float, default=2400.0, help="mean inter-arrival time, s (Gavel's --lam)"
    )
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(8)))
    ap.add_argument("--cluster", default="4:4:4", help="#v100:#p100:#k80 (Gavel's -c)")
    ap.add_argument(
        "--throughputs",
        type=Path,
        help="Gavel's simulation_throughputs.json (default: the checkout's)",
    )
    ap.add_argument(
        "--chunk",
        type=float,
        default=1.0,
        help="seconds of the best type in one of our rounds (gavel_instance)",
    )
    ap.add_argument("--save", type=Path, help="write Gavel's figures with provenance here")
    ap.add_argument("--gavel-commit", help="the checkout's commit, if it is no git work tree")
    ap.add_argument(
        "--committed",
        action="store_true",
        help="ours on the committed traces and Gavel results (no Gavel)",
    )
    args = ap.parse_args(argv)

    if args.committed:
        res = json.loads((DATA / "results.json").read_text(encoding="utf-8"))
        thr = pd.read_csv(DATA / "throughputs.csv")
        rows = []
        for name, figs in res["traces"].items():
            path = DATA / "traces" / name
            rows.append(
                {
                    "trace": name,
                    "jobs": len(read_gavel_trace(path)),
                    "gavel": figs,
                    "ours": ours(path, thr, res["cluster"], args.chunk),
                }
            )
        print(table(rows))
        return 0

    if args.gavel is None:
        ap.error("--gavel DIR is needed (or --committed)")
    sched = scheduler_dir(args.gavel)
    thr = load_gavel_throughputs(args.throughputs or sched / "simulation_throughputs.json")
    gen_cmds: dict[str, str] = {}
    if args.generate:
        if args.out_dir is None:
            ap.error("--generate needs --out-dir")
        args.out_dir.mkdir(parents=True, exist_ok=True)
        traces = []
        for s in args.seeds:
            path = args.out_dir / f"n{args.jobs}_l{args.lam:g}_s{s}.trace"
            gen_cmds[path.name] = generate(sched, args.gavel_python, s, args.jobs, args.lam, path)
            traces.append(path)
    elif args.traces is not None:
        traces = sorted(args.traces.glob("*.trace"))
    else:
        ap.error("give --traces DIR or --generate")
    rows, saved = [], {}
    for path in traces:
        gav, cmds = {}, {}
        for g in POLICIES:
            gav[g], cpu, cmds[g] = run_gavel(sched, args.gavel_python, path, g, args.cluster)
        rows.append(
            {
                "trace": path.name,
                "jobs": len(read_gavel_trace(path)),
                "gavel": gav,
                "ours": ours(path, thr, args.cluster, args.chunk),
            }
        )
        saved[path.name] = {
            **gav,
            "commands": cmds,
            **({"generated_by": gen_cmds[path.name]} if path.name in gen_cmds else {}),
        }
        print(f"{path.name}: done", file=sys.stderr, flush=True)
    print(table(rows))
    if args.save:
        doc = {
            "gavel_commit": args.gavel_commit or gavel_commit(sched),
            "cluster": args.cluster,
            "date": datetime.date.today().isoformat(),
            "note": "average JCT in seconds of Gavel's simulator, run from its "
            "scheduler/ directory with the commands given",
            "traces": saved,
        }
        atomic_write_text(args.save, json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
