"""Regenerate instances/guarantee/: geobatch's worst cases and the cascade family.

Writes the cascade instances (``examples.cascade_instance``), re-solves every
instance of the folder with ``geobatch`` (schedule next to it), takes OPT from
the critical-path bound (cascade: it is attained) or from CP-SAT (the falsify
finds, which must be proved optimal; for the one found against the lower bound
the manifest holds ``lower_bound`` instead), and writes manifest.json, which
tests/test_geobatch.py pins. The falsify finds are copied in by hand from the
hunts listed in the folder's README (``--out`` of ``hare-opt falsify``).

    python experiments/guarantee_instances.py
"""

from __future__ import annotations

import json
from pathlib import Path

from hare_opt.bounds import approx_factor, critical_path_bound, lower_bound
from hare_opt.examples import cascade_instance
from hare_opt.io import load_instance, save_instance, save_result
from hare_opt.solvers import solve

FOLDER = Path(__file__).resolve().parents[1] / "instances" / "guarantee"
CASCADE = [(k, 10_000) for k in (3, 4, 5, 6)]
#: Finds of the hunt against the lower bound: too big for CP-SAT to prove OPT.
UNPROVED = {"hunt-bound-large"}


def main() -> None:
    for k, heavy in CASCADE:
        inst = cascade_instance(k, heavy)
        save_instance(inst, FOLDER / f"{inst.name}.json")
    manifest = {}
    for path in sorted(FOLDER.glob("*.json")):
        if path.name == "manifest.json" or path.name.endswith(".schedule.json"):
            continue
        inst = load_instance(path)
        res = solve(inst, "geobatch")
        save_result(res, path.with_suffix(".schedule.json"))
        if path.stem.startswith("cascade"):
            opt, source = critical_path_bound(inst), "critical_path"
        elif path.stem in UNPROVED:  # CP-SAT does not close the gap: pin the lower bound
            opt, source = int(lower_bound(inst)), "lower_bound"
        else:
            ref = solve(inst, "cpsat", time_limit=120, threads=1)
            if ref.status != "optimal":
                raise SystemExit(f"{path.name}: CP-SAT did not prove the optimum")
            opt, source = int(ref.objective), "cpsat"
        factor = approx_factor(inst)
        manifest[path.stem] = {
            "file": path.name,
            "objective": int(res.objective),
            "opt": opt,
            "opt_source": source,
            "ratio": round(res.objective / opt, 6),
            "approx_factor": factor,
            "gpus": inst.num_gpus,
            "jobs": inst.num_jobs,
            "tasks": inst.num_tasks,
            "hare": int(solve(inst, "hare").objective),
        }
        print(path.stem, manifest[path.stem])
    (FOLDER / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
