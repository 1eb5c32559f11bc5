"""What a reproduction item is, and the simulator comparisons among them.

An item lists its cells (pure functions run by the sweep engine), turns their
rows into a table, a sentence of our result and a verdict against the paper's
claim, and draws its figure. ``catalog`` assembles the items; cluster sizes,
arrival rates and weights the paper does not give are our choices, stated in
``catalog.NOTES`` (copied to the README).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from hare_opt.generators import TESTBED, get_regime  # noqa: E402
from hare_opt.sweeps.sweep import Cell  # noqa: E402

PAPER_POLICIES = ["hare", "hare-paper", "allox", "sched-homo", "srtf", "gavel-fifo"]
ALL_POLICIES = PAPER_POLICIES + ["tiresias", "gavel-las", "hlas"]
#: The workload regime of every simulator item (hare_opt/generators/regimes.py): one
#: batch per task, 1 ms, calibrated job lengths and arrival rates (docs/reproduction.md).
REGIME = "paper"
TESTBED_GAP_S = get_regime(REGIME).testbed_gap_s


def cluster_of(n_gpus: int) -> str:
    """A cluster of ``n_gpus`` GPUs in the testbed's type proportions (8:4:1:2)."""
    shares = {"V100": 8, "T4": 4, "K80": 1, "M60": 2}
    counts = {t: max(1, int(round(n_gpus * s / 15))) for t, s in shares.items()}
    counts["V100"] += n_gpus - sum(counts.values())
    return ",".join(f"{t}:{c}" for t, c in counts.items())


def gap_for(n_gpus: int, regime: str = REGIME) -> float:
    """Mean inter-arrival (s) on ``n_gpus`` GPUs: the regime's (``paper``: one rate for
    every large cluster, not scaled with its size)."""
    return get_regime(regime).mean_interarrival(n_gpus)


@dataclass
class Item:
    title: str
    claim: str
    cells: Callable[[bool], list[Cell]]
    analyse: Callable[[pd.DataFrame, bool], tuple[pd.DataFrame, str, str]]
    plot: Callable[[pd.DataFrame, Path], None]
    meta: dict[str, Any] = field(default_factory=dict)


def seeds(quick: bool) -> list[int]:
    return [0, 1] if quick else [0, 1, 2, 3, 4]


# --- simulator comparisons ----------------------------------------------------------

def sim_cells(settings: list[dict[str, Any]], policies: list[str]) -> Callable[[bool], list[Cell]]:
    """Cells for each setting x seed; a setting is the simulate cell's keyword arguments
    plus a ``label`` naming it on the x axis."""
    def make(quick: bool) -> list[Cell]:
        chosen = [s for s in settings if not quick or s.get("quick", True)]
        return [Cell("simulate", {**{k: v for k, v in s.items() if k != "quick"},
                                  "policies": policies, "seed": seed})
                for s in chosen for seed in seeds(quick)]
    return make


def summarise(df: pd.DataFrame, metric: str = "total_weighted_jct_s") -> pd.DataFrame:
    """Mean and spread of ``metric`` per (setting label, policy), in setting order."""
    order = list(dict.fromkeys(df["label"]))
    g = df.groupby(["label", "policy"], sort=False)[metric]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["std"] = out["std"].fillna(0.0)
    out["label"] = pd.Categorical(out["label"], order, ordered=True)
    out["policy"] = pd.Categorical(out["policy"], list(dict.fromkeys(df["policy"])), ordered=True)
    out = out.sort_values(["label", "policy"]).reset_index(drop=True)
    out["policy"] = out["policy"].astype(str)
    return out


def reductions(table: pd.DataFrame) -> pd.DataFrame:
    """Per setting: hare's reduction (%) of the mean against every other policy."""
    rows = []
    for label, g in table.groupby("label", observed=True, sort=False):
        mean = dict(zip(g["policy"], g["mean"]))
        for p, v in mean.items():
            if p != "hare" and v > 0:
                rows.append({"label": label, "policy": p,
                             "reduction_pct": 100 * (1 - mean["hare"] / v)})
    return pd.DataFrame(rows)


