"""Offline reproduction items: Fig. 1, heuristic quality, bound verification, runtime.

Their cells (``sweeps.offline``, one solver or one part a cell) are joined here by
instance before any analysis.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from hare_opt.examples import fig1_instance, fig1_schedule, smith_counterexample
from hare_opt.plot import gantt
from hare_opt.plot.gantt import job_legend
from hare_opt.plot.style import policy_color, policy_marker, policy_style
from hare_opt.solvers import solve, solver_names
from hare_opt.sweeps.cells import Cell
from hare_opt.sweeps.items import OFFLINE_SEEDS, Item, seeds
from hare_opt.sweeps.offline import BOUNDS, PAPER, REFERENCE
from hare_opt.sweeps.quality import all_heuristics, ratios, summarise

# --- fig1 --------------------------------------------------------------------------------


def fig1_item() -> Item:
    def analyse(df: pd.DataFrame, quick: bool) -> tuple[pd.DataFrame, str, str]:
        table = df[["schedule", "total_jct_s", "paper_s", "status"]].copy()
        paper = table[table["status"] == "paper's schedule"]
        match = bool(np.allclose(paper["total_jct_s"], paper["paper_s"]))
        opt = table[table["schedule"].str.startswith("optimum")]
        proved = opt["status"].eq("optimal").all()
        agree = opt["total_jct_s"].nunique() == 1
        best = float(opt["total_jct_s"].min())
        ours = (
            f"checker gives {', '.join(f'{v:g}' for v in paper['total_jct_s'])} s for "
            f"(a), (b), (c); proven optimum {best:g} s "
            f"({'the exact solvers agree' if agree else 'SOLVERS DISAGREE'})"
        )
        if not (match and proved and agree):
            return table, ours, "check failed"
        verdict = (
            "reproduced; (c) is optimal"
            if best == 8.5
            else f"(a)-(c) reproduced; (c) is NOT optimal: {best:g} s is"
        )
        return table, ours, verdict

    def figure(table: pd.DataFrame) -> Figure:
        inst = fig1_instance()
        panels = [(f"({k}) paper", fig1_schedule(k)) for k in "abc"]
        opt = solve(inst, "cpsat", time_limit=60)
        panels.append((f"proven optimum ({opt.status})", opt.schedule))
        fig = Figure(figsize=(12, 6.5), layout="constrained")
        axes = fig.subplots(2, 2)
        for ax, (name, sched) in zip(axes.flat, panels):
            total = float(
                table.loc[
                    table["schedule"].str.startswith(name[:3])
                    | (name.startswith("proven") & table["schedule"].str.startswith("optimum")),
                    "total_jct_s",
                ].iloc[0]
            )
            gantt(inst, sched, ax=ax, title=f"{name}: total JCT {total:g} s", legend=False)
        fig.legend(
            handles=job_legend(inst),
            loc="outside lower center",
            fontsize="small",
            title="jobs",
            ncol=inst.num_jobs,
        )
        return fig

    return Item(
        "Fig. 1 toy: the paper's three schedules and the proven optimum",
        "total JCT 10.5 s (heterogeneity-oblivious), 9 s (aware, no intra-job "
        "parallelism), 8.5 s (Hare); optimality of 8.5 s not stated",
        lambda quick: [
            Cell("fig1", {"solver": s}).canonical() for s in (PAPER, *solver_names(portfolio=True))
        ],
        analyse,
        figure,
    )


# --- heuristic quality against OPT -----------------------------------------------------


def quality_item() -> Item:
    def cells(quick: bool) -> list[Cell]:
        sizes = [(4, 3, 20), (6, 4, 30)] if quick else [(4, 3, 20), (6, 4, 30), (8, 5, 40)]
        seeds = OFFLINE_SEEDS[:3] if quick else OFFLINE_SEEDS[:5]
        # The portfolio (CP-SAT, MILP and bnb) as the reference: it proves far more of
        # these than CP-SAT alone (3 of 15 with cpsat at 30 s).
        return [
            Cell(
                "quality",
                {
                    "seed": s,
                    "n_jobs": n,
                    "n_gpus": m,
                    "max_tasks": t,
                    "time_limit": 10.0 if quick else 30.0,
                    "solver": solver,
                },
            ).canonical()
            for n, m, t in sizes
            for s in seeds
            for solver in (*all_heuristics(), REFERENCE)
        ]

    def analyse(df: pd.DataFrame, quick: bool) -> tuple[pd.DataFrame, str, str]:
        df = ratios(df, ["seed", "n_jobs", "n_gpus", "max_tasks"])
        table = summarise(df, by=()).rename(
            columns={
                "mean_ratio": "mean",
                "max_ratio": "max",
                "mean_ratio_opt": "mean_where_opt_proved",
                "vs_opt": "opt_proved",
            }
        )
        mean = dict(zip(table["solver"], table["mean"]))
        on_opt = dict(zip(table["solver"], table["mean_where_opt_proved"]))
        n_opt, n = int(table["opt_proved"].iloc[0]), int(table["instances"].iloc[0])
        ours = (
            f"mean objective / OPT on the {n_opt} of {n} instances with a proved optimum: "
            + ", ".join(f"{k} {v:.3f}" for k, v in on_opt.items())
            + "; / (OPT or lower bound) on all: "
            + ", ".join(f"{k} {v:.3f}" for k, v in mean.items())
        )
        hp = df[df["solver"].str.startswith("hare-paper")]
        if len(hp):  # what hare-paper's numbers rest on (both readings: one relaxation)
            proved = int((hp["relaxation_optimal"] == True).sum())  # noqa: E712 - may be ""
            ours += (
                f"; hare-paper's relaxation (both readings of step 3) proved optimal "
                f"on {proved} of {len(hp)} runs (the others stopped at their "
                "deterministic work limit: Algorithm 1 then orders by an incumbent, not "
                "by the relaxation's optimum)"
            )
        limited = int(df["wall_clock_limited"].sum()) if "wall_clock_limited" in df else 0
        if limited:
            ours += f"; the wall-clock safety net acted on {limited} rows (not reproducible)"
        best = mean["hare"] <= min(mean.values()) + 1e-9
        # Ratios to a lower bound over-state ratios to OPT: a mean <= 1.1 over all proves it.
        verdict = (
            "hare best, within 10% of OPT on average"
            if best and mean["hare"] <= 1.10
            else "hare best, within 10% of OPT where proved"
            if best and on_opt["hare"] <= 1.10
            else "hare best; 10% target not shown"
            if best
            else "hare not best"
        )
        return table, ours, verdict

    def figure(table: pd.DataFrame) -> Figure:
        fig = Figure(figsize=(7, 1.8 + 0.35 * len(table)), layout="constrained")
        ax = fig.subplots()
        y = np.arange(len(table))
        names = [str(s) for s in table["solver"]]
        ax.barh(
            y,
            table["mean"],
            0.6,
            color=[policy_color(s) for s in names],
            label="mean over the instances",
        )
        for i, s in enumerate(names):
            ax.plot(
                table["max"].iloc[i],
                i,
                linestyle="none",
                marker=policy_marker(s),
                color="black",
                markersize=7,
                label="worst instance" if i == 0 else None,
            )
        ax.axvline(1, color="k", lw=0.8)
        ax.set_yticks(y, names)
        ax.invert_yaxis()
        ax.set_xlabel("objective / OPT (or / lower bound where OPT is not proved)")
        fig.legend(fontsize=8, loc="outside lower center", ncol=2)
        return fig

    return Item(
        "heuristics against the proven optimum (random instances, 20-40 tasks)",
        "(ours) hare within 10% of OPT on average and better than hare-paper",
        cells,
        analyse,
        figure,
    )


# --- bound verification ----------------------------------------------------------------

#: Parts of the bound check on every instance, and on the small ones with OPT.
PARTS = (BOUNDS, "hare", "geobatch")
EXACT_PARTS = (*PARTS, "cpsat", "hare-paper", "hare-paper:step3=start")


def bound_checks(df: pd.DataFrame) -> pd.DataFrame:
    """One row per instance from its parts' rows: the ratios each check reads."""
    key = ["seed", "n_jobs", "n_gpus", "exact"]
    base = df[df["part"] == BOUNDS].set_index(key)[
        ["tasks", "alpha", "lower_bound", "guarantee", "approx_factor", "paper_claim"]
    ]
    objective = df[df["part"] != BOUNDS].pivot_table(
        index=key, columns="part", values="objective", aggfunc="first"
    )
    out = base.join(objective)
    lb = out["lower_bound"]
    out["hare_over_guarantee_lb"] = out["hare"] / (out["guarantee"] * lb)
    out["geobatch_over_factor_lb"] = out["geobatch"] / (out["approx_factor"] * lb)
    if "cpsat" in out:
        out["opt"] = out["cpsat"]
        out["lb_over_opt"] = lb / out["opt"]
        out["paper_ratio"] = out["hare-paper"] / out["opt"]
        out["paper_start_ratio"] = out["hare-paper:step3=start"] / out["opt"]
    return out.reset_index()


