"""Per-model, per-GPU-type timings of the paper's workload, read from hare_opt/data.

The tables are derived once from measured data by experiments/derive_profiles.py
(sources in hare_opt/data/PROVENANCE.md), so generating a paper-like instance
needs no trace files. Times here are in seconds or ms as floats; conversion to
an instance's integer time unit happens in ``paper.build_instance``.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType

from hare_opt.model import OptionError
from hare_opt.util.version import note_data

CATEGORIES = ("CV", "NLP", "Speech", "Rec")
SWITCHING_MODES = ("default", "pipeswitch", "hare", "none")
REFERENCE_GBPS = 25.0  # bandwidth at which the syncs are tabulated (the paper's testbed)
#: How a task's sync is modelled (a regime's ``sync``): ``exposed`` is the part of the
#: all-reduce that the batch's own compute does not hide (a job on one GPU: one worker's
#: local sync, no network); ``least-overlap`` is one network sync per task, the same for
#: every job and GPU type, measured where compute hid least of it.
SYNC_RULES = ("exposed", "least-overlap")


def read_table(name: str) -> list[dict[str, str]]:
    """Rows of a committed CSV in hare_opt/data (every read of the package's data goes
    through here: ``util.version.note_data`` keys cached results on what was read)."""
    note_data(name)
    with resources.files("hare_opt").joinpath("data", name).open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@dataclass(frozen=True)
class SyncProfile:
    """A model's synchronisation costs (ms; network figures at ``REFERENCE_GBPS``).

    ``allreduce_ms``: the all-reduce of its gradients with nothing hidden; ``overlap``:
    the share of a batch's compute that hides it (the all-reduce runs during the backward
    pass), so the sync left after the compute is max(``floor_ms``, allreduce - overlap x
    compute); ``floor_ms``: the network's latency floor; ``single_ms``: one worker's sync
    (local, no network); ``least_overlap_ms``: one network sync measured where compute
    hid least of it (the ``paper-heavy-sync`` regime's)."""

    allreduce_ms: float
    overlap: float
    floor_ms: float
    single_ms: float
    least_overlap_ms: float

    def __post_init__(self) -> None:
        for name in ("allreduce_ms", "floor_ms", "single_ms", "least_overlap_ms"):
            if not getattr(self, name) >= 0:
                raise OptionError(f"{name}: must be >= 0, got {getattr(self, name)!r}")
        if not 0 <= self.overlap <= 1:
            raise OptionError(f"overlap: must be in [0, 1], got {self.overlap!r}")


@dataclass(frozen=True)
class ModelProfile:
    """One paper model: compute time per iteration by GPU type, sync and switching costs.

    A *task* is ``iters_per_task`` iterations between two synchronisations,
    so a task's time is ``iters_per_task * iter_ms``; the sync moves the whole
    model once per task, so it does not grow with the iterations (only the last
    iteration's compute can hide it).
    """

    model: str
    category: str
    dataset: str
    batch_size: int
    iter_ms: Mapping[str, float]
    sync: SyncProfile
    switch_ms: Mapping[str, float]  # by switching mode
    iters_per_task: int = 100

    @property
    def gpu_types(self) -> tuple[str, ...]:
        return tuple(self.iter_ms)

    def task_time_s(
        self, gpu_type: str, *, batch_scale: float = 1.0, iters_per_task: int | None = None
    ) -> float:
        """Compute time of one task; ``iters_per_task`` overrides the table's (a regime's)."""
        iters = self.iters_per_task if iters_per_task is None else iters_per_task
        return self.iter_ms[gpu_type] * iters * batch_scale / 1000

    def sync_time_s(
        self,
        gpu_type: str,
        *,
        rule: str = "exposed",
        workers: int = 2,
        bandwidth_gbps: float = REFERENCE_GBPS,
        batch_scale: float = 1.0,
    ) -> float:
        """Sync of one task of a job with ``workers`` tasks a round on ``gpu_type`` (s).

        ``exposed``: one worker syncs locally (``single_ms``, no network); more sync over
        the network, which only the all-reduce's volume feels (x 25 Gbps / bandwidth),
        less what the batch's compute on this GPU type hides (a larger batch hides more).
        ``least-overlap``: the same network sync for every job and GPU type.
        """
        s = self.sync
        if rule == "least-overlap":
            return s.least_overlap_ms / 1000 * REFERENCE_GBPS / bandwidth_gbps
        if rule != "exposed":
            raise OptionError(f"sync: must be one of {', '.join(SYNC_RULES)}, got {rule!r}")
        if workers <= 1:
            return s.single_ms / 1000
        left = (
            s.allreduce_ms * REFERENCE_GBPS / bandwidth_gbps
            - s.overlap * self.iter_ms[gpu_type] * batch_scale
        )
        return max(s.floor_ms, left) / 1000

    def switch_s(self, mode: str) -> float:
        if mode not in SWITCHING_MODES:
            raise OptionError(
                f"switching: must be one of {', '.join(SWITCHING_MODES)}, got {mode!r}"
            )
        return 0.0 if mode == "none" else self.switch_ms[mode] / 1000


@cache
def _load() -> Mapping[str, ModelProfile]:
    switch = {
        r["model"]: {
            "default": float(r["default_ms"]),
            "pipeswitch": float(r["pipeswitch_ms"]),
            "hare": float(r["hare_ms"]),
        }
        for r in read_table("switching_ms.csv")
    }
    rows: dict[str, list[dict[str, str]]] = {}
    for r in read_table("gpu_profiles.csv"):
        rows.setdefault(r["model"], []).append(r)
    out = {}
    for model, rs in rows.items():
        first = rs[0]
        sync = SyncProfile(
            float(first["allreduce_ms_25gbps"]),
            float(first["overlap"]),
            float(first["sync_floor_ms"]),
            float(first["sync_1gpu_ms"]),
            float(first["sync_least_overlap_ms_25gbps"]),
        )
        out[model] = ModelProfile(
            model,
            first["category"],
            first["dataset"],
            int(first["batch_size"]),
            MappingProxyType({r["gpu_type"]: float(r["iter_ms"]) for r in rs}),
            sync,
            MappingProxyType(switch[model]),
            int(first["iters_per_task"]),
        )
    return MappingProxyType(out)


class _Profiles(Mapping[str, ModelProfile]):
    """Read-only ``{model: ModelProfile}``, loaded on first use."""

    def __getitem__(self, model: str) -> ModelProfile:
        return _load()[model]

    def __iter__(self):
        return iter(_load())

    def __len__(self) -> int:
        return len(_load())

    def by_category(self, category: str) -> tuple[ModelProfile, ...]:
        return tuple(p for p in self.values() if p.category == category)


PROFILES = _Profiles()


def model_profile(model: str) -> ModelProfile:
    """The profile of one of the paper's models (clear error on an unknown name)."""
    if model not in PROFILES:
        raise OptionError(f"model: unknown model {model!r}; known: {', '.join(PROFILES)}")
    return PROFILES[model]
