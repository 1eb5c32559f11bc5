"""Regenerate the instance library: instances/{tiny,small,paper}/*.json + manifest.json.

The sets are defined in hare_opt.generators.library; this writes them and their
manifests. ``--check`` only compares with the committed files (exit 1 on a
difference). Rerun: ``python experiments/make_instances.py [--check] [SET ...]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hare_opt.generators.library import SEED_STEP, SETS, TASK_RANGE, build_set
from hare_opt.io import atomic_write_text, dumps_instance

ROOT = Path(__file__).resolve().parents[1] / "instances"


def manifest_text(name: str, records: list[dict]) -> str:
    lo, hi = TASK_RANGE[name]
    head = {
        "set": name,
        "regenerate": f"python experiments/make_instances.py {name}",
        "note": f"each file is generator(**kwargs); seeds whose draw fell outside "
        f"{lo}-{hi} tasks were advanced by {SEED_STEP} (kwargs show the seed used)",
    }
    rows = ",\n".join("    " + json.dumps(r) for r in records)
    return json.dumps(head, indent=2)[:-2] + f',\n  "instances": [\n{rows}\n  ]\n}}\n'


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("sets", nargs="*", metavar="SET", help=f"some of {', '.join(SETS)}")
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args()
    unknown = sorted(set(args.sets) - set(SETS))
    if unknown:
        ap.error(f"unknown set(s) {unknown}; choose from {', '.join(SETS)}")
    diff = 0
    for name in args.sets or list(SETS):
        built = build_set(name)
        files = {f"{stem}.json": dumps_instance(inst) for stem, inst, _ in built}
        files["manifest.json"] = manifest_text(name, [r for _, _, r in built])
        for fname, text in files.items():
            path = ROOT / name / fname
            same = path.exists() and path.read_text() == text
            diff += not same
            if not same and not args.check:
                atomic_write_text(path, text)
            if not same:
                print(f"{path.relative_to(ROOT.parent)}: {'differs' if args.check else 'written'}")
        tasks = [r["tasks"] for _, _, r in built]
        print(f"{name}: {len(built)} instances, tasks {min(tasks)}-{max(tasks)}")
    return 1 if args.check and diff else 0


if __name__ == "__main__":
    sys.exit(main())