def bounds_item() -> Item:
    def cells(quick: bool) -> list[Cell]:
        seeds = OFFLINE_SEEDS[:10] if quick else OFFLINE_SEEDS[:40]
        small = [
            Cell(
                "bounds",
                {
                    "seed": s,
                    "n_jobs": 3,
                    "n_gpus": 2,
                    "exact": True,
                    "finite_alpha": True,
                    "part": p,
                },
            ).canonical()
            for s in seeds
            for p in EXACT_PARTS
        ]
        big = [
            Cell(
                "bounds", {"seed": s, "n_jobs": n, "n_gpus": m, "exact": False, "part": p}
            ).canonical()
            for s in seeds[:5]
            for n, m in ((50, 20), (200, 60))
            for p in PARTS
        ]
        return small + big

    def analyse(df: pd.DataFrame, quick: bool) -> tuple[pd.DataFrame, str, str]:
        df = bound_checks(df)
        worst_g = float(df["hare_over_guarantee_lb"].max())
        ex = df[df["opt"].notna()] if "opt" in df else df.iloc[0:0]
        lb_ok = bool((ex["lb_over_opt"] <= 1 + 1e-9).all())
        fin = ex[np.isfinite(ex["alpha"])]  # infinite alpha: the claim says nothing there
        worst_a = (
            float(df["geobatch_over_factor_lb"].max())
            if "geobatch_over_factor_lb" in df
            else np.nan
        )
        rows = [
            {
                "check": "hare <= guarantee x LB",
                "instances": len(df),
                "worst": worst_g,
                "holds": worst_g <= 1 + 1e-9,
            },
            {
                "check": "geobatch <= approx_factor x LB",
                "instances": len(df),
                "worst": worst_a,
                "holds": bool(worst_a <= 1 + 1e-9),
            },
            {
                "check": "LB <= OPT",
                "instances": len(ex),
                "worst": float(ex["lb_over_opt"].max()) if len(ex) else np.nan,
                "holds": lb_ok,
            },
        ]
        for reading, col in (("phi", "paper_ratio"), ("start", "paper_start_ratio")):
            if col not in fin:  # cells made before the start reading was scored
                continue
            rows.append(
                {
                    "check": f"hare-paper (step 3 {reading}), random instances with "
                    f"finite alpha ({len(fin)} of {len(ex)})",
                    "instances": len(fin),
                    "worst": float((fin[col] / fin["paper_claim"]).max()) if len(fin) else np.nan,
                    "holds": bool((fin[col] <= fin["paper_claim"] + 1e-9).all()),
                }
            )
        for k in (4, 6, 10):
            # One GPU, R = K = 1, no releases: 1||sum w_j C_j, where Smith's rule (our
            # ``wspt`` rule in that case) is optimal, so OPT is exact without a search.
            inst = smith_counterexample(k)
            opt = solve(inst, "wspt").objective
            claim = float(inst.alpha.max() * (2 + inst.alpha.max()))
            for reading in ("phi", "start"):
                paper = solve(inst, "hare-paper", step3=reading).objective
                rows.append(
                    {
                        "check": f"hare-paper (step 3 {reading}), Smith family k={k}",
                        "instances": 1,
                        "worst": paper / opt / claim,
                        "holds": paper <= claim * opt,
                    }
                )
        table = pd.DataFrame(rows)
        held = {
            r: bool(table.loc[table["check"].str.contains(f"step 3 {r}"), "holds"].all())
            for r in ("phi", "start")
        }
        failed = [r for r, ok in held.items() if not ok]
        ours = (
            f"hare's guarantee held on all {len(df)} instances (worst {worst_g:.3f} of it); "
            f"lower bound <= OPT on all; paper's bound, tested on the {len(fin)} of "
            f"{len(ex)} exact instances with finite alpha and the Smith family, "
            + (
                f"FAILS under step 3 read as {' and '.join(failed)}"
                if failed
                else "held under both readings of step 3"
            )
        )
        verdict = (
            f"paper's alpha(2+alpha) claim refuted under step 3 "
            f"{' and '.join(failed)} (its relaxation read as one Queyranne inequality "
            "per GPU); ours holds"
            if failed and table.loc[:1, "holds"].all()
            else "see table"
        )
        return table, ours, verdict

    def figure(table: pd.DataFrame) -> Figure:
        fig = Figure(figsize=(9, 1.6 + 0.28 * len(table)), layout="constrained")
        ax = fig.subplots()
        y = np.arange(len(table))
        ax.barh(y, table["worst"], color=["C2" if h else "C3" for h in table["holds"]])
        ax.axvline(1, color="k", lw=0.8)
        ax.set_yticks(y, table["check"], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(
            "worst ratio / claimed bound (<= 1: the bound held)\nhare-paper's "
            "claim: alpha(2+alpha) x OPT; hare's: guarantee x lower bound"
        )
        return fig

    return Item(
        "bound verification: hare's guarantee, lower bounds, the paper's alpha(2+alpha)",
        "Theorem 4: Algorithm 1 is an alpha(2+alpha)-approximation",
        cells,
        analyse,
        figure,
    )


# --- scheduler runtime ----------------------------------------------------------------


def runtime_item() -> Item:
    def cells(quick: bool) -> list[Cell]:
        hare = [(20, 15), (100, 60), (500, 160), (2000, 512)] + ([] if quick else [(8000, 512)])
        out = [
            Cell("runtime", {"seed": s, "solver": "hare", "n_jobs": n, "n_gpus": m})
            for n, m in hare
            for s in seeds(quick)[:2]
        ]
        out += [
            Cell("runtime", {"seed": s, "solver": r, "n_jobs": n, "n_gpus": m})
            for r in ("wspt",)
            for n, m in hare[:3]
            for s in seeds(quick)[:2]
        ]
        return out

    def analyse(df: pd.DataFrame, quick: bool) -> tuple[pd.DataFrame, str, str]:
        table = (
            df.groupby(["solver", "jobs", "gpus"], sort=False)
            .agg(
                tasks=("tasks", "mean"),
                seconds=("seconds", "mean"),
                kernel_load_s=("load_s", "mean"),
            )
            .reset_index()
        )
        limited = df[df["stopped"].astype(str).str.len() > 0] if "stopped" in df else df[:0]
        if len(limited):  # a time is a runtime only when the solve ended by itself
            raise ValueError(
                f"{len(limited)} runtime cells were stopped (time limit): "
                f"{sorted(set(limited['solver']))}"
            )
        h = table[table["solver"] == "hare"]
        rate = float((h["tasks"] / h["seconds"]).iloc[-1])
        ours = (
            f"hare: {int(h['tasks'].iloc[-1])} tasks in {h['seconds'].iloc[-1]:.2f} s "
            f"({rate:,.0f} tasks/s)"
        )
        return table, ours, "measured (the paper reports no runtimes)"

    def figure(table: pd.DataFrame) -> Figure:
        fig = Figure(figsize=(6, 4), layout="constrained")
        ax = fig.subplots()
        for s, g in table.groupby("solver", sort=False):
            ax.loglog(g["tasks"], g["seconds"], "-", **policy_style(str(s)))
        for axis in (ax.xaxis, ax.yaxis):  # decades only: minor labels collide
            axis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("tasks in the instance")
        ax.set_ylabel("scheduler wall time (s)")
        ax.grid(alpha=0.3, which="both")
        ax.legend()
        return fig

    return Item(
        "scheduler runtime against instance size",
        "(not reported in the paper)",
        cells,
        analyse,
        figure,
    )
