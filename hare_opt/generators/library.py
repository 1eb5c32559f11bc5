"""The committed instance library (instances/tiny, small, paper) as generator calls.

Each set is a list of (file stem, generator, keyword arguments); the manifest
written next to the files records exactly these, so anyone can regenerate an
instance by hand, and experiments/make_instances.py (or a test) can check that
the committed files are still what the generators produce.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from hare_opt.generators.clusters import TESTBED
from hare_opt.generators.paper import paper_instance
from hare_opt.generators.random_gen import random_instance
from hare_opt.model import HareOptError, Instance

GENERATORS: dict[str, Callable[..., Instance]] = {
    "random_instance": random_instance,
    "paper_instance": paper_instance,
}
SPREADS = (0.0, 0.5, 1.0, 2.0, 3.0)


def _tiny() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for i in range(24):
        yield (
            f"tiny-{i:02d}",
            "random_instance",
            dict(
                seed=100 + i,
                n_jobs=2 + i % 3,
                n_gpus=1 + i % 3,
                max_tasks=8,
                rounds=(1, 3),
                tasks_per_round=(1, 3),
                heterogeneity=SPREADS[i % 4],
                release_spread=0 if i % 4 == 0 else 6,
                sync=(0, 2),
                sync_map=i % 2 == 1,
                switch_overhead=(0, 0) if i % 3 == 0 else (0, 2),
                eligibility=0.3 if i % 4 in (1, 2) else 0.0,
                max_task_time=6,
                name=f"tiny-{i:02d}",
            ),
        )


def _small() -> Iterator[tuple[str, str, dict[str, Any]]]:
    # Contention makes exact proofs hard: most instances have 3-6 GPUs and 20-30 tasks,
    # one in four is tighter (2 GPUs) or larger (up to 60 tasks).
    gpus = (3, 4, 5, 6, 2, 4, 5, 3)
    caps = (22, 24, 26, 28, 30, 24, 36, 60)
    for i in range(24):
        yield (
            f"small-{i:02d}",
            "random_instance",
            dict(
                seed=200 + i,
                n_jobs=10 if i % 8 == 7 else 4 + i % 4,
                n_gpus=gpus[i % 8],
                gpu_types=("V100", "P100", "K80") if i % 3 else ("V100", "K80"),
                max_tasks=caps[i % 8],
                rounds=(1, 4),
                tasks_per_round=(1, 4),
                heterogeneity=SPREADS[1 + i % 4],
                release_spread=10 + 2 * (i % 6),
                sync=(0, 3),
                sync_map=i % 2 == 0,
                switch_overhead=(1, 3) if i % 4 == 0 else (0, 2),
                eligibility=0.2 if i % 5 == 2 else 0.0,
                max_task_time=10 + 2 * (i % 6),
                name=f"small-{i:02d}",
            ),
        )


def _paper() -> Iterator[tuple[str, str, dict[str, Any]]]:
    variants: tuple[dict[str, Any], ...] = (
        dict(seed=1, n_jobs=20),
        dict(seed=2, n_jobs=30),
        dict(seed=3, n_jobs=40),
        dict(seed=4, n_jobs=30, switching="default"),
        dict(seed=5, n_jobs=30, arrival="trace"),
        dict(seed=6, n_jobs=30, mix=(2, 1, 1, 1)),
    )
    for i, kw in enumerate(variants):
        yield f"paper-{i:02d}", "paper_instance", dict(kw, cluster=TESTBED, name=f"paper-{i:02d}")


SETS = {"tiny": _tiny, "small": _small, "paper": _paper}
#: Task-count window each set promises; a draw outside it moves on to the next seed.
TASK_RANGE = {"tiny": (1, 8), "small": (20, 60), "paper": (150, 2000)}
SEED_STEP = 1000


def build_set(name: str) -> list[tuple[str, Instance, dict[str, Any]]]:
    """(stem, instance, manifest record) for every instance of a set.

    When a draw misses the set's task window the seed advances by SEED_STEP
    (deterministically); the record keeps the seed actually used.
    """
    lo, hi = TASK_RANGE[name]
    out = []
    for stem, gen, kwargs in SETS[name]():
        kw = dict(kwargs)
        for _ in range(50):
            inst = GENERATORS[gen](**kw)
            if lo <= inst.num_tasks <= hi:
                break
            kw["seed"] += SEED_STEP
        else:
            raise HareOptError(f"{stem}: no seed gave {lo}-{hi} tasks")
        out.append(
            (
                stem,
                inst,
                {
                    "file": f"{stem}.json",
                    "generator": f"hare_opt.generators.{gen}",
                    "kwargs": kw,
                    "jobs": inst.num_jobs,
                    "gpus": inst.num_gpus,
                    "tasks": inst.num_tasks,
                    "time_unit": inst.time_unit,
                },
            )
        )
    return out
