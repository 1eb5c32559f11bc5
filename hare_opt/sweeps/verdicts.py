"""The paper's claims as data, and verdicts computed from them with stated tolerances.

A reproduction item states what the paper claims as a ``Claim`` (a range of reductions,
a set of values, an ordering, a bound on an effect) and compares our per-seed
measurements with it: means with 95% confidence intervals over the evaluation seeds,
and per-seed *paired* reductions (the same workload under two policies). The verdict is
``reproduced`` only when the measured numbers lie within the claim widened by its
tolerance, ``partly`` when the claim's direction holds but not its numbers, ``not
reproduced`` otherwise; each verdict carries its reason. An input copied from the paper
is labelled ``input``, never a result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

REPRODUCED, PARTLY, NOT_REPRODUCED = "reproduced", "partly", "not reproduced"
INPUT, MEASURED = "input (the paper's measurement)", "measured"
#: Confidence level of every interval reported.
LEVEL = 0.95


def mean_ci(
    values: Sequence[float] | np.ndarray, level: float = LEVEL
) -> tuple[float, float, float]:
    """(mean, low, high): Student's t interval of the mean (a point for one value)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    m = float(x.mean())
    if len(x) < 2 or float(x.std(ddof=1)) == 0.0:
        return m, m, m
    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return m, m - half, m + half


def fmt_ci(ci: tuple[float, float, float], unit: str = "%", digits: int = 1) -> str:
    m, lo, hi = ci
    if not math.isfinite(m):
        return "n/a"
    if lo == hi:
        return f"{m:.{digits}f}{unit}"
    return f"{m:.{digits}f}{unit} [{lo:.{digits}f}, {hi:.{digits}f}]"


def paired_reductions(
    df: pd.DataFrame, ours: str, other: str, *, metric: str, by: Sequence[str] = ("label",)
) -> pd.DataFrame:
    """Per seed (and setting): 100 (1 - ours / other) of ``metric``, the same workload
    under both policies. Columns: the ``by`` keys, ``seed``, ``reduction_pct``."""
    keys = [*by, "seed"]
    a = df[df["policy"] == ours].set_index(keys)[metric]
    b = df[df["policy"] == other].set_index(keys)[metric]
    both = pd.concat({"ours": a, "other": b}, axis=1).dropna()
    out = (100 * (1 - both["ours"] / both["other"])).rename("reduction_pct").reset_index()
    return out


