"""Why the non-clairvoyant ``hlas`` beats the clairvoyant ``hare`` in the paper regime.

Prints, per seed of the ``ours-hlas`` item's workloads (the same cells as
``simulate_paper``: paper regime, Hare switching, lease semantics):

* total weighted JCT of both policies and hlas's reduction, also with every sync time
  scaled (``--sync-scales``; 1 is the item's workload, 0 removes the per-batch sync);
* fastest-type GPU time idle while tasks it may run waited (``idle_waiting``, from
  ``hare_opt.analysis``, the measure ``hare-opt explain`` prints per type): the GPU time
  a work-conserving dispatch would have used;
* work inflation: processing time placed / the same tasks on the job's fastest type
  (``hare_opt.analysis.idle.overall_inflation``);
* the share of the weighted gap due to the two jobs that gain most under hlas;
* with ``--offline``: the same jobs all released at time 0 (one plan, no re-planning);
* with ``--toy``: the round engine's interleaved dispatcher on two jobs and one GPU;
* with ``--variants`` (testbed only: they plan in Python): ``hare``'s plan follower with
  slow GPU types hidden from its planner, with an experimental non-idling dispatcher,
  and with both, online and offline. They live here, not in the package: a measurement of
  what the dispatcher costs, not a policy.

``python experiments/why_hlas.py --setting testbed --seeds 1000 --sync-scales 1 0
--offline`` takes about 4 CPU s; ``--setting 160`` about 20 CPU s a seed and scale;
``--variants`` about 25 CPU s a testbed seed; ``--job j26`` shows how job j26's rounds
ran; ``--planner --budget 2500000`` counts ``hare``'s schedules per re-plan and reruns it
with a larger placement budget (about 75 CPU s on 160 GPUs).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

import numpy as np

from hare_opt.analysis import Placed
from hare_opt.analysis.idle import idle_while_waiting, overall_inflation
from hare_opt.generators import build_instance, get_regime, paper_jobs, parse_cluster
from hare_opt.heuristics.hare import candidate_orders, fluid_order
from hare_opt.heuristics.rounds import RoundEngine, _fixed, run_interleaved, run_serial
from hare_opt.model import GPU, Instance, Job
from hare_opt.model.planning import Warm
from hare_opt.sim import Policy
from hare_opt.sim.policies.plan import HarePolicy
from hare_opt.sim.results import SimResult
from hare_opt.sim.simulator import simulate
from hare_opt.sweeps.items import large, testbed

POLICIES = ("hare", "hlas")
FAST = 0  # generated clusters list their fastest type first (V100)


def workload(setting: str, seed: int) -> Instance:
    """The instance ``simulate_paper`` builds for the relaxed policies of ``ours-hlas``."""
    cell = testbed() if setting == "testbed" else large(160, 200)
    reg = get_regime(cell["regime"])
    gap = reg.mean_interarrival(len(parse_cluster(cell["cluster"])))
    jobs = paper_jobs(
        seed,
        cell["n_jobs"],
        mix=(1, 1, 1, 1),
        arrival="poisson",
        mean_interarrival=gap,
        max_gpus=8,
        regime=reg,
    )
    return build_instance(
        jobs,
        cell["cluster"],
        switching="hare",
        bandwidth_gbps=25.0,
        batch_scale=1.0,
        unit_ms=None,
        name=f"sim-s{seed}",
        regime=reg,
    )


def with_sync(inst: Instance, scale: float) -> Instance:
    def scaled(job: Job) -> Job:
        s = job.sync_time
        new = (
            {k: round(v * scale) for k, v in s.items()}
            if not isinstance(s, int)
            else round(s * scale)
        )
        return dataclasses.replace(job, sync_time=new)

    return inst if scale == 1 else inst.with_jobs([scaled(j) for j in inst.jobs])


def offline(inst: Instance) -> Instance:
    return inst.with_jobs([dataclasses.replace(j, release=0) for j in inst.jobs])


def _columns(inst: Instance, run: SimResult) -> tuple[np.ndarray, ...]:
    s = run.result.schedule
    job = np.array([inst.job_index(j) for j in s.job], dtype=np.int64)
    gpu = np.array([inst.gpu_index(g) for g in s.gpu], dtype=np.int64)
    return job, gpu, np.asarray(s.round), np.asarray(s.start), np.asarray(s.end)


def idle_waiting(inst: Instance, run: SimResult) -> float:
    """GPU time (s) of the fastest type idle while tasks it may run waited
    (``hare_opt.analysis.idle``: exact, min(idle GPUs, waiting tasks) over time)."""
    per_type, _ = idle_while_waiting(Placed.of(inst, run.result.schedule))
    return float(per_type[FAST] / 1e3)


def inflation(inst: Instance, run: SimResult) -> float:
    return overall_inflation(Placed.of(inst, run.result.schedule))


def measure(inst: Instance) -> dict[str, Any]:
    runs = {p: simulate(inst, p) for p in POLICIES}
    out: dict[str, Any] = {}
    for p, r in runs.items():
        jct = r.jobs["jct"].to_numpy()
        out[p] = {
            "wjct": float((r.jobs["weight"] * jct).sum() / 1e3),
            "jct": float(jct.sum() / 1e3),
            "idle": idle_waiting(inst, r),
            "infl": inflation(inst, r),
            "makespan": r.metrics["makespan"] / 1e3,
        }
    w = runs["hare"].jobs["weight"].to_numpy()
    gain = w * (runs["hare"].jobs["jct"].to_numpy() - runs["hlas"].jobs["jct"].to_numpy())
    top = np.argsort(gain)[::-1][:2]
    out["top2"] = float(gain[top].sum() / gain.sum()) if gain.sum() else float("nan")
    out["top2_jobs"] = [f"{inst.job_ids[j]}(K={inst.tasks_per_round[j]},w={w[j]})" for j in top]
    out["hare_faster"] = f"{int((gain < 0).sum())}/{len(gain)}"
    work = inst.rounds * inst.tasks_per_round * inst.min_task_time
    largest = work >= np.quantile(work, 0.75)
    out["largest_quarter"] = float(gain[largest].sum() / gain.sum()) if gain.sum() else 0.0
    out["switching"] = {p: r.metrics["switching_time"] / 1e3 for p, r in runs.items()}
    out["reserved"] = runs["hare"].metrics["reserved_idle_share"]
    return out


def line(label: str, m: dict[str, Any]) -> str:
    h, s = m["hare"], m["hlas"]
    red = 100 * (1 - s["wjct"] / h["wjct"])
    red_u = 100 * (1 - s["jct"] / h["jct"])
    return (
        f"{label:<22} wJCT hare {h['wjct']:>9.0f} hlas {s['wjct']:>9.0f} "
        f"(hlas better by {red:5.1f}%, unweighted {red_u:5.1f}%) | fast-GPU s idle "
        f"while tasks wait: {h['idle']:>6.0f} / {s['idle']:>5.0f} | inflation "
        f"{h['infl']:.3f} / {s['infl']:.3f} | makespan {h['makespan']:.0f} / "
        f"{s['makespan']:.0f} s | top-2 gainers {100 * m['top2']:.0f}% of the gap "
        f"{' '.join(m['top2_jobs'])}; largest quarter of jobs by work "
        f"{100 * m['largest_quarter']:.0f}% | jobs done sooner under hare: "
        f"{m['hare_faster']} | switching {m['switching']['hare']:.0f} / "
        f"{m['switching']['hlas']:.0f} s | hare reserved idle "
        f"{100 * m['reserved']:.1f}%"
    )


def toy() -> None:
    """Two 1-GPU jobs that sync every batch, one GPU: the interleaved dispatcher."""
    gpus = (GPU("g0", "V"),)
    for b_release in (0, 1):
        jobs = tuple(
            Job(n, {"V": 270}, rounds=5, weight=w, sync_time=205, switch_overhead=4, release=r)
            for n, w, r in (("a", 2, 0), ("b", 1, b_release))
        )
        inst = Instance(gpus=gpus, jobs=jobs)
        order = np.array([0, 1])
        print(
            f"toy, b released at {b_release}: run_interleaved "
            f"{run_interleaved(inst, order).objective()}, run_serial "
            f"{run_serial(inst, order).objective()}, hlas "
            f"{simulate(inst, 'hlas').result.objective} (sum w C)"
        )


def run_nonidling(inst: Instance, order: np.ndarray, warm: Warm | None = None) -> RoundEngine:
    """``run_interleaved`` with one change: t is the earliest time at which *any* job with
    rounds left could start one (barrier passed, an eligible GPU free), ready or not;
    of the jobs whose barrier is <= t the first in ``order`` places its next round. A
    job outranked once is thus offered every GPU that frees while better jobs sync."""
    fx = _fixed(inst)
    eng = RoundEngine(inst, warm=warm, capacity=fx.runs)
    rank = np.empty(inst.num_jobs, np.int64)
    rank[np.asarray(order)] = np.arange(len(order))
    left = inst.rounds.astype(np.int64).copy()
    elig = inst.eligible_by_type
    free, srt, barrier = eng._gst[0], eng._gst[2], eng._jst[0]
    big = np.iinfo(np.int64).max // 4
    while (live := np.flatnonzero(left > 0)).size:
        first_free = free[srt[fx.tptr[:-1]]]  # per type, its GPU free first
        start = np.maximum(barrier[live], np.where(elig[live], first_free, big).min(axis=1))
        cand = live[barrier[live] <= start.min()]
        j = int(cand[np.argmin(rank[cand])])
        eng.place_round(j)
        left[j] -= 1
    return eng


def fast_types_only(inst: Instance, factor: float = 2.0) -> Instance:
    """Each job eligible only on the GPU types within ``factor`` of its fastest."""
    jobs = []
    for job in inst.jobs:
        best = min(job.task_time.values())
        keep = {t: p for t, p in job.task_time.items() if p <= factor * best}
        sync = (
            job.sync_time if isinstance(job.sync_time, int) else {t: job.sync_time[t] for t in keep}
        )
        jobs.append(dataclasses.replace(job, task_time=keep, sync_time=sync))
    return inst.with_jobs(jobs)


class FastHare(HarePolicy):
    """``hare`` whose planner sees only the GPU types within 2x of each job's fastest."""

    name = "hare-fast"

    def planning_instance(self, residual: Instance) -> Instance:
        return fast_types_only(residual)


