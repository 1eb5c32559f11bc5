"""Workloads for simulation and the switching model that binds them to a cluster.

The switching model decides each job's ``switch_overhead`` (what the checker
enforces): ``default`` / ``pipeswitch`` / ``hare`` are the Hare paper's Table 3
per-model figures (hare_opt/data/switching_ms.csv), applied by
``hare_opt.generators.build_instance``; ``none`` is zero. An instance file has
no model names, so it runs with its own overheads (``instance``) or none.
"""

from __future__ import annotations

from hare_opt.generators.clusters import parse_cluster
from hare_opt.generators.paper import build_instance, paper_jobs
from hare_opt.generators.philly import philly_jobs_to_specs
from hare_opt.generators.random_gen import random_instance
from hare_opt.generators.regimes import get_regime
from hare_opt.io.philly import load_philly_jobs
from hare_opt.model import Instance, OptionError

WORKLOADS = ("paper", "philly", "random")
SWITCHING = ("default", "pipeswitch", "hare", "none")


def instance_switching(instance: Instance, switching: str | None) -> Instance:
    """Apply ``--switching`` to an instance file: keep its overheads or drop them."""
    if switching in (None, "instance"):
        return instance
    if switching == "none":
        return instance.without_setups()
    raise OptionError(
        f"{switching!r}: an instance file names no models, so only 'instance' "
        "(its own overheads) or 'none' apply; use --workload paper or philly "
        "for the Table 3 switching models",
        option="switching",
        owner="simulate",
    )


def workload_instance(
    workload: str,
    *,
    seed: int = 0,
    n_jobs: int = 40,
    cluster: str = "testbed",
    switching: str = "hare",
    trace: str | None = None,
    regime: str | None = None,
    **job_options,
) -> Instance:
    """A generated workload bound to ``cluster`` (``testbed`` or a spec like ``V100:8,T4:4``).

    ``paper``: the paper-like generator (Poisson arrivals); ``philly``: a window of
    the Philly trace in ``trace`` (its submit times and sizes), or without a file
    the Philly-derived arrival and duration tables shipped in hare_opt/data;
    ``random``: ``random_instance`` with releases, on the cluster's GPU types.
    ``regime`` (paper and philly; ``hare_opt.generators.regimes``): the task size, time
    unit, job lengths and arrival rate by cluster size that the reproduction's cells
    use; None keeps the compressed regime's defaults with the testbed's arrival rate.
    """

    if workload not in WORKLOADS:
        raise OptionError(
            f"must be one of {', '.join(WORKLOADS)}, got {workload!r}",
            option="workload",
            owner="simulate",
        )
    if switching not in SWITCHING:
        raise OptionError(
            f"must be one of {', '.join(SWITCHING)} for a generated workload, got {switching!r}",
            option="switching",
            owner="simulate",
        )
    gpus = parse_cluster(cluster)
    name = f"{workload}-s{seed}-n{n_jobs}"
    if regime is not None:
        if workload == "random":
            raise OptionError(
                "applies to the paper and philly workloads only", option="regime", owner="simulate"
            )
        reg = get_regime(regime)
        job_options = {
            "rounds": reg.rounds,
            "mean_interarrival": reg.mean_interarrival(len(gpus)),
            **job_options,
        }
    if workload == "random":
        types = tuple(dict.fromkeys(g.type for g in gpus))
        inst = random_instance(
            seed,
            n_jobs=n_jobs,
            n_gpus=len(gpus),
            gpu_types=types,
            rounds=(1, 6),
            tasks_per_round=(1, 4),
            release_spread=20 * n_jobs,
            sync=(0, 3),
            switch_overhead=(0, 3),
            name=name,
        )
        return inst.without_setups() if switching == "none" else inst
    if workload == "philly" and trace is not None:
        specs = philly_jobs_to_specs(load_philly_jobs(trace), seed, n_jobs, **job_options)
    else:
        arrival = "trace" if workload == "philly" else "poisson"
        specs = paper_jobs(seed, n_jobs, arrival=arrival, **job_options)
    return build_instance(
        specs, gpus, switching=switching, name=name, regime=regime or "compressed"
    )