def p_better(values: Sequence[float] | np.ndarray) -> float:
    """One-sided p-value of a paired t-test that the mean reduction is above 0 (1 when
    it cannot be told: fewer than two seeds, or no spread and a mean <= 0)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) < 2:
        return 1.0
    sd = float(x.std(ddof=1))
    if sd == 0.0:
        return 0.0 if float(x.mean()) > 0 else 1.0
    t = float(x.mean()) / (sd / math.sqrt(len(x)))
    return float(stats.t.sf(t, len(x) - 1))


def holm(p: Sequence[float] | np.ndarray, alpha: float = (1 - LEVEL) / 2) -> np.ndarray:
    """Holm's step-down test over a family of one-sided p-values: which are significant
    with the family-wise error kept at ``alpha`` (default 0.025, the one-sided level of
    the 95% intervals shown)."""
    p = np.asarray(p, dtype=float)
    out = np.zeros(len(p), dtype=bool)
    for rank, i in enumerate(np.argsort(p, kind="stable")):
        if p[i] > alpha / (len(p) - rank):
            break
        out[i] = True
    return out


def reduction_table(
    df: pd.DataFrame, ours: str, *, metric: str, by: Sequence[str] = ("label",)
) -> pd.DataFrame:
    """For every other policy and setting: mean paired reduction with its 95% CI, its
    one-sided p-value of being above 0 (``p_better``), and how many seeds ours was
    better."""
    rows = []
    for other in dict.fromkeys(df["policy"]):
        if other == ours:
            continue
        red = paired_reductions(df, ours, other, metric=metric, by=by)
        for key, g in red.groupby(list(by), sort=False):
            m, lo, hi = mean_ci(g["reduction_pct"])
            rows.append(
                {
                    **dict(zip(by, key if isinstance(key, tuple) else (key,))),
                    "vs": other,
                    "seeds": len(g),
                    "reduction_pct": m,
                    "ci_low": lo,
                    "ci_high": hi,
                    "p_better": p_better(g["reduction_pct"]),
                    "ours_better": int((g["reduction_pct"] > 0).sum()),
                }
            )
    return pd.DataFrame(rows)


def _holm_note(n: int) -> str:
    return f"Holm-corrected over {n} comparisons" if n > 1 else "one comparison"


def _relative_error(measured, low: float, high: float) -> float:
    """Largest distance of a measured value from the paper's [low, high], in % of the
    nearer end."""
    worst = 0.0
    for v in np.asarray(measured, dtype=float):
        end = low if v < low else high if v > high else None
        if end is not None and end:
            worst = max(worst, 100 * abs(v - end) / abs(end))
    return worst


@dataclass(frozen=True)
class Verdict:
    status: str
    reason: str

    def __str__(self) -> str:
        return f"{self.status}: {self.reason}" if self.reason else self.status


@dataclass(frozen=True)
class ReductionRange:
    """The paper: ours cuts ``metric`` by ``low``-``high`` % against ``against`` (every
    listed baseline, at every setting unless ``settings`` names some). Reproduced when
    every mean paired reduction lies in [low - tol, high + tol]; partly when ours is
    significantly better than each of them (CI above 0) but some mean lies outside."""

    low: float
    high: float
    against: tuple[str, ...]
    tol: float = 10.0
    settings: tuple[str, ...] = ()

    def describe(self) -> str:
        span = f"{self.low:g}%" if self.low == self.high else f"{self.low:g}%-{self.high:g}%"
        where = f" at {', '.join(self.settings)}" if self.settings else ""
        return (
            f"reduction {span} vs {', '.join(self.against)}{where} "
            f"(tolerance +-{self.tol:g} points)"
        )

    def judge(self, table: pd.DataFrame) -> Verdict:
        t = table[table["vs"].isin(self.against)]
        if self.settings:
            t = t[t["label"].isin(self.settings)]
        missing = set(self.against) - set(t["vs"])
        if t.empty or missing:
            return Verdict(NOT_REPRODUCED, f"no measurement vs {sorted(missing) or 'any'}")
        worse = t[t["ci_high"] < 0]
        if len(worse):
            w = worse.iloc[0]
            return Verdict(
                NOT_REPRODUCED,
                f"{w['vs']} is significantly better at {w['label']} ({w['reduction_pct']:.1f}%)",
            )
        lo, hi = self.low - self.tol, self.high + self.tol
        outside = t[(t["reduction_pct"] < lo) | (t["reduction_pct"] > hi)]
        if outside.empty:
            return Verdict(REPRODUCED, f"all {len(t)} mean reductions in [{lo:g}, {hi:g}]%")
        unsure = t[~holm(t["p_better"])]
        span = f"{t['reduction_pct'].min():.1f}% to {t['reduction_pct'].max():.1f}%"
        err = _relative_error(t["reduction_pct"], self.low, self.high)
        if unsure.empty:
            return Verdict(
                PARTLY,
                f"better than each ({_holm_note(len(t))}), but reductions "
                f"{span}, outside [{lo:g}, {hi:g}]% (relative error up to "
                f"{err:.0f}% of the paper's)",
            )
        u = unsure.iloc[0]
        return Verdict(
            NOT_REPRODUCED,
            f"reductions {span}; vs {u['vs']} at {u['label']} not "
            f"significant ({_holm_note(len(t))}; CI "
            f"{u['ci_low']:.1f} to {u['ci_high']:.1f}%)",
        )


@dataclass(frozen=True)
class Best:
    """The paper: ours is best (lowest ``metric``) against every other policy shown.
    Reproduced when every paired reduction is significantly positive (CI above 0)."""

    def describe(self) -> str:
        return "ours best at every setting (paired 95% CI of the reduction above 0)"

    def judge(self, table: pd.DataFrame) -> Verdict:
        if table.empty:
            return Verdict(NOT_REPRODUCED, "no measurement")
        worse = table[table["ci_high"] < 0]
        if len(worse):
            w = worse.iloc[0]
            return Verdict(NOT_REPRODUCED, f"{w['vs']} significantly better at {w['label']}")
        unsure = table[~holm(table["p_better"])]
        if len(unsure):
            u = unsure.iloc[0]
            return Verdict(
                PARTLY,
                f"not significantly better than {u['vs']} at {u['label']} "
                f"({u['reduction_pct']:.1f}%, CI {u['ci_low']:.1f} to "
                f"{u['ci_high']:.1f}%; {_holm_note(len(table))})",
            )
        return Verdict(
            REPRODUCED,
            f"significantly better in all {len(table)} comparisons ({_holm_note(len(table))})",
        )


@dataclass(frozen=True)
class Values:
    """The paper's values of a quantity per policy (e.g. % of jobs within 25 min).
    Reproduced when every mean lies within ``tol`` (same unit) of the paper's value."""

    values: dict[str, float] = field(default_factory=dict)
    tol: float = 10.0
    unit: str = "%"

    def _tol(self) -> str:
        """The tolerance in the values' unit: for shares in %, percentage points."""
        return f"{self.tol:g} points" if self.unit == "%" else f"{self.tol:g}{self.unit}"

    def describe(self) -> str:
        shown = ", ".join(f"{p} {v:g}{self.unit}" for p, v in self.values.items())
        return f"{shown} (tolerance +-{self._tol()})"

    def judge(self, measured: dict[str, tuple[float, float, float]]) -> Verdict:
        off = {p: measured[p][0] - v for p, v in self.values.items() if p in measured}
        if len(off) < len(self.values):
            return Verdict(
                NOT_REPRODUCED, f"no measurement for {sorted(set(self.values) - set(off))}"
            )
        bad = {p: d for p, d in off.items() if abs(d) > self.tol}
        if not bad:
            return Verdict(REPRODUCED, f"all within {self._tol()} of the paper")
        ranked_paper = sorted(self.values, key=lambda p: self.values[p])
        ranked_ours = sorted(self.values, key=lambda p: measured[p][0])
        why = ", ".join(
            f"{p} {d:+.1f}{' points' if self.unit == '%' else self.unit}"
            + (f" ({100 * d / self.values[p]:+.0f}% relative)" if self.values[p] else "")
            for p, d in bad.items()
        )
        if ranked_paper == ranked_ours:
            return Verdict(PARTLY, f"same order as the paper, but off by {why}")
        return Verdict(
            NOT_REPRODUCED,
            f"off by {why}; order {' < '.join(ranked_ours)} vs the "
            f"paper's {' < '.join(ranked_paper)}",
        )


