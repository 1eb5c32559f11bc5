"""Start-up cost of a researcher's first commands, end to end through the command line.

Prints, per solver, the process CPU (user + sys of the child, imports included) of a warm
``hare-opt solve instances/fig1.json`` next to the ``runtime_s`` it reports; the
``runtime_s`` of the special cases (Smith's rule, Horn's assignment, one job) under every
exact solver; and the cold compile: a first ``solve`` in a fresh NUMBA_CACHE_DIR (a temp
folder) and the CPU of a ``simulate`` after it in that folder (which must not compile).

    .venv/bin/python experiments/bench_startup.py [--repeat 3] [--no-cold] [--json]

Writes experiments/results/bench_startup.json (every figure printed).

Measure CPU, not wall time (the machine is shared); medians of ``--repeat`` runs after one
run that warms the cache. Python's bytecode cache is on in every child, as it is for a user
(its files go to a temp folder, PYTHONPYCACHEPREFIX, so the checkout stays clean; an
environment with PYTHONDONTWRITEBYTECODE set compiles the package's modules from source at
every start, 0.05-0.1 CPU s more per command).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from hare_opt.generators import random_instance
from hare_opt.io import instance_to_dict
from hare_opt.io.output import atomic_write_text
from hare_opt.model import Instance, Job
from hare_opt.solvers import available_solvers, solver_names
from hare_opt.util.jit import ANNOUNCEMENT

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results" / "bench_startup.json"
FIG1 = ROOT / "instances" / "fig1.json"
#: An instance whose ``hare`` solve loads, or on a cold cache compiles, the kernels.
COMPILES = ROOT / "instances" / "small" / "small-00.json"
HARE_OPT = [str(Path(sys.executable).with_name("hare-opt"))]


def child(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str, str]:
    """(child CPU s: user + sys, stdout, stderr) of one command; raises when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=1800,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {proc.stderr[-800:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, proc.stdout, proc.stderr


def cli(args: list[str], env: dict[str, str] | None = None) -> tuple[float, str, str]:
    """(child CPU s, stdout, stderr) of one ``hare-opt`` command."""
    return child(HARE_OPT + args, env)


def yardstick(repeat: int) -> float:
    """Median child CPU of ``python -c "import numpy"``: the machine's speed at the time
    (a shared machine's CPU seconds drift; every figure here moves with this one)."""
    times = [child([sys.executable, "-c", "import numpy"])[0] for _ in range(repeat + 1)]
    return round(statistics.median(times[1:]), 3)


def solve_row(path: Path, solver: str, repeat: int) -> dict:
    """Median process CPU and ``runtime_s`` of a warm ``solve --json``."""
    cmd = ["solve", str(path), "--solver", solver, "--json"]
    cli(cmd)  # warms the caches
    cpus, runtimes = [], []
    for _ in range(repeat):
        cpu, out, _ = cli(cmd)
        res = json.loads(out)
        cpus.append(cpu)
        runtimes.append(res["runtime_s"])
    return {
        "solver": solver,
        "cpu_s": round(statistics.median(cpus), 3),
        "runtime_s": round(statistics.median(runtimes), 4),
        "status": res["status"],
        "objective": res["objective"],
        "special": res["stats"].get("special"),
        "compile_s": res["stats"].get("compile_s"),
    }


def special_instances() -> dict[str, Instance]:
    """One instance of each special case (solvers/special.py), beyond a toy's size."""
    horn = random_instance(1, n_jobs=30, n_gpus=3, rounds=(1, 1), tasks_per_round=(1, 1))
    horn = horn.with_jobs([Job(j.id, j.task_time) for j in horn.jobs], name="horn-30")
    smith = random_instance(2, n_jobs=40, n_gpus=1, rounds=(1, 3), name="smith-40")
    one = random_instance(
        3, n_jobs=1, n_gpus=4, rounds=(4, 6), tasks_per_round=(2, 4), sync=(1, 3), name="one-job"
    )
    return {"smith": smith, "horn": horn, "one_job": one}


#: Run in a child with a fresh cache: numba's compile events' CPU (process time, a
#: kernel's callees inside its compile), then the CPU of loading every group.
COMPILE_ONLY = """
import json, time
from numba.core import event
from hare_opt.solvers.kernels import LOADER
depth, spent = [0, 0.0], [0.0]
class Clock(event.Listener):
    def on_start(self, ev):
        depth[0] += 1
        if depth[0] == 1:
            depth[1] = time.process_time()
    def on_end(self, ev):
        depth[0] -= 1
        if depth[0] == 0:
            spent[0] += time.process_time() - depth[1]
event.register("numba:compile", Clock())
t0 = time.process_time()
LOADER.warm_kernels(tuple(LOADER.groups))
print(json.dumps({"compile_cpu_s": spent[0], "load_cpu_s": time.process_time() - t0}))
"""


def cold(tmp: Path) -> dict:
    """CPU of a first solve in a fresh numba cache (it compiles every kernel group) and of
    a ``simulate`` after it in the same cache (it should load, not compile); and, in
    another fresh cache, the CPU of numba's compiling alone."""
    _, out, _ = child([sys.executable, "-c", COMPILE_ONLY], {"NUMBA_CACHE_DIR": str(tmp / "c")})
    alone = json.loads(out)
    env = {"NUMBA_CACHE_DIR": str(tmp / "numba")}
    first, out, err = cli(["solve", str(COMPILES), "--solver", "hare", "--json"], env)
    stats = json.loads(out).get("stats", {})
    sim, _, sim_err = cli(
        ["simulate", "--workload", "paper", "--jobs", "6", "--no-progress", "--json"], env
    )
    return {
        "first_solve_cpu_s": round(first, 2),
        "compile_s": stats.get("compile_s"),
        "compile_only_cpu_s": round(alone["compile_cpu_s"], 2),
        "load_every_group_cpu_s": round(alone["load_cpu_s"], 2),
        "compiled": ANNOUNCEMENT in err,
        "simulate_after_cpu_s": round(sim, 2),
        "simulate_compiled": ANNOUNCEMENT in sim_err,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-cold", action="store_true", help="skip the cold compile (minutes)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # every child gets Python's bytecode cache, as a user's Python has it
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pyc")
        fig1 = [solve_row(FIG1, s, args.repeat) for s in available_solvers()]
        out: dict = {"fig1": fig1, "import_numpy_cpu_s": yardstick(args.repeat)}
        exact = [s for s in solver_names("exact") if s in available_solvers()]
        rows = []
        for case, inst in special_instances().items():
            path = Path(tmp) / f"{case}.json"
            path.write_text(json.dumps(instance_to_dict(inst)))
            for solver in exact:
                rows.append(
                    {"case": case, "tasks": inst.num_tasks, **solve_row(path, solver, args.repeat)}
                )
        out["special"] = rows
        if not args.no_cold:
            out["cold"] = cold(Path(tmp))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(RESULTS, json.dumps(out, indent=1) + "\n")
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print("warm solve of instances/fig1.json (median of", args.repeat, "runs)")
    print(f"yardstick: python -c 'import numpy' {out['import_numpy_cpu_s']} CPU s")
    print(f"{'solver':12} {'process CPU s':>14} {'runtime_s':>10}")
    for r in out["fig1"]:
        print(f"{r['solver']:12} {r['cpu_s']:>14.3f} {r['runtime_s']:>10.4f}")
    print("\nspecial cases: runtime_s (process CPU s)")
    for r in out["special"]:
        print(
            f"{r['case']:8} {r['tasks']:>4} tasks {r['solver']:10} {r['runtime_s']:>8.4f} "
            f"({r['cpu_s']:.2f})  special={r['special']} status={r['status']}"
        )
    if "cold" in out:
        c = out["cold"]
        print(
            f"\ncold cache: first solve {c['first_solve_cpu_s']} CPU s (compiled: "
            f"{c['compiled']}; loading every group {c['compile_s']} s of it)"
        )
        print(
            f"simulate after it {c['simulate_after_cpu_s']} CPU s "
            f"(compiled: {c['simulate_compiled']})"
        )
        print(
            f"every group in a fresh cache: numba compiling {c['compile_only_cpu_s']} CPU s "
            f"of {c['load_every_group_cpu_s']} CPU s loading (warm-up runs included)"
        )


if __name__ == "__main__":
    main()
