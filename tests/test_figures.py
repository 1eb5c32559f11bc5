"""Every figure reads at a glance: a title, labelled axes, one colour and marker per
policy, and no text clipped by the canvas or drawn over other text.

Each reproduction item's figure is drawn from small synthetic data of the shape its
analysis gives (the simulator items through their own ``analyse``), and so are the
Gantt charts (the demo's, ``plot``'s) and ``explain``'s figure. The check records every
text matplotlib actually draws and compares the boxes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from hare_opt.examples import fig1_instance, fig1_schedule
from hare_opt.plot.style import POLICY_COLORS, POLICY_MARKERS, policy_color, policy_marker
from hare_opt.sweeps.items import ALL_POLICIES, PAPER_HARE

#: Overlap below this many pixels in either direction is anti-aliasing, not a collision.
SLACK = 1.0


def drawn_texts(fig: Figure, monkeypatch) -> list[tuple[str, tuple[float, ...]]]:
    """(text, (x0, y0, x1, y1) in pixels) of every non-empty text the figure draws."""
    seen: list[tuple[str, tuple[float, ...]]] = []
    real = Text.draw

    def record(self, renderer):
        real(self, renderer)
        if self.get_visible() and self.get_text().strip():
            b = self.get_window_extent(renderer)
            seen.append((self.get_text(), (b.x0, b.y0, b.x1, b.y1)))

    with monkeypatch.context() as m:
        m.setattr(Text, "draw", record)
        FigureCanvasAgg(fig).draw()
    return seen


def assert_reads(fig: Figure, monkeypatch) -> None:
    """Every drawn text inside the canvas, no two texts overlapping, a title present."""
    texts = drawn_texts(fig, monkeypatch)
    w, h = fig.bbox.width, fig.bbox.height
    outside = [
        t
        for t, (x0, y0, x1, y1) in texts
        if x0 < -SLACK or y0 < -SLACK or x1 > w + SLACK or y1 > h + SLACK
    ]
    assert not outside, f"clipped by the canvas ({w:.0f}x{h:.0f} px): {outside}"
    clashes = []
    for i, (a, (ax0, ay0, ax1, ay1)) in enumerate(texts):
        for b, (bx0, by0, bx1, by1) in texts[i + 1 :]:
            if min(ax1, bx1) - max(ax0, bx0) > SLACK and min(ay1, by1) - max(ay0, by0) > SLACK:
                clashes.append((a, b))
    assert not clashes, f"texts drawn over each other: {clashes[:5]}"
    titled = fig.get_suptitle() or any(ax.get_title() for ax in fig.axes)
    assert titled, "a figure without a title"
    for ax in fig.axes:  # every axis that shows numbers says what they are
        if ax.get_xticks().size and any(t.get_text() for t in ax.get_xticklabels()):
            assert ax.get_xlabel() or _categorical(ax), "an x axis without a label"
        if ax.get_yticks().size and any(t.get_text() for t in ax.get_yticklabels()):
            assert ax.get_ylabel() or _categorical(ax, "y"), "a y axis without a label"


def _categorical(ax, axis: str = "x") -> bool:
    """Tick labels that are names (policies, settings, GPUs), not numbers."""
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    words = [t.get_text() for t in labels if t.get_text()]
    return bool(words) and not all(
        w.replace(".", "").replace("−", "").replace("-", "").replace("$", "").strip().isdigit()
        for w in words
    )


# --- synthetic tables of the shape each item's analysis gives --------------------------


def _sim_rows(item) -> pd.DataFrame:
    """Rows as the simulate cell gives them, for every cell of ``item`` (quick)."""
    rng = np.random.default_rng(3)
    rows = []
    for cell in item.cells(True):
        size = 1 + 0.1 * (cell.params["seed"] % 7)
        base = 50 + 10 * (sum(map(ord, cell.params["policy"])) % 11)
        jct = rng.gamma(2.0, 600.0, size=40)
        rows.append(
            {
                **cell.labels,
                "seed": cell.params["seed"],
                "policy": cell.params["policy"],
                "total_weighted_jct_s": base * size * (1 + 0.01 * rng.normal()),
                "switching_s": 10.0,
                "jct_s": jct,
            }
        )
    return pd.DataFrame(rows)


def _fig1_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "schedule": ["(a) paper", "(b) paper", "(c) paper", "optimum cpsat"],
            "total_jct_s": [10.5, 9.0, 8.5, 7.5],
            "paper_s": [10.5, 9.0, 8.5, np.nan],
            "status": ["paper's schedule"] * 3 + ["optimal"],
        }
    )


def _quality_table() -> pd.DataFrame:
    solvers = ["hare", "geobatch", "hare-paper", "hare-paper:step3=start", "wspt", "fifo", "eft"]
    return pd.DataFrame(
        {
            "solver": solvers,
            "mean": np.linspace(1.02, 1.3, len(solvers)),
            "max": np.linspace(1.2, 2.1, len(solvers)),
        }
    )


def _bounds_table() -> pd.DataFrame:
    checks = [
        "hare <= guarantee x LB",
        "geobatch <= approx_factor x LB",
        "LB <= OPT",
        "hare-paper (step 3 phi), random instances with finite alpha (40 of 40)",
        "hare-paper (step 3 start), random instances with finite alpha (40 of 40)",
    ]
    checks += [
        f"hare-paper (step 3 {r}), Smith family k={k}" for k in (4, 6, 10) for r in ("phi", "start")
    ]
    return pd.DataFrame(
        {
            "check": checks,
            "worst": np.linspace(0.3, 1.6, len(checks)),
            "holds": [True] * 5 + [False] * 6,
            "instances": 1,
        }
    )


def _runtime_table() -> pd.DataFrame:
    rows = [
        {
            "solver": s,
            "jobs": n,
            "gpus": m,
            "tasks": 100 * n,
            "seconds": 1e-4 * n,
            "kernel_load_s": 0.1,
        }
        for s in ("hare", "wspt")
        for n, m in ((20, 15), (100, 60), (500, 160))
    ]
    return pd.DataFrame(rows)


OFFLINE = {
    "fig1": _fig1_table,
    "ours-quality": _quality_table,
    "ours-bounds": _bounds_table,
    "ours-runtime": _runtime_table,
}


def _item_names() -> list[str]:
    from hare_opt.sweeps.catalog import ITEMS

    return list(ITEMS)


@pytest.mark.parametrize("name", _item_names())
def test_each_item_figure_reads(name, monkeypatch):
    from hare_opt.sweeps.catalog import ITEMS

    item = ITEMS[name]
    if name in OFFLINE:
        table = OFFLINE[name]()
    else:  # a simulator item: its own analysis of synthetic cell rows
        table, _, _ = item.analyse(_sim_rows(item), True)
    fig = item.draw(table)
    assert fig.get_suptitle(), name
    assert_reads(fig, monkeypatch)


def test_the_gantt_charts_read(monkeypatch, tmp_path):
    from hare_opt.generators import paper_instance
    from hare_opt.plot import gantt
    from hare_opt.plot.style import schedule_title
    from hare_opt.solvers import solve

    inst = fig1_instance()
    assert_reads(
        gantt(
            inst,
            fig1_schedule("c"),
            title=schedule_title(inst.name, "paper (c)", 17, inst.time_unit),
        ),
        monkeypatch,
    )
    big = paper_instance(seed=1, n_jobs=20)  # the demo's second instance
    res = solve(big, "hare")
    fig = gantt(
        big, res.schedule, title=schedule_title(big.name, "hare", res.objective, big.time_unit)
    )
    assert_reads(fig, monkeypatch)


def test_titles_give_times_in_seconds():
    from hare_opt.plot.style import schedule_title

    # fig1's unit is 0.5 s: an objective of 15 units is 7.5 s, said as such
    assert schedule_title("fig1", "cpsat", 15, "0.5s").endswith("7.5 s")
    assert schedule_title("x", None, 15, "widgets").endswith("15 widgets")


def test_the_explain_figure_reads(monkeypatch):
    from hare_opt.analysis import explain
    from hare_opt.plot.explain import explain_figure
    from hare_opt.solvers import solve

    inst = fig1_instance()
    e = explain(inst, solve(inst, "hare").schedule, "hare")
    assert_reads(explain_figure(e), monkeypatch)


def test_a_clash_is_caught(monkeypatch):
    fig = Figure(figsize=(3, 2), layout="constrained")
    ax = fig.subplots()
    ax.set(title="a title", xlabel="x", ylabel="y")
    ax.text(0.5, 0.5, "one text", transform=ax.transAxes)
    ax.text(0.52, 0.5, "one text", transform=ax.transAxes)
    with pytest.raises(AssertionError, match="over each other"):
        assert_reads(fig, monkeypatch)
    fig = Figure(figsize=(3, 2), layout="constrained")
    fig.subplots().set(
        title="a title that is far too long for a figure three inches wide", xlabel="x", ylabel="y"
    )
    with pytest.raises(AssertionError, match="clipped"):
        assert_reads(fig, monkeypatch)


def test_every_policy_has_its_own_colour_and_marker():
    from hare_opt.sim import policy_names
    from hare_opt.solvers import solver_names

    names = list(
        dict.fromkeys(
            [
                *policy_names(),
                *ALL_POLICIES,
                *PAPER_HARE,
                *solver_names("heuristic"),
                *solver_names("rule"),
            ]
        )
    )
    assert all(n in POLICY_COLORS and n in POLICY_MARKERS for n in names), [
        n for n in names if n not in POLICY_COLORS or n not in POLICY_MARKERS
    ]
    assert len({policy_color(n) for n in names}) == len(names)
    assert len({policy_marker(n) for n in names}) == len(names)