@dataclass(frozen=True)
class Change:
    """The paper: a quantity changes by ``value`` % between two settings (e.g. Hare's
    weighted JCT falls 31.2% from 10 to 25 Gbps). Reproduced within ``tol`` points;
    partly when the sign is the same and the CI excludes 0."""

    value: float
    tol: float = 10.0

    def describe(self) -> str:
        return f"a change of {self.value:g}% (tolerance +-{self.tol:g} points)"

    def judge(self, ci: tuple[float, float, float]) -> Verdict:
        m, lo, hi = ci
        if not math.isfinite(m):
            return Verdict(NOT_REPRODUCED, "no measurement")
        if abs(m - self.value) <= self.tol:
            return Verdict(REPRODUCED, f"{m:.1f}% vs the paper's {self.value:g}%")
        same_sign = (lo > 0 and self.value > 0) or (hi < 0 and self.value < 0)
        if same_sign:
            return Verdict(PARTLY, f"same direction, {m:.1f}% vs the paper's {self.value:g}%")
        return Verdict(
            NOT_REPRODUCED, f"{m:.1f}% (CI {lo:.1f} to {hi:.1f}%) vs the paper's {self.value:g}%"
        )


@dataclass(frozen=True)
class SmallEffect:
    """The paper: a setting has a small effect: every mean relative change stays within
    ``limit`` %."""

    limit: float = 10.0

    def describe(self) -> str:
        return f"effect within +-{self.limit:g}%"

    def judge(self, changes: dict[str, tuple[float, float, float]]) -> Verdict:
        big = {k: v[0] for k, v in changes.items() if abs(v[0]) > self.limit}
        if not big:
            return Verdict(REPRODUCED, "every change within " + f"{self.limit:g}%")
        return Verdict(NOT_REPRODUCED, ", ".join(f"{k} {v:+.1f}%" for k, v in big.items()))


def combine(*verdicts: Verdict) -> Verdict:
    """The weakest status of several sub-claims, with every reason."""
    order = [NOT_REPRODUCED, PARTLY, REPRODUCED]
    ranked = [v for v in verdicts if v.status in order]
    status = min((v.status for v in ranked), key=order.index) if ranked else MEASURED
    if len(verdicts) == 1:
        return Verdict(status, verdicts[0].reason)
    # each part keeps its own status, so a reader sees which sub-claim decided
    return Verdict(status, "; ".join(f"[{v.status}] {v.reason}" for v in verdicts))


