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
from hare_opt.generators.profiles import (
    CATEGORIES,
    PROFILES,
    SWITCHING_MODES,
    ModelProfile,
    model_profile,
)
from hare_opt.generators.random_gen import random_instance

__all__ = ["CATEGORIES", "HETEROGENEITY", "PROFILES", "SWITCHING_MODES", "TESTBED", "JobSpec",
           "ModelProfile", "build_instance", "model_profile", "paper_instance", "paper_jobs",
           "parse_cluster", "random_instance", "rounds_from_duration"]