def verdict_best(table: pd.DataFrame, claim_range: tuple[float, float] | None
                 ) -> tuple[str, str]:
    """Sentence and verdict for "hare has the lowest total weighted JCT"."""
    red = reductions(table)
    worst = red.loc[red["reduction_pct"].idxmin()]
    best_everywhere = bool((red["reduction_pct"] >= -1e-9).all())
    lo, hi = red["reduction_pct"].min(), red["reduction_pct"].max()
    ours = f"hare's reduction vs the others: {lo:.1f}% to {hi:.1f}%"
    if not best_everywhere:
        ours += f"; beaten by {worst['policy']} at {worst['label']}"
        return ours, "not reproduced"
    if claim_range is None:
        return ours, "reproduced (hare best everywhere)"
    c_lo, c_hi = claim_range
    if lo >= c_lo - 10:
        return ours, "reproduced"
    return ours, "partly: hare best everywhere, gains smaller than claimed"


_OTHERS = [f"C{i}" for i in range(10) if i != 3]


def policy_color(policy: str, index: int) -> str:
    """hare is always red (C3), hare-paper dark red; the others cycle through the rest."""
    if policy == "hare-paper":
        return "darkred"
    return "C3" if policy == "hare" else _OTHERS[index % len(_OTHERS)]


def plot_bars(table: pd.DataFrame, path: Path, ylabel: str = "total weighted JCT (s)",
              xlabel: str = "") -> None:
    labels = list(table["label"].cat.categories if hasattr(table["label"], "cat")
                  else dict.fromkeys(table["label"]))
    labels = [lab for lab in labels if lab in set(table["label"])]
    policies = list(dict.fromkeys(table["policy"]))
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(labels) * len(policies) / 3), 4))
    width = 0.8 / len(policies)
    x = np.arange(len(labels))
    for i, p in enumerate(policies):
        sub = table[table["policy"] == p].set_index("label").reindex(labels)
        ax.bar(x + i * width - 0.4 + width / 2, sub["mean"], width, yerr=sub["std"],
               label=p, capsize=2, color=policy_color(p, i))
    ax.set_xticks(x, [str(lab) for lab in labels])
    ax.set_ylabel(ylabel)
    if xlabel:
        ax.set_xlabel(xlabel)
    ax.legend(fontsize=8, ncol=min(4, len(policies)))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def sim_item(title: str, claim: str, settings: list[dict[str, Any]], *,
             policies: list[str] = ALL_POLICIES, claim_range: tuple[float, float] | None = None,
             xlabel: str = "") -> Item:
    def analyse(df: pd.DataFrame, quick: bool) -> tuple[pd.DataFrame, str, str]:
        table = summarise(df)
        ours, verdict = verdict_best(table, claim_range)
        return table, ours, verdict
    return Item(title, claim, sim_cells(settings, policies), analyse,
                lambda t, p: plot_bars(t, p, xlabel=xlabel))


def testbed(**kw: Any) -> dict[str, Any]:
    """The testbed with 40 jobs; arrivals at the regime's testbed rate (cell default)."""
    return {"n_jobs": 40, "cluster": TESTBED, "regime": REGIME, **kw}


def large(n_gpus: int, n_jobs: int, **kw: Any) -> dict[str, Any]:
    """``n_gpus`` in the testbed's proportions; the regime's large-cluster arrival rate,
    the same at every size (cell default)."""
    return {"n_jobs": n_jobs, "cluster": cluster_of(n_gpus), "regime": REGIME, **kw}


# --- items with their own analysis ------------------------------------------------------

def cdf_item() -> Item:
    policies = ["hare", "hare-paper", "allox", "sched-homo", "gavel-fifo", "hlas"]
    limit_s = 25 * 60

    def analyse(df: pd.DataFrame, quick: bool) -> tuple[pd.DataFrame, str, str]:
        rows = []
        for p, g in df.groupby("policy", sort=False):
            jct = np.concatenate([np.asarray(x) for x in g["jct_s"]])
            rows.append({"policy": p, "jobs": len(jct),
                         "share_within_25min_pct": 100 * float((jct <= limit_s).mean()),
                         "median_jct_s": float(np.median(jct)),
                         "p90_jct_s": float(np.percentile(jct, 90)),
                         "jct_s": " ".join(f"{x:.0f}" for x in np.sort(jct))})
        table = pd.DataFrame(rows)
        share = dict(zip(table["policy"], table["share_within_25min_pct"]))
        best = max(share, key=share.get)
        ours = ", ".join(f"{p} {v:.1f}%" for p, v in share.items()) + " within 25 min"
        verdict = "reproduced" if best == "hare" else f"not reproduced ({best} highest)"
        return table, ours, verdict

    def plot(table: pd.DataFrame, path: Path) -> None:
        fig, ax = plt.subplots(figsize=(6, 4))
        for i, row in table.iterrows():
            jct = np.array([float(x) for x in row["jct_s"].split()]) / 60
            ax.step(jct, np.arange(1, len(jct) + 1) / len(jct), where="post", label=row["policy"],
                    color=policy_color(row["policy"], i))
        ax.axvline(limit_s / 60, ls=":", color="grey")
        ax.set_xlabel("job completion time (min)")
        ax.set_ylabel("fraction of jobs")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)

    return Item("JCT CDF on the testbed (40 jobs)",
                "90.5% of jobs finish within 25 min under Hare, vs 66.7% (Allox) and 56.5% (Homo)",
                sim_cells([{**testbed(keep_jct=True), "label": "testbed"}], policies),
                analyse, plot)


