"""A generated workload simulated as ``hare-opt simulate --workload`` runs it.

Why: under ``lease`` semantics a gang policy moving a job pays what a framework pays to
load it, Table 3's ``default`` column, and a relaxed policy Hare's switching
(``semantics.switching_for``; docs/simulator.md). One workload is therefore built once
per column its policies need. ``simulate(instance, policy)`` runs an instance as it was
built, whatever the policy, so the same workload given to it as one instance gives the
gang baselines other numbers. This is the one place that builds a workload per policy:
the command line calls it, so Python and the command give the same numbers
(tests/test_sim_cli.py), and every result names its column
(``metrics["switching_model"]``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from hare_opt.model import Instance
from hare_opt.sim.policy import policy_mode
from hare_opt.sim.results import SimResult
from hare_opt.sim.semantics import DEFAULT_SEMANTICS, switching_for
from hare_opt.sim.simulator import simulate

#: Opens a progress bar for one policy's run on its instance (closed after the run).
Bars = Callable[[str, Instance], Any]


def simulate_workload(
    workload: str,
    policies: Sequence[str],
    *,
    seed: int = 0,
    n_jobs: int = 40,
    cluster: str = "testbed",
    switching: str = "hare",
    semantics: str = DEFAULT_SEMANTICS,
    regime: str | None = None,
    trace: str | None = None,
    bars: Bars | None = None,
) -> list[SimResult]:
    """Run ``policies`` (names, or ``NAME:KEY=VALUE`` variants) on the generated
    ``workload`` (``generators.workload_instance``: ``paper``, ``philly`` or ``random``),
    each on the jobs built with its own Table 3 column: ``switching`` for relaxed
    policies (and gang ones under ``per-round``), the lease column for gang policies
    under ``lease``. Each result's ``metrics["switching_model"]`` names the column."""
    from hare_opt.generators import workload_instance

    built: dict[str, Instance] = {}
    runs = []
    for name in policies:
        column = switching_for(policy_mode(name), semantics, switching)
        if column not in built:
            built[column] = workload_instance(
                workload,
                seed=seed,
                n_jobs=n_jobs,
                cluster=cluster,
                switching=column,
                trace=trace,
                regime=regime,
            )
        inst = built[column]
        with bars(name, inst) if bars is not None else contextlib.nullcontext() as bar:
            run = simulate(inst, name, progress=bar, semantics=semantics)
        run.metrics["switching_model"] = column
        runs.append(run)
    return runs