@dataclass(frozen=True)
class Order:
    """The paper: the baselines' means rank in this order (best first) at every setting.
    Reproduced when they do everywhere; partly when the order holds at some settings."""

    order: tuple[str, ...]
    lead: str = "Hare"  # who goes first (the item prepends the policy judged)

    def describe(self) -> str:
        return "order " + " < ".join([self.lead, *self.order]) + " at every setting"

    def judge(self, summary: pd.DataFrame) -> Verdict:
        held, broken = 0, []
        for label, g in summary.groupby("label", sort=False, observed=True):
            mean = dict(zip(g["policy"], g["mean"]))
            if any(p not in mean for p in self.order):
                continue
            ours = sorted(self.order, key=mean.__getitem__)
            if list(ours) == list(self.order):
                held += 1
            else:
                broken.append(f"{label}: {' < '.join(ours)}")
        if not held and not broken:
            return Verdict(NOT_REPRODUCED, "no measurement")
        if not broken:
            return Verdict(REPRODUCED, f"order held at all {held} settings")
        status = PARTLY if held else NOT_REPRODUCED
        return Verdict(
            status, f"order held at {held} of {held + len(broken)} settings ({'; '.join(broken)})"
        )


@dataclass(frozen=True)
class Worst:
    """The paper: ``policy`` has the highest mean of the policies compared, everywhere."""

    policy: str

    def describe(self) -> str:
        return f"{self.policy} worst at every setting"

    def judge(self, summary: pd.DataFrame) -> Verdict:
        worst = {
            str(label): str(g.loc[g["mean"].idxmax(), "policy"])
            for label, g in summary.groupby("label", sort=False, observed=True)
        }
        other = {k: v for k, v in worst.items() if v != self.policy}
        if not worst:
            return Verdict(NOT_REPRODUCED, "no measurement")
        if not other:
            return Verdict(REPRODUCED, f"{self.policy} worst at all {len(worst)} settings")
        return Verdict(
            PARTLY if len(other) < len(worst) else NOT_REPRODUCED,
            "worst: " + ", ".join(f"{v} at {k}" for k, v in other.items()),
        )


@dataclass(frozen=True)
class Grows:
    """The paper: ours' reduction against ``vs`` grows along ``labels`` (e.g. with the
    cluster's heterogeneity). Reproduced when the mean paired reductions increase
    monotonically and the last one's CI lies above the first one's mean and above 0: a
    gap that grows is a lead; a deficit that shrinks is not one."""

    vs: str
    labels: tuple[str, ...]

    def describe(self) -> str:
        return f"reduction vs {self.vs} grows along {' -> '.join(self.labels)}"

    def judge(self, table: pd.DataFrame) -> Verdict:
        t = table[table["vs"] == self.vs].set_index("label")
        if any(lab not in t.index for lab in self.labels):
            return Verdict(NOT_REPRODUCED, f"no measurement vs {self.vs}")
        m = [float(t.loc[lab, "reduction_pct"]) for lab in self.labels]
        shown = " -> ".join(f"{x:.1f}%" for x in m)
        monotone = all(a < b for a, b in zip(m, m[1:]))
        last_low = float(t.loc[self.labels[-1], "ci_low"])
        if last_low <= 0 and m[-1] > m[0]:
            return Verdict(
                NOT_REPRODUCED,
                f"vs {self.vs}: {shown}: rises, but no significant lead at {self.labels[-1]}",
            )
        if monotone and last_low > m[0]:
            return Verdict(REPRODUCED, f"vs {self.vs}: {shown}")
        if m[-1] > m[0]:
            return Verdict(PARTLY, f"vs {self.vs}: {shown} (not monotone or not significant)")
        return Verdict(NOT_REPRODUCED, f"vs {self.vs}: {shown}")


@dataclass(frozen=True)
class Close:
    """The paper: ours and ``vs`` are close at ``settings``: every mean paired reduction
    within +-``tol`` points of 0."""

    vs: str
    settings: tuple[str, ...]
    tol: float = 10.0

    def describe(self) -> str:
        return f"within +-{self.tol:g}% of {self.vs} at {', '.join(self.settings)}"

    def judge(self, table: pd.DataFrame) -> Verdict:
        t = table[(table["vs"] == self.vs) & table["label"].isin(self.settings)]
        if t.empty:
            return Verdict(NOT_REPRODUCED, f"no measurement vs {self.vs}")
        far = t[t["reduction_pct"].abs() > self.tol]
        shown = ", ".join(f"{r.label} {r.reduction_pct:.1f}%" for r in t.itertuples())
        if far.empty:
            return Verdict(REPRODUCED, f"vs {self.vs}: {shown}")
        return Verdict(NOT_REPRODUCED, f"vs {self.vs}: {shown}, beyond +-{self.tol:g}%")