class NonIdlingHare(HarePolicy):
    """``hare``'s follower, its plan from ``run_nonidling`` (one order: fluid)."""

    name = "hare-nonidling"
    fast_only = False

    def planning_instance(self, residual: Instance) -> Instance:
        return fast_types_only(residual) if self.fast_only else residual

    def _plan(
        self, residual: Instance, planning: Instance, warm: Warm | None, until: int | None = None
    ) -> np.ndarray:
        """The whole plan (``until`` only lets a planner stop early; the follower executes
        the same)."""
        return run_nonidling(planning, fluid_order(planning), warm).blocks.copy()


class FastNonIdlingHare(NonIdlingHare):
    name = "hare-nonidling-fast"
    fast_only = True


def variants(inst: Instance, label: str) -> None:
    for name, jobs in (("online", inst), ("offline", offline(inst))):
        # Fresh policy objects per run. They are Policies, but mypy sees HarePolicy.mode as
        # str (hare_opt infers it from ``mode = "relaxed"``), not the Protocol's Literal.
        policies: tuple[str | Policy, ...] = (  # type: ignore[assignment]
            "hare",
            "hlas",
            FastHare(),
            NonIdlingHare(),
            FastNonIdlingHare(),
        )
        got = {
            str(p if isinstance(p, str) else p.name): simulate(jobs, p).metrics[
                "total_weighted_jct"
            ]
            / 1e3
            for p in policies
        }
        print(
            f"{label} {name}: total weighted JCT (s) "
            + ", ".join(f"{k} {v:.0f}" for k, v in got.items()),
            flush=True,
        )


