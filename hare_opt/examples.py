"""Hand-built instances: the paper's Fig. 1 toy (instances/fig1.json is written from it),
and the family that refutes the paper's Theorem 4 on one GPU.

Times are in units of 0.5 s so that they are integers: the paper's per-task
times on GPU1/GPU2/GPU3 are J1 1.5/2/1 s, J2 1/2/1 s, J3 2/1.5/0.5 s. J1 is one
round of 2 tasks, J2 one round of 3, J3 two rounds of 2; no sync, no setup, all
jobs at 0, unit weights (source: Chen et al., HPDC '22, Fig. 1).
"""

from __future__ import annotations

from hare_opt.model import Instance, Model, Schedule

FIG1_UNIT = "0.5s"

#: The paper's three schedules of Fig. 1 as (job, round, task, gpu, start, end) in 0.5 s units,
#: with the total JCT the paper states for each (in seconds).
FIG1_SCHEDULES: dict[str, tuple[str, float, list[tuple[str, int, int, str, int, int]]]] = {
    "a": ("heterogeneity-oblivious", 10.5, [
        ("J2", 0, 0, "GPU1", 0, 2), ("J2", 0, 1, "GPU1", 2, 4), ("J2", 0, 2, "GPU1", 4, 6),
        ("J1", 0, 0, "GPU1", 6, 9), ("J3", 0, 0, "GPU2", 0, 3), ("J3", 1, 0, "GPU2", 3, 6),
        ("J3", 0, 1, "GPU3", 0, 1), ("J3", 1, 1, "GPU3", 3, 4), ("J1", 0, 1, "GPU3", 6, 8)]),
    "b": ("heterogeneity-aware, no intra-job parallelism", 9.0, [
        ("J2", 0, 0, "GPU1", 0, 2), ("J2", 0, 1, "GPU1", 2, 4), ("J2", 0, 2, "GPU1", 4, 6),
        ("J1", 0, 0, "GPU2", 0, 4), ("J1", 0, 1, "GPU2", 4, 8), ("J3", 0, 0, "GPU3", 0, 1),
        ("J3", 0, 1, "GPU3", 1, 2), ("J3", 1, 0, "GPU3", 2, 3), ("J3", 1, 1, "GPU3", 3, 4)]),
    "c": ("Hare: joint inter- and intra-job parallelism", 8.5, [
        ("J2", 0, 0, "GPU1", 0, 2), ("J2", 0, 1, "GPU1", 2, 4), ("J2", 0, 2, "GPU1", 4, 6),
        ("J3", 0, 0, "GPU2", 0, 3), ("J3", 1, 0, "GPU2", 3, 6), ("J1", 0, 0, "GPU3", 0, 2),
        ("J3", 0, 1, "GPU3", 2, 3), ("J1", 0, 1, "GPU3", 3, 5), ("J3", 1, 1, "GPU3", 5, 6)]),
}


def fig1_instance() -> Instance:
    m = Model()
    for g in ("GPU1", "GPU2", "GPU3"):
        m.add_gpu(g, id=g)
    m.add_job({"GPU1": 3, "GPU2": 4, "GPU3": 2}, rounds=1, tasks_per_round=2, id="J1")
    m.add_job({"GPU1": 2, "GPU2": 4, "GPU3": 2}, rounds=1, tasks_per_round=3, id="J2")
    m.add_job({"GPU1": 4, "GPU2": 3, "GPU3": 1}, rounds=2, tasks_per_round=2, id="J3")
    return m.build("fig1", time_unit=FIG1_UNIT)


def fig1_schedule(which: str) -> Schedule:
    """The paper's schedule (a), (b) or (c) of Fig. 1."""
    return Schedule.from_tasks(FIG1_SCHEDULES[which][2]).sorted()


def smith_counterexample(k: int = 6, heavy: int = 100) -> Instance:
    """1||sum w_j C_j (one GPU, R = K = 1, alpha = 1) on which Algorithm 1 is (k+2)/2-bad.

    With a single Queyranne inequality per GPU the relaxation puts every start
    at 0 except that of the job with the least w/p (``c``), so H orders the
    rest by processing time alone: k light unit jobs run before the heavy job
    ``d`` that Smith's rule runs first. docs/theory.md (a) gives the numbers.
    """
    m = Model()
    m.add_gpu("G", id="g0")
    m.add_job({"G": 1}, weight=1, id="c")
    for i in range(k):
        m.add_job({"G": 1}, weight=2, id=f"s{i}")
    m.add_job({"G": 2}, weight=2 * heavy, id="d")
    return m.build(f"smith-k{k}-w{heavy}")
