"""The figure of ``hare-opt explain``: the Gantt chart with what the explanation found
drawn on it: GPU time idle while a task that GPU may run waited, the part of it held for
a task not yet ready (reserved), and the chain that sets one job's completion."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from hare_opt.analysis import Explanation
from hare_opt.analysis.idle import idle_gaps, pieces, reserved_gaps, waiting_windows
from hare_opt.model.units import fmt_time
from hare_opt.plot.gantt import BAR, _boxes, _rows, gantt

IDLE = "#e31a1c"  # idle while a task waited: light red
RESERVED = "#ff7f00"  # held for a task not yet ready: orange, hatched
CHAIN = "black"


def _idle_while_waiting(e: Explanation, horizon: int) -> tuple[np.ndarray, ...]:
    """(GPU, start, end) of every GPU's idle time during which a task it may run waited."""
    p = e.placed
    gpu, a, b = idle_gaps(p, horizon)
    out = []
    kind = e.instance.gpu_type_index[gpu]
    for k in range(len(e.instance.gpu_types)):
        on = np.flatnonzero(kind == k)
        which, p0, p1 = pieces(*waiting_windows(p, k), a[on], b[on])
        out.append((gpu[on][which], p0, p1))
    return tuple(np.concatenate(c) if out else np.zeros(0, np.int64) for c in zip(*out))


def _reserved(e: Explanation) -> tuple[np.ndarray, ...]:
    """(GPU, start, end) of the reserved-idle pieces (``analysis.idle.reserved_idle``)."""
    p = e.placed
    gap0, gap1 = reserved_gaps(p)
    out = []
    kind = e.instance.gpu_type_index[p.gpu]
    for k in range(len(e.instance.gpu_types)):
        on = np.flatnonzero((kind == k) & (gap1 > gap0))
        which, p0, p1 = pieces(*waiting_windows(p, k), gap0[on], gap1[on])
        out.append((p.gpu[on][which], p0, p1))
    return tuple(np.concatenate(c) for c in zip(*out))


def explain_figure(e: Explanation, job: str | None = None) -> Figure:
    """The Gantt chart of ``e``'s schedule with the idle and reserved GPU time shaded and
    the chain of ``job`` (default: the job with the largest weighted completion) outlined."""
    inst, p = e.instance, e.placed
    story = e.story(job) if job is not None else e.worst()
    unit = inst.time_unit
    horizon = int(p.end.max()) if p.n else 0
    idle_total = sum(e.idle_while_waiting.values())
    title = (
        f"{inst.name}"
        + (f" / {e.solver}" if e.solver else "")
        + f": objective {fmt_time(e.objective, unit)}\nGPU time idle while a task waited "
        f"{fmt_time(idle_total, unit)}; chain of job {story.job} (C = "
        f"{fmt_time(story.completion, unit)}) outlined"
    )
    fig = gantt(inst, p.schedule, title=title)
    ax = fig.axes[0]
    rows = _rows(inst)
    handles: list[Any] = []
    for (g, a, b), color, hatch, label in (
        (_idle_while_waiting(e, horizon), IDLE, None, "GPU idle while a task it may run waited"),
        (_reserved(e), RESERVED, "xx", "held for a task not yet ready (reserved)"),
    ):
        if len(g):
            ax.add_collection(
                PolyCollection(
                    cast(Any, _boxes(a.astype(float), b.astype(float), rows[g].astype(float))),
                    facecolors=color,
                    alpha=0.35,
                    edgecolors=color,
                    hatch=hatch,
                    linewidths=0.4,
                    zorder=1.5,
                )
            )
        handles.append(
            Patch(facecolor=color, alpha=0.35, edgecolor=color, hatch=hatch, label=label)
        )
    tasks = [x for x in story.chain if x.kind == "task"]
    syncs = [x for x in story.chain if x.kind == "sync"]
    if tasks:
        y = rows[[inst.gpu_index(x.gpu or "") for x in tasks]].astype(float)
        ax.add_collection(
            PolyCollection(
                cast(
                    Any,
                    _boxes(
                        np.array([x.start for x in tasks], float),
                        np.array([x.end for x in tasks], float),
                        y,
                    ),
                ),
                facecolors="none",
                edgecolors=CHAIN,
                linewidths=1.6,
                zorder=5,
            )
        )
    if syncs:
        y = rows[[inst.gpu_index(x.gpu or "") for x in syncs]].astype(float) + BAR / 2
        ax.add_collection(
            LineCollection(
                [[(x.start, yy), (x.end, yy)] for x, yy in zip(syncs, y)],
                colors=CHAIN,
                linewidths=2.2,
                zorder=5,
            )
        )
    handles.append(
        Line2D([], [], color=CHAIN, lw=1.6, label=f"chain of {story.job}: tasks, syncs (bar)")
    )
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncol=len(handles),
        fontsize="small",
        frameon=False,
    )
    return fig