def detail(inst: Instance, job_id: str, bucket_s: float = 500.0) -> None:
    """How ``job_id``'s rounds ran: per ``bucket_s`` of time, rounds started, median
    round period and the mean number of its batches a round ran on slower types."""
    j = inst.job_index(job_id)
    print(
        f"{job_id}: {inst.tasks_per_round[j]} GPUs, {inst.rounds[j]} rounds, weight "
        f"{inst.weight[j]}, arrives {inst.release[j] / 1e3:.0f} s"
    )
    for p in POLICIES:
        r = simulate(inst, p)
        job, gpu, rnd, st, _ = _columns(inst, r)
        sel = job == j
        slow = (inst.gpu_type_index[gpu[sel]] != 0).astype(np.int64)
        rounds = np.unique(rnd[sel])
        first = np.array([st[sel][rnd[sel] == x].min() for x in rounds])
        nslow = np.bincount(np.searchsorted(rounds, rnd[sel]), weights=slow)
        period = np.diff(first, prepend=first[0])
        b = (first // int(bucket_s * 1e3)).astype(np.int64)
        rows = []
        for k in np.unique(b):
            m = b == k
            rows.append(
                f"{k * bucket_s:.0f}s: {m.sum()} rounds, period "
                f"{np.median(period[m]) / 1e3:.2f} s, slow {nslow[m].mean():.1f}"
            )
        jct = r.jobs.loc[r.jobs["job"] == job_id, "jct"].iloc[0] / 1e3
        print(f"  {p}: JCT {jct:.0f} s; " + "; ".join(rows))


def planner_stats(inst: Instance, budget: int | None) -> None:
    """Schedules evaluated per warm re-plan of ``hare``; with ``budget``, ``hare`` again
    with that many round placements per plan."""
    import hare_opt.heuristics.planning as planning

    seen: list[tuple[int, int]] = []
    search = planning.search_hare

    def counted(residual: Instance, **kw: Any) -> Any:
        out = search(residual, **kw)
        seen.append((out.evaluations, int(residual.rounds.sum())))
        return out

    planning.search_hare = counted  # type: ignore[assignment]
    try:
        base = simulate(inst, "hare").metrics["total_weighted_jct"] / 1e3
    finally:
        planning.search_hare = search  # type: ignore[assignment]
    ev = np.array([e for e, _ in seen])
    print(
        f"hare: {len(ev)} warm re-plans, {int((ev == 1).sum())} evaluated one schedule; "
        f"residual rounds median {int(np.median([r for _, r in seen]))}; total weighted "
        f"JCT {base:.0f} s"
    )
    if budget is not None:
        more = simulate(inst, "hare", budget=budget).metrics["total_weighted_jct"] / 1e3
        print(f"hare with budget {budget}: {more:.0f} s ({100 * (more / base - 1):+.2f}%)")


def planned_offline(inst: Instance) -> None:
    """With every job at 0, the one plan's objective against the executed schedule's."""
    from hare_opt.heuristics.hare import solve_hare
    from hare_opt.heuristics.planning import HarePlanner
    from hare_opt.model.options import Run

    off = offline(inst)
    plan = solve_hare(off, Run(), HarePlanner().options(off)).objective
    done = simulate(off, "hare").result.objective
    print(
        f"offline: hare's plan sum w C {plan}, executed {done}; run_serial = "
        f"run_interleaved for every order: "
        + str(
            all(
                run_serial(off, o).objective() == run_interleaved(off, o).objective()
                for o in candidate_orders(off).values()
            )
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--setting", choices=("testbed", "160"), default="testbed")
    ap.add_argument("--seeds", type=int, nargs="+", default=None)
    ap.add_argument("--sync-scales", type=float, nargs="+", default=[1.0])
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("--toy", action="store_true")
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--job", help="show how this job's rounds ran under each policy")
    ap.add_argument(
        "--planner", action="store_true", help="hare's evaluations per re-plan (and --budget)"
    )
    ap.add_argument("--budget", type=int, help="with --planner: rerun hare at this budget")
    a = ap.parse_args()
    if a.variants and a.setting != "testbed":
        ap.error("--variants runs on the testbed only (its planner loops in Python)")
    t0 = time.process_time()
    if a.toy:
        toy()
    for seed in a.seeds if a.seeds is not None else ([] if a.toy else [1000]):
        inst = workload(a.setting, seed)
        if a.variants:
            variants(inst, f"{a.setting} s{seed}")
            continue
        if a.job:
            detail(inst, a.job)
        if a.planner:
            planner_stats(inst, a.budget)
        for scale in a.sync_scales:
            print(
                line(f"{a.setting} s{seed} sync x{scale:g}", measure(with_sync(inst, scale))),
                flush=True,
            )
        if a.offline:
            print(line(f"{a.setting} s{seed} offline", measure(offline(inst))), flush=True)
            planned_offline(inst)
    print(f"CPU {time.process_time() - t0:.1f} s")


if __name__ == "__main__":
    main()
