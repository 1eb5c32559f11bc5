"""CPU seconds of one `hare-paper` simulation run, both readings of step 3, as the
reproduction's cells run it (the goal: at most 30 s for 300 jobs on 160 GPUs).

Each run is a fresh process (imports and loading the compiled kernels timed apart);
with ``--base DIR`` (a ``git worktree`` of another commit) every run is repeated on
that code right after, so the two are measured side by side on the same machine load.

    python experiments/bench_hare_paper.py                        # testbed and 160/300
    python experiments/bench_hare_paper.py --seed 1001 --base /tmp/base
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READINGS = ("hare-paper", "hare-paper:step3=start")
#: setting name -> the items' helper call giving its cell parameters
SETTINGS = {"testbed, 40 jobs": "testbed()", "160 GPUs, 300 jobs": "large(160, 300)"}
RUN = """
import json, sys, time
t0 = time.process_time()
from hare_opt.sweeps.items import large, testbed
from hare_opt.sweeps.simulate import simulate_cell
simulate_cell(seed=0, policy=sys.argv[2], n_jobs=2, regime="compressed")  # kernels loaded
t1 = time.process_time()
row = simulate_cell(seed=int(sys.argv[1]), policy=sys.argv[2], **eval(sys.argv[3]))[0]
print(json.dumps({"cpu": time.process_time() - t1, "load": t1 - t0,
                  "wjct": row["total_weighted_jct_s"], "plans": row["plans"]}))
"""


def run(code: Path, seed: int, policy: str, setting: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run(
        [sys.executable, "-c", RUN, str(seed), policy, setting],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=code,
    )
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1001)
    ap.add_argument("--base", type=Path, help="a worktree of the code to compare with")
    args = ap.parse_args()
    codes = [("this", ROOT)] + ([("base", args.base.resolve())] if args.base else [])
    print(f"seed {args.seed}; CPU s of the run (imports and kernel loading apart)")
    print(
        f"{'setting':20s} {'reading':24s} {'code':5s} {'CPU s':>7s} {'load s':>7s} "
        f"{'plans':>6s} {'total weighted JCT, s':>22s}"
    )
    for name, setting in SETTINGS.items():
        for policy in READINGS:
            for label, code in codes:
                r = run(code, args.seed, policy, setting)
                print(
                    f"{name:20s} {policy:24s} {label:5s} {r['cpu']:7.2f} {r['load']:7.2f} "
                    f"{r['plans']:6d} {r['wjct']:22.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
