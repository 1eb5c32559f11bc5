"""Hand-built instances: the paper's Fig. 1 toy (instances/fig1.json is written from it),
the family that refutes the paper's Theorem 4 on one GPU, and the family on which
geobatch's ratio grows with the number of GPUs under restricted eligibility.

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
    "a": (
        "heterogeneity-oblivious",
        10.5,
        [
            ("J2", 0, 0, "GPU1", 0, 2),
            ("J2", 0, 1, "GPU1", 2, 4),
            ("J2", 0, 2, "GPU1", 4, 6),
            ("J1", 0, 0, "GPU1", 6, 9),
            ("J3", 0, 0, "GPU2", 0, 3),
            ("J3", 1, 0, "GPU2", 3, 6),
            ("J3", 0, 1, "GPU3", 0, 1),
            ("J3", 1, 1, "GPU3", 3, 4),
            ("J1", 0, 1, "GPU3", 6, 8),
        ],
    ),
    "b": (
        "heterogeneity-aware, no intra-job parallelism",
        9.0,
        [
            ("J2", 0, 0, "GPU1", 0, 2),
            ("J2", 0, 1, "GPU1", 2, 4),
            ("J2", 0, 2, "GPU1", 4, 6),
            ("J1", 0, 0, "GPU2", 0, 4),
            ("J1", 0, 1, "GPU2", 4, 8),
            ("J3", 0, 0, "GPU3", 0, 1),
            ("J3", 0, 1, "GPU3", 1, 2),
            ("J3", 1, 0, "GPU3", 2, 3),
            ("J3", 1, 1, "GPU3", 3, 4),
        ],
    ),
    "c": (
        "Hare: joint inter- and intra-job parallelism",
        8.5,
        [
            ("J2", 0, 0, "GPU1", 0, 2),
            ("J2", 0, 1, "GPU1", 2, 4),
            ("J2", 0, 2, "GPU1", 4, 6),
            ("J3", 0, 0, "GPU2", 0, 3),
            ("J3", 1, 0, "GPU2", 3, 6),
            ("J1", 0, 0, "GPU3", 0, 2),
            ("J3", 0, 1, "GPU3", 2, 3),
            ("J1", 0, 1, "GPU3", 3, 5),
            ("J3", 1, 1, "GPU3", 5, 6),
        ],
    ),
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


def cascade_instance(k: int = 4, heavy: int = 1000) -> Instance:
    """Restricted eligibility on 2^k GPUs where geobatch is (k+2)/3-bad as ``heavy`` grows.

    Nested GPU sets E_1 (all) > E_2 > ... > E_{k+1} (one GPU), E_i of 2^(k+1-i) GPUs;
    type T_i holds E_i minus E_{i+1}. Level i (i <= k) has 2^(k-i) unit jobs that may
    run on E_i, level k+1 one unit job on E_{k+1}; all weigh 1 and come at 0. A job h
    of weight ``heavy`` (one unit task, any GPU) comes at 2. OPT runs level i on T_i
    at [0, 1] and h at [2, 3]: M + 3 heavy, the critical-path bound. geobatch puts
    the levels in one batch where level i takes the lowest GPUs of E_i, i.e. E_{i+1}
    (types in the order listed, deepest first, so its tie-break picks them), which
    blocks level i+1 for one unit: level i ends at i, the batch at k+1, and h, in the
    next batch, at k+2. docs/theory.md (c) gives the numbers.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    m = Model()
    m.add_gpu(f"T{k + 1}", id="g0")
    for i in range(k, 0, -1):  # type T_i: 2^(k-i) GPUs, listed deepest first
        m.add_gpus(f"T{i}", 2 ** (k - i))
    for i in range(1, k + 2):
        types = {f"T{t}": 1 for t in range(i, k + 2)}
        for n in range(2 ** (k - i) if i <= k else 1):
            m.add_job(types, id=f"l{i}-{n}")
    m.add_job({f"T{t}": 1 for t in range(1, k + 2)}, weight=heavy, release=2, id="h")
    return m.build(f"cascade-k{k}-w{heavy}")
