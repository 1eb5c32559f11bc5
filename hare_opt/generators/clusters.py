"""Cluster specs such as ``"V100:8,T4:4,K80:1,M60:2"`` and the paper's named clusters."""

from __future__ import annotations

import re

from hare_opt.model import GPU, InstanceError

#: The paper's testbed: 15 GPUs on 4 cloud instances (section 6).
TESTBED = "V100:8,T4:4,K80:1,M60:2"
#: Fig. 16's heterogeneity levels on 16 GPUs (our sizes; the paper's counts are not given).
HETEROGENEITY = {"low": "V100:16", "middle": "V100:8,K80:8", "high": "V100:4,T4:4,K80:4,M60:4"}

#: Clusters known by name (``--cluster testbed``).
NAMED = {"testbed": TESTBED}
#: Most GPUs a cluster spec may ask for: counted before any is made (10^9 is a typo,
#: and would take minutes and gigabytes to build).
MAX_GPUS = 10**5


def cluster_of(n_gpus: int) -> str:
    """A cluster of ``n_gpus`` GPUs in the testbed's type proportions (8:4:1:2)."""
    shares = {"V100": 8, "T4": 4, "K80": 1, "M60": 2}
    counts = {t: max(1, int(round(n_gpus * s / 15))) for t, s in shares.items()}
    counts["V100"] += n_gpus - sum(counts.values())
    return ",".join(f"{t}:{c}" for t, c in counts.items())


_ITEM = re.compile(r"^(?P<type>[A-Za-z0-9_.\-]+):(?P<count>\d{1,18})(?:@(?P<per>\d{1,18}))?$")


def parse_cluster(spec: str) -> tuple[GPU, ...]:
    """GPUs of a spec ``TYPE:COUNT[@PER_NODE],...`` (or a name of ``NAMED``); ids ``TYPE-i``.

    With ``@PER_NODE`` the GPUs of that type are packed onto nodes named
    ``TYPE-n0``, ``TYPE-n1``... of PER_NODE GPUs each (the node is informational).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InstanceError(
            f"empty cluster spec {spec!r}; expected e.g. {TESTBED!r}", field="cluster"
        )
    spec = NAMED.get(spec.strip(), spec)
    items = []
    seen: set[str] = set()
    for item in (s.strip() for s in spec.split(",")):
        m = _ITEM.match(item)
        if not m:
            raise InstanceError(
                f"bad item {item!r} in {spec!r}; expected TYPE:COUNT "
                f"(e.g. {TESTBED!r}) or one of {', '.join(NAMED)}",
                field="cluster",
            )
        t, count, per = m["type"], int(m["count"]), m["per"]
        if t in seen:
            raise InstanceError(f"GPU type {t!r} is listed twice in {spec!r}", field="cluster")
        if count < 1 or (per is not None and int(per) < 1):
            raise InstanceError(f"item {item!r}: counts must be >= 1", field="cluster")
        seen.add(t)
        items.append((t, count, per))
    total = sum(count for _, count, _ in items)
    if total > MAX_GPUS:
        raise InstanceError(
            f"{spec!r} asks for {total:,} GPUs, more than the {MAX_GPUS:,} a cluster may have",
            field="cluster",
        )
    gpus: list[GPU] = []
    for t, count, per in items:
        for i in range(count):
            node = None if per is None else f"{t}-n{i // int(per)}"
            gpus.append(GPU(f"{t}-{i}", t, node))
    return tuple(gpus)