def bandwidth_item() -> Item:
    settings = [{**testbed(bandwidth_gbps=b), "label": f"{b} Gbps"} for b in (10, 15, 25)]

    def analyse(df: pd.DataFrame, quick: bool) -> tuple[pd.DataFrame, str, str]:
        table = summarise(df)
        hare = table[table["policy"] == "hare"].set_index("label")["mean"]
        drop = 100 * (1 - hare["25 Gbps"] / hare["10 Gbps"])
        base, verdict = verdict_best(table, None)
        ours = f"hare's weighted JCT falls {drop:.1f}% from 10 to 25 Gbps; {base}"
        ok = drop > 0 and verdict.startswith("reproduced")
        return table, ours, ("reproduced (direction)" if ok else "not reproduced")

    return Item("bandwidth 10/15/25 Gbps (sync time)",
                "Hare's weighted JCT falls 31.2% from 10 to 25 Gbps; Hare best at every bandwidth",
                sim_cells(settings, PAPER_POLICIES), analyse,
                lambda t, p: plot_bars(t, p, xlabel="bandwidth"))


def switching_item() -> Item:
    # The paper regime's 1 ms unit keeps Hare's and PipeSwitch's 1-13 ms switching.
    settings = [{**testbed(switching=s), "label": s}
                for s in ("default", "pipeswitch", "hare")]

    def analyse(df: pd.DataFrame, quick: bool) -> tuple[pd.DataFrame, str, str]:
        table = summarise(df)
        hare = table[table["policy"] == "hare"].set_index("label")["mean"]
        gain = 100 * (1 - hare["hare"] / hare["default"])
        sw = df.groupby(["label", "policy"], sort=False)["switching_s"].mean().reset_index()
        table = table.merge(sw, on=["label", "policy"])
        ours = (f"with hare's policy, total weighted JCT is {gain:.1f}% lower under Hare "
                f"switching than default; PipeSwitch within "
                f"{100 * abs(1 - hare['pipeswitch'] / hare['hare']):.1f}% of Hare")
        verdict = "reproduced (direction)" if gain > 0 else "not reproduced"
        return table, ours, verdict

    return Item("switching overhead: default / PipeSwitch / Hare (Table 3)",
                "default switching is 93-98% of task time; with Hare's fast switching 1-4.5%, "
                "close to PipeSwitch",
                sim_cells(settings, ["hare", "allox", "gavel-fifo"]), analyse,
                lambda t, p: plot_bars(t, p, xlabel="switching model"))


def hlas_analyse(df: pd.DataFrame, quick: bool) -> tuple[pd.DataFrame, str, str]:
    table = summarise(df)
    mean = table.pivot(index="label", columns="policy", values="mean")
    gap = 100 * (mean["hlas"] / mean["hare"] - 1)
    best_other = mean.drop(columns=["hare", "hlas"]).min(axis=1)
    beats = bool((mean["hlas"] <= best_other).all())
    ours = ("hlas above clairvoyant hare by " + ", ".join(f"{g:.1f}% ({lab})"
                                                        for lab, g in gap.items())
            + ("; best of the non-clairvoyant policies everywhere" if beats else ""))
    verdict = (f"hlas best non-clairvoyant; {gap.min():.1f}-{gap.max():.1f}% above hare"
               if beats else "hlas is not the best non-clairvoyant policy")
    return table, ours, verdict
