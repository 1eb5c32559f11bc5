"""One look for every figure of the reproduction: a policy keeps its colour in every
figure, the three Hare variants are told apart at a glance, and figures are saved with
their labels inside the image."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Fixed colours (colour-blind-safe where possible); others cycle through ``_OTHERS``.
POLICY_COLORS = {
    "hare": "#d62728",                    # red: ours
    "hare-paper": "#6a3d9a",              # dark purple: Algorithm 1, phi reading
    "hare-paper:step3=start": "#b294c7",  # light purple: Algorithm 1, start reading
    "hare:work_conserving=false": "#ff9896",  # light red: the engine before work conservation
    "allox": "#1f77b4",
    "sched-homo": "#ff7f0e",
    "srtf": "#2ca02c",
    "gavel-fifo": "#7f7f7f",
    "gavel-las": "#bcbd22",
    "tiresias": "#17becf",
    "hlas": "#e377c2",
}
_OTHERS = ["#8c564b", "#9edae5", "#c5b0d5", "#dbdb8d", "#393b79", "#637939"]


def policy_color(policy: str) -> str:
    """The policy's colour in every figure (an unknown name: one of the spare ones, the
    same for the same name)."""
    if policy in POLICY_COLORS:
        return POLICY_COLORS[policy]
    return _OTHERS[sum(map(ord, policy)) % len(_OTHERS)]


def save_figure(fig: Any, path: str | Path) -> None:
    """Write ``fig`` (a ``matplotlib.figure.Figure``) at the reproduction's resolution,
    nothing clipped (ours-bounds' axis labels were)."""
    fig.tight_layout()
    fig.savefig(path, dpi=90, bbox_inches="tight")
