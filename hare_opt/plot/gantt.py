"""Gantt charts of schedules: one row per GPU, one bar per task, setups hatched.

Built on ``matplotlib.figure.Figure`` rather than pyplot, so no display or
global backend is involved (PNG output goes through Agg) and a chart can be
drawn inside a server, a test or a batch job. Bars are drawn as one polygon
collection per kind, so 10^6 tasks plot in seconds.
"""

from __future__ import annotations

import colorsys
from pathlib import Path
from typing import Any, cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.transforms import blended_transform_factory

from hare_opt.model import Instance, Schedule, ScheduleError
from hare_opt.plot.style import time_axis, write_figure

MAX_TICK_ROWS = 40  # GPU ids as tick labels up to this many rows
MAX_LABELS = 600  # "j3 r2" texts on at most this many bars
MAX_LEGEND = 16  # a legend of jobs up to this many jobs
BAR = 0.8  # bar height, in rows
SETUP_COLOR = "0.75"


def job_colors(n: int) -> np.ndarray:
    """(n, 4) RGBA colours that stay distinguishable for any number of jobs.

    Qualitative tables while they last; beyond, hues stepped by the golden
    ratio (neighbours in job order differ most) with alternating lightness.
    """
    from matplotlib import colormaps

    if n <= 10:
        return colormaps["tab10"](np.arange(n))
    if n <= 20:
        return colormaps["tab20"](np.arange(n))
    hue = (np.arange(n) * 0.6180339887) % 1.0
    light = np.array([0.45, 0.62, 0.36])[np.arange(n) % 3]
    sat = np.array([0.75, 0.55, 0.9])[(np.arange(n) // 3) % 3]
    rgb = [colorsys.hls_to_rgb(h, ll, s) for h, ll, s in zip(hue, light, sat)]
    return np.column_stack([np.array(rgb), np.ones(n)])


def _rows(instance: Instance) -> np.ndarray:
    """Row of each GPU: grouped by type (first-appearance order), stable inside a type."""
    order = np.argsort(instance.gpu_type_index, kind="stable")
    row = np.empty(instance.num_gpus, dtype=np.int64)
    row[order] = np.arange(instance.num_gpus)
    return row


def _indices(instance: Instance, schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """Job and GPU index of every task; a clear error if the schedule names unknown ids."""
    for kind, ids, known in (
        ("job", schedule.job, instance.job_ids),
        ("gpu", schedule.gpu, instance.gpu_ids),
    ):
        unknown = sorted(set(ids.tolist()) - set(known.tolist()), key=str)
        if unknown:
            raise ScheduleError(
                f"schedule names {kind}(s) {unknown[:5]} that the instance "
                f"{instance.name!r} does not have"
            )
    return schedule.job_indices(instance), schedule.gpu_indices(instance)


def _boxes(x0: np.ndarray, x1: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n, 4, 2) rectangle vertices, centred on row ``y``."""
    lo, hi = y - BAR / 2, y + BAR / 2
    return np.stack(
        [np.column_stack(p) for p in ((x0, lo), (x0, hi), (x1, hi), (x1, lo))], axis=1
    ).astype(float)


def _setups(
    instance: Instance, job: np.ndarray, gpu: np.ndarray, start: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of tasks preceded by a setup (first on its GPU or after another job) and its length."""
    order = np.lexsort((start, gpu))
    g, j = gpu[order], job[order]
    switch = np.ones(len(order), dtype=bool)
    switch[1:] = (g[1:] != g[:-1]) | (j[1:] != j[:-1])
    rows = order[switch & (instance.overhead[j] > 0)]
    return rows, instance.overhead[job[rows]]


def job_legend(instance: Instance, setups: bool = False) -> list[Patch]:
    """Legend handles of the jobs' colours (and of the setups' hatch)."""
    colors = job_colors(instance.num_jobs)
    handles = [Patch(facecolor=colors[i], label=_shown(j.id)) for i, j in enumerate(instance.jobs)]
    if setups:
        handles.append(Patch(facecolor=SETUP_COLOR, edgecolor="0.45", hatch="////", label="setup"))
    return handles


def gantt(
    instance: Instance,
    schedule: Schedule,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    legend: bool = True,
) -> Figure:
    """Draw ``schedule`` as a Gantt chart; returns the figure (new unless ``ax`` is given).
    ``legend``: the jobs' colours beside the chart (up to ``MAX_LEGEND`` jobs)."""
    job, gpu = _indices(instance, schedule)
    rows = _rows(instance)
    n_rows = instance.num_gpus
    own = ax is None  # a figure of our own (constrained layout): its legend beside it
    if ax is None:
        per_row = 0.42 if n_rows <= 20 else 0.16
        fig = Figure(figsize=(12, min(60.0, 1.8 + per_row * n_rows)), layout="constrained")
        ax = fig.add_subplot()
    fig = cast(Figure, ax.figure)
    colors = job_colors(instance.num_jobs)
    y = rows[gpu]
    start, end = schedule.start.astype(float), schedule.end.astype(float)
    dense = len(schedule) > 2000
    # Dense charts: no edges, hatches or anti-aliasing, which cost Agg most of its time.
    ax.add_collection(
        PolyCollection(
            cast(Any, _boxes(start, end, y)),
            facecolors=colors[job],
            edgecolors="white",
            linewidths=0 if dense else 0.6,
            antialiaseds=not dense,
            zorder=2,
        )
    )
    s_rows, s_len = _setups(instance, job, gpu, schedule.start)
    if len(s_rows):
        ax.add_collection(
            PolyCollection(
                cast(Any, _boxes(start[s_rows] - s_len, start[s_rows], y[s_rows])),
                facecolors=SETUP_COLOR,
                edgecolors="0.45",
                hatch=None if dense else "////",
                linewidths=0 if dense else 0.5,
                antialiaseds=not dense,
                zorder=2,
            )
        )
    t0 = min(0.0, float(start.min() - s_len.max(initial=0))) if len(schedule) else 0.0
    t1 = float(end.max()) if len(schedule) else 1.0
    ax.set_xlim(t0, t1 + 0.01 * (t1 - t0 or 1))
    ax.set_ylim(n_rows - 0.5, -0.5)  # first GPU on top
    _label_rows(ax, instance, rows)
    _label_bars(ax, instance, schedule, colors[job], y, t1 - t0)
    time_axis(ax, instance.time_unit, t1 - t0)
    ax.grid(axis="x", color="0.9", zorder=0)
    ax.set_axisbelow(True)
    ax.set_title(title if title is not None else instance.name)
    if legend and instance.num_jobs <= MAX_LEGEND:
        handles = job_legend(instance, bool(len(s_rows)))
        if own:
            fig.legend(
                handles=handles,
                loc="outside right upper",
                fontsize="small",
                frameon=False,
                title="jobs",
            )
        else:
            ax.legend(
                handles=handles,
                loc="upper left",
                bbox_to_anchor=(1.12, 1.0),
                fontsize="small",
                frameon=False,
                title="jobs",
            )
    _drawable(fig)
    return fig


def _shown(value: str) -> str:
    """``value`` drawable: an id may hold any JSON string, a lone surrogate
    (``"\\ud800"``) included, which the font renderer refuses; it is shown escaped."""
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def _drawable(fig: Figure) -> None:
    """Every text already on the chart drawable (``_shown``); tick labels are set so."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        value = text.get_text()
        if isinstance(value, str) and _shown(value) != value:
            text.set_text(_shown(value))


def _label_rows(ax: Axes, instance: Instance, rows: np.ndarray) -> None:
    """GPU ids as ticks when they fit; type names beside each group and lines between groups."""
    by_row = np.argsort(rows)
    if instance.num_gpus <= MAX_TICK_ROWS:
        ax.set_yticks(
            np.arange(instance.num_gpus),
            [_shown(g) for g in instance.gpu_ids[by_row].tolist()],
            fontsize="small",
        )
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{instance.num_gpus} GPUs")
    side = blended_transform_factory(ax.transAxes, ax.transData)
    types = instance.gpu_type_index[by_row]
    for k, name in enumerate(instance.gpu_types):
        where = np.flatnonzero(types == k)
        lo, hi = where[0], where[-1]
        if lo > 0:
            ax.axhline(lo - 0.5, color="0.3", linewidth=0.8, zorder=3)
        ax.text(
            1.005,
            (lo + hi) / 2,
            f"{name} ({hi - lo + 1})",
            transform=side,
            va="center",
            ha="left",
            fontsize="small",
            clip_on=False,
        )


def _label_bars(
    ax: Axes, instance: Instance, schedule: Schedule, color: np.ndarray, y: np.ndarray, span: float
) -> None:
    """``j3 r2`` inside bars wide and tall enough for it; nothing when the chart is dense."""
    fig = cast(Figure, ax.figure)
    width_px = fig.get_figwidth() * fig.dpi * 0.8  # plotting area, roughly
    row_px = fig.get_figheight() * fig.dpi * 0.8 / max(1, instance.num_gpus)
    if row_px < 11 or len(schedule) == 0:
        return
    labels = [f"{j} r{r}" for j, r in zip(schedule.job.tolist(), schedule.round.tolist())]
    dur_px = (schedule.end - schedule.start) * width_px / max(span, 1e-9)
    fits = np.flatnonzero(dur_px >= 6.5 * np.fromiter(map(len, labels), float, len(labels)))
    if len(fits) > MAX_LABELS:
        return
    size = min(9.0, row_px * 0.45)
    dark = color[:, :3] @ np.array([0.299, 0.587, 0.114]) < 0.5
    for i in fits.tolist():
        ax.text(
            (schedule.start[i] + schedule.end[i]) / 2,
            y[i],
            labels[i],
            ha="center",
            va="center",
            fontsize=size,
            color="white" if dark[i] else "black",
            clip_on=True,
            zorder=4,
        )


def save_gantt(
    instance: Instance,
    schedule: Schedule,
    path: str | Path,
    *,
    title: str | None = None,
    dpi: int = 120,
    fmt: str | None = None,
) -> Path:
    """Draw and write the chart, all or nothing; the format follows the suffix (png, svg,
    pdf) unless ``fmt`` names it (for /dev/null or standard output, which have none)."""
    return write_figure(gantt(instance, schedule, title=title), path, dpi=dpi, fmt=fmt)
