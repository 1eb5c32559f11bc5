"""Instance generators: seeded random instances and the Hare paper's workloads.

Same seed and arguments -> identical instance, so libraries and experiments
can be regenerated exactly (experiments/make_instances.py).
"""

from hare_opt.generators.clusters import HETEROGENEITY, TESTBED, parse_cluster
from hare_opt.generators.paper import (
    JobSpec,
    build_instance,
    paper_instance,
    paper_jobs,
    rounds_from_duration,
)
from hare_opt.generators.philly import philly_jobs_to_specs
from hare_opt.generators.profiles import (
    CATEGORIES,
    PROFILES,
    SWITCHING_MODES,
    ModelProfile,
    model_profile,
)
from hare_opt.generators.random_gen import random_instance
from hare_opt.generators.regimes import REGIMES, Regime, get_regime
from hare_opt.generators.workloads import (
    SWITCHING,
    WORKLOADS,
    instance_switching,
    workload_instance,
)

__all__ = [
    "CATEGORIES",
    "HETEROGENEITY",
    "PROFILES",
    "REGIMES",
    "SWITCHING",
    "SWITCHING_MODES",
    "TESTBED",
    "WORKLOADS",
    "JobSpec",
    "ModelProfile",
    "Regime",
    "get_regime",
    "build_instance",
    "instance_switching",
    "model_profile",
    "paper_instance",
    "paper_jobs",
    "parse_cluster",
    "philly_jobs_to_specs",
    "random_instance",
    "rounds_from_duration",
    "workload_instance",
]
