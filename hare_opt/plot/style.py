"""One look for every figure: a policy (or solver) keeps its colour and marker in every
figure, the three Hare variants are told apart at a glance, every figure has a title,
and figures are written with their labels inside the image, through the one output
helper (``hare_opt.io.output``)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from hare_opt.io.output import atomic_path
from hare_opt.model.units import fmt_number, unit_seconds

#: Fixed colours (colour-blind-safe where possible): the simulator's policies, the Hare
#: variants the reproduction runs, and the heuristics its offline items score.
POLICY_COLORS = {
    "hare": "#d62728",  # red: ours
    "hare-paper": "#6a3d9a",  # dark purple: Algorithm 1, phi reading
    "hare-paper:step3=start": "#b294c7",  # light purple: Algorithm 1, start reading
    "hare:work_conserving=false": "#ff9896",  # light red: the engine before work conservation
    "allox": "#1f77b4",
    "sched-homo": "#ff7f0e",
    "srtf": "#2ca02c",
    "gavel-fifo": "#7f7f7f",
    "gavel-las": "#bcbd22",
    "tiresias": "#17becf",
    "hlas": "#e377c2",
    "geobatch": "#8c564b",
    "wspt": "#393b79",
    "fifo": "#637939",
    "eft": "#9edae5",
}
#: A marker per name (line plots): filled shapes for ours and the paper's Hare, others
#: distinct from them and from each other.
POLICY_MARKERS = {
    "hare": "o",
    "hare-paper": "s",
    "hare-paper:step3=start": "D",
    "hare:work_conserving=true": "P",
    "allox": "^",
    "sched-homo": "v",
    "srtf": "<",
    "gavel-fifo": ">",
    "gavel-las": "X",
    "tiresias": "*",
    "hlas": "h",
    "geobatch": "p",
    "wspt": "d",
    "fifo": "8",
    "eft": "H",
}
_OTHERS = ["#843c39", "#c5b0d5", "#dbdb8d", "#5254a3", "#e7969c", "#6b6ecf"]
_OTHER_MARKERS = ["1", "2", "3", "4", "+", "x"]


def _spare(name: str, choices: list[str]) -> str:
    return choices[sum(map(ord, name)) % len(choices)]


def policy_color(policy: str) -> str:
    """The policy's colour in every figure (an unknown name: one of the spare ones, the
    same for the same name)."""
    return POLICY_COLORS.get(policy) or _spare(policy, _OTHERS)


def policy_marker(policy: str) -> str:
    """The policy's marker in every line plot (an unknown name: a spare one)."""
    return POLICY_MARKERS.get(policy) or _spare(policy, _OTHER_MARKERS)


def policy_style(policy: str) -> dict[str, str]:
    """Keyword arguments for ``Axes.plot``: colour, marker and label of ``policy``."""
    return {"color": policy_color(policy), "marker": policy_marker(policy), "label": policy}


def title(fig: Any, text: str, *, fontsize: float = 11.0) -> None:
    """``text`` as the figure's title, wrapped to the figure's width (a title longer than
    its figure was clipped)."""
    width_pt = fig.get_figwidth() * 72
    chars = max(20, int(width_pt / (0.58 * fontsize)))
    fig.suptitle("\n".join(textwrap.wrap(text, chars)), fontsize=fontsize)


#: Display units of a time axis: (seconds each, name), the largest that keeps 3 of them.
_SCALES = ((3600.0, "h"), (60.0, "min"), (1.0, "s"))


def time_text(value: float, unit: str) -> str:
    """A time for a title or label: in seconds when the instance's unit is a known
    multiple of seconds (``7.5 s``, not ``15`` of 0.5 s), else in the unit, named."""
    sec = unit_seconds(unit)
    if sec is None:
        return f"{fmt_number(value)} {unit}"
    return f"{fmt_number(value * sec)} s"


def time_axis(ax: Any, unit: str, span: float, axis: str = "x") -> None:
    """Label a time axis in s, min or h (whichever keeps the span's numbers readable)
    when the unit is a known multiple of seconds, else in the unit itself."""
    from matplotlib.ticker import FuncFormatter

    sec = unit_seconds(unit)
    name = f"units of {unit}" if unit[:1].isdigit() else unit
    if sec is not None:
        div, name = next((d, n) for d, n in _SCALES if span * sec >= 3 * d or d == 1.0)
        scale = sec / div
        getattr(ax, f"{axis}axis").set_major_formatter(
            FuncFormatter(lambda v, _pos: fmt_number(v * scale, 2))
        )
    getattr(ax, f"set_{axis}label")(f"time ({name})")


def schedule_title(name: str, solver: str | None, objective: float | None, unit: str) -> str:
    """A chart's default title: instance, solver and objective with its unit."""
    text = name if len(name) <= 100 else name[:97] + "..."
    text += f": {solver}" if solver else ""
    if objective is not None:
        text += f", total weighted completion time {time_text(objective, unit)}"
    return text


def save_figure(fig: Any, path: str | Path) -> None:
    """Write ``fig`` (a ``matplotlib.figure.Figure``) at the reproduction's resolution
    into ``path`` (the reproduction's temporary path), nothing clipped."""
    fig.savefig(path, dpi=90, bbox_inches="tight")


def write_figure(fig: Any, path: str | Path, *, dpi: int = 120, fmt: str | None = None) -> Path:
    """Write ``fig`` to a user's ``path``, all or nothing; the format follows the suffix
    (png, svg, pdf) unless ``fmt`` names it (for /dev/null, which has none)."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format=fmt or Path(path).suffix.lstrip(".").lower() or None)
    return Path(path)
