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
REFERENCE_GBPS = 25.0  # bandwidth at which sync_ms is tabulated (the paper's testbed)


def read_table(name: str) -> list[dict[str, str]]:
    """Rows of a committed CSV in hare_opt/data (every read of the package's data goes
    through here: ``util.version.note_data`` keys cached results on what was read)."""
    note_data(name)
    with resources.files("hare_opt").joinpath("data", name).open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@dataclass(frozen=True)
class ModelProfile:
    """One paper model: compute time per iteration by GPU type, sync and switching costs.

    A *task* is ``iters_per_task`` iterations between two synchronisations,
    so a task's time is ``iters_per_task * iter_ms``; the sync moves the whole
    model once per task, so it does not grow with the iterations.
    """

    model: str
    category: str
    dataset: str
    batch_size: int
    iter_ms: Mapping[str, float]
    sync_ms: Mapping[str, float]   # at REFERENCE_GBPS
    switch_ms: Mapping[str, float]  # by switching mode
    iters_per_task: int = 100

    @property
    def gpu_types(self) -> tuple[str, ...]:
        return tuple(self.iter_ms)

    def task_time_s(self, gpu_type: str, *, batch_scale: float = 1.0,
                    iters_per_task: int | None = None) -> float:
        """Compute time of one task; ``iters_per_task`` overrides the table's (a regime's)."""
        iters = self.iters_per_task if iters_per_task is None else iters_per_task
        return self.iter_ms[gpu_type] * iters * batch_scale / 1000

    def sync_time_s(self, gpu_type: str, *, bandwidth_gbps: float = REFERENCE_GBPS) -> float:
        return self.sync_ms[gpu_type] / 1000 * REFERENCE_GBPS / bandwidth_gbps

    def switch_s(self, mode: str) -> float:
        if mode not in SWITCHING_MODES:
            raise OptionError(f"switching: must be one of {', '.join(SWITCHING_MODES)}, "
                             f"got {mode!r}")
        return 0.0 if mode == "none" else self.switch_ms[mode] / 1000


@cache
def _load() -> Mapping[str, ModelProfile]:
    switch = {r["model"]: {"default": float(r["default_ms"]),
                           "pipeswitch": float(r["pipeswitch_ms"]),
                           "hare": float(r["hare_ms"])} for r in read_table("switching_ms.csv")}
    rows: dict[str, list[dict[str, str]]] = {}
    for r in read_table("gpu_profiles.csv"):
        rows.setdefault(r["model"], []).append(r)
    out = {}
    for model, rs in rows.items():
        first = rs[0]
        out[model] = ModelProfile(
            model, first["category"], first["dataset"], int(first["batch_size"]),
            MappingProxyType({r["gpu_type"]: float(r["iter_ms"]) for r in rs}),
            MappingProxyType({r["gpu_type"]: float(r["sync_ms_25gbps"]) for r in rs}),
            MappingProxyType(switch[model]), int(first["iters_per_task"]))
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
