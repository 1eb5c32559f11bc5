"""Search for instances on which a heuristic is far from optimal (``hare-opt falsify``).

A claimed approximation ratio is a universal statement; one instance whose
ratio, measured against a *proved* optimum, exceeds it refutes the claim. The
search is a seeded random restart plus hill climbing over small instances:
mutate a number (task or sync time, weight, release, rounds, K, setup), add or
drop a job or a GPU, keep the change when the ratio does not drop. Against
``opt`` a candidate counts only if the exact solver proved its optimum;
against ``bound`` the reference is a lower bound (larger instances, weaker
evidence: a ratio above a guarantee on OPT then proves nothing).

A *family* narrows the space to where a claim's proof is suspect, so that a hunt finds
what it looks for by the mechanism rather than by a lucky seed: ``smith`` is plain
1||sum w_j C_j (one GPU, one task per job, no sync, releases or setups; alpha = 1),
with weights spread over orders of magnitude, where Algorithm 1's relaxation keeps one
Queyranne inequality per GPU and so orders all jobs but one by processing time alone
(docs/theory.md (a)).
"""

from __future__ import annotations

import copy
import math
import random
import threading
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from tqdm import tqdm

from hare_opt.bounds import lower_bound
from hare_opt.io import instance_from_dict, instance_to_dict
from hare_opt.model import HareOptError, Instance, OptionError, Result
from hare_opt.solvers import SolverError, claimed_factor, solve
from hare_opt.util import interrupt

TYPES = ("A", "B", "C")
#: Instance families the search may be confined to (``Space.family``).
FAMILIES = ("random", "smith")


@dataclass
class Space:
    """What instances the search may visit.

    ``paper`` keeps to the paper's assumptions (no setups, sync < task time,
    sync ratios finite); ``full`` allows everything the spec allows.
    ``eligibility="full"``: every job may run on every GPU; ``types``: how many
    GPU types are drawn from (1: identical GPUs); ``finite_alpha=False`` also
    visits jobs whose sync is 0 on one type and positive on another. ``family``
    ``smith``: 1||sum w_j C_j with up to ``max_tasks`` jobs and weights up to
    ``max_weight`` (the GPU, type and model fields do not apply).
    """

    max_tasks: int = 8
    max_gpus: int = 3
    max_time: int = 20
    model: str = "paper"
    min_gpus: int = 1
    eligibility: str = "any"
    types: int = len(TYPES)
    finite_alpha: bool = True
    family: str = "random"
    max_weight: int = 1000

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise OptionError(f"family must be one of {', '.join(FAMILIES)}, got {self.family!r}")
        if self.family == "smith" and self.max_tasks < 2:
            raise OptionError("the smith family needs max_tasks >= 2 (jobs to order)")
        if not 1 <= self.max_weight <= 10**7:
            raise OptionError("max_weight must be between 1 and 10^7")
        if self.model not in ("paper", "full"):
            raise OptionError(f"model must be 'paper' or 'full', got {self.model!r}")
        if self.eligibility not in ("any", "full"):
            raise OptionError(f"eligibility must be 'any' or 'full', got {self.eligibility!r}")
        if not 1 <= self.types <= len(TYPES):
            raise OptionError(f"types must be between 1 and {len(TYPES)}")
        if self.max_tasks < 1 or self.max_gpus < 1 or self.max_time < 1:
            raise OptionError("max_tasks, max_gpus and max_time must be positive")
        if not 1 <= self.min_gpus <= self.max_gpus:
            raise OptionError("min_gpus must be between 1 and max_gpus")


@dataclass
class Finding:
    """The worst instance seen: the heuristic's result and what it is measured against."""

    solver: str
    against: str
    instance: Instance | None = None
    result: Result | None = None
    reference: float | None = None
    ratio: float = 0.0  # the ratio of ``instance`` (the best-scoring one)
    score: float = 0.0  # what the search climbed, on ``instance``
    score_kind: str = "ratio"  # "ratio", or "relative" (ratio / claimed guarantee)
    max_ratio: float = 0.0  # the highest ratio of any instance evaluated
    worst: tuple[Instance, Result, float] | None = None  # that instance, its result, reference
    guarantee: float | None = None
    alpha: float | None = None
    evaluated: int = 0
    skipped: int = 0
    history: list[float] = field(default_factory=list)
    errors: list[tuple[dict, str]] = field(default_factory=list)  # solver bugs met on the way

    @property
    def violates(self) -> bool:
        return (
            self.against == "opt"
            and self.guarantee is not None
            and self.ratio > self.guarantee + 1e-9
        )


def claimed_guarantee(instance: Instance, solver: str) -> float | None:
    """The factor the solver's registry spec claims on this instance (None: no claim)."""
    return claimed_factor(instance, solver)


# --- instance generation and mutation (on the JSON form, validated on build) --------
def _sync(rng: random.Random, times: dict[str, int], space: Space) -> int | dict[str, int]:
    if space.model == "paper":
        cap = min(times.values()) - 1  # the paper assumes T^s < T^c
        if rng.random() < 0.5 or cap < 1:
            return rng.randint(0, max(0, cap))
        return {t: rng.randint(1, max(1, p - 1)) for t, p in times.items()}
    if rng.random() < 0.5:
        return rng.randint(0, 4)
    return {t: rng.randint(0, 4) for t in times}


def _time(rng: random.Random, space: Space) -> int:
    return max(1, min(space.max_time, round(math.exp(rng.uniform(0, math.log(space.max_time))))))


def _job(rng: random.Random, jid: str, types: list[str], budget: int, space: Space) -> dict:
    rounds = rng.randint(1, min(3, budget))
    k = rng.randint(1, max(1, min(3, budget // rounds)))
    chosen = (
        list(types)
        if space.eligibility == "full"
        else rng.sample(types, rng.randint(1, len(types)))
    )
    same = _time(rng, space) if rng.random() < 0.3 else None  # alpha = 1 jobs are common
    times = {t: same or _time(rng, space) for t in sorted(chosen)}
    release = rng.choice([0, 0, rng.randint(0, 12)])
    return {
        "id": jid,
        "weight": rng.randint(1, 6),
        "release": release,
        "rounds": rounds,
        "tasks_per_round": k,
        "task_time": times,
        "sync_time": _sync(rng, times, space),
        "switch_overhead": rng.randint(0, 3) if space.model == "full" else 0,
    }


def _weight(rng: random.Random, space: Space) -> int:
    """A weight log-uniform in [1, max_weight] (Smith's rule turns on w/p ratios)."""
    return max(
        1, min(space.max_weight, round(math.exp(rng.uniform(0, math.log(space.max_weight)))))
    )


def _smith_job(rng: random.Random, jid: str, space: Space) -> dict:
    return {
        "id": jid,
        "weight": _weight(rng, space),
        "release": 0,
        "rounds": 1,
        "tasks_per_round": 1,
        "task_time": {"A": _time(rng, space)},
        "sync_time": 0,
        "switch_overhead": 0,
    }


def _smith_candidate(rng: random.Random, space: Space, name: str) -> dict:
    jobs = [_smith_job(rng, f"j{i}", space) for i in range(rng.randint(2, space.max_tasks))]
    for job in jobs:  # jobs of one processing time share a weight (``_smith_shaped``)
        _smith_align(jobs, job)
    return {
        "format": "hare-opt/instance@1",
        "name": name,
        "time_unit": "s",
        "gpus": [{"id": "g0", "type": "A"}],
        "jobs": jobs,
    }


def _smith_align(jobs: list[dict], job: dict) -> None:
    """Give every job of ``job``'s processing time ``job``'s weight."""
    for other in jobs:
        if other["task_time"] == job["task_time"]:
            other["weight"] = job["weight"]


def _smith_mutate(rng: random.Random, data: dict, space: Space) -> dict:
    """One change within the family: a weight scaled or redrawn, a time redrawn or
    stepped (for a job and every job of its time alike), a job added (a copy of another:
    the family's bad cases have many light jobs alike; or a new one) or dropped."""
    d = copy.deepcopy(data)
    job = rng.choice(d["jobs"])
    kind = rng.randrange(5)
    if kind == 0:
        f = rng.choice([2, 3, 5, 10])
        job["weight"] = max(
            1,
            min(space.max_weight, job["weight"] * f if rng.random() < 0.5 else job["weight"] // f),
        )
    elif kind == 1:
        job["weight"] = _weight(rng, space)
    elif kind == 2:
        p = job["task_time"]["A"]
        job["task_time"]["A"] = (
            _time(rng, space)
            if rng.random() < 0.5
            else max(1, min(space.max_time, p + rng.choice([-1, 1])))
        )
    elif kind == 3 and len(d["jobs"]) < space.max_tasks:
        taken = {j["id"] for j in d["jobs"]}
        jid = next(f"j{i}" for i in range(len(taken) + 1) if f"j{i}" not in taken)
        job = (
            {**copy.deepcopy(job), "id": jid} if rng.random() < 0.5 else _smith_job(rng, jid, space)
        )
        d["jobs"].append(job)
    elif len(d["jobs"]) > 2:
        d["jobs"].remove(job)
        return d
    _smith_align(d["jobs"], job)
    return d


def random_candidate(rng: random.Random, space: Space, name: str = "falsify") -> dict:
    """A random instance in JSON form within ``space``."""
    if space.family == "smith":
        return _smith_candidate(rng, space, name)
    count = rng.randint(space.min_gpus, space.max_gpus)
    gpus = [{"id": f"g{i}", "type": rng.choice(TYPES[: space.types])} for i in range(count)]
    types = sorted({g["type"] for g in gpus})
    jobs, budget = [], space.max_tasks
    for i in range(rng.randint(1, 4)):
        if budget < 1:
            break
        jobs.append(_job(rng, f"j{i}", types, budget, space))
        budget -= jobs[-1]["rounds"] * jobs[-1]["tasks_per_round"]
    return {
        "format": "hare-opt/instance@1",
        "name": name,
        "time_unit": "s",
        "gpus": gpus,
        "jobs": jobs,
    }


def _tasks(data: dict) -> int:
    return sum(j["rounds"] * j["tasks_per_round"] for j in data["jobs"])


def mutate(rng: random.Random, data: dict, space: Space) -> dict:
    """One random change; the caller validates the result."""
    if space.family == "smith":
        return _smith_mutate(rng, data, space)
    d = copy.deepcopy(data)
    job = rng.choice(d["jobs"])
    types = sorted({g["type"] for g in d["gpus"]})
    step = rng.choice([-2, -1, 1, 2])
    kind = rng.randrange(10)
    if kind == 0:
        t = rng.choice(sorted(job["task_time"]))
        job["task_time"][t] = max(
            1,
            min(
                space.max_time,
                job["task_time"][t] * rng.choice([2, 3])
                if step > 0
                else job["task_time"][t] + step,
            ),
        )
    elif kind == 1:
        job["weight"] = max(1, job["weight"] + step)
    elif kind == 2:
        job["release"] = max(0, job["release"] + 2 * step)
    elif kind == 3:
        job["rounds"] = max(1, job["rounds"] + step // abs(step))
    elif kind == 4:
        job["tasks_per_round"] = max(1, job["tasks_per_round"] + step // abs(step))
    elif kind == 5:
        job["sync_time"] = _sync(rng, job["task_time"], space)
        if space.model == "full":
            job["switch_overhead"] = rng.randint(0, 3)
    elif kind == 6 and len(d["jobs"]) > 1:
        d["jobs"].remove(job)
    elif kind == 6:
        d["jobs"].append(_job(rng, f"j{len(d['jobs'])}x", types, 3, space))
    elif kind == 7 and len(d["gpus"]) < space.max_gpus and rng.random() < 0.5:
        d["gpus"].append(
            {"id": f"g{len(d['gpus'])}x", "type": rng.choice(types + list(TYPES[: space.types]))}
        )
    elif kind == 7 and len(d["gpus"]) > space.min_gpus:
        d["gpus"].pop(rng.randrange(len(d["gpus"])))
    elif kind == 8:  # make the job's times equal on all types (alpha of the job -> 1)
        same = rng.choice(list(job["task_time"].values()))
        job["task_time"] = {t: same for t in job["task_time"]}
        job["sync_time"] = _sync(rng, job["task_time"], space)
    else:
        t = rng.choice(types)
        job["task_time"][t] = _time(rng, space)
        if isinstance(job["sync_time"], dict) or space.model == "paper":
            job["sync_time"] = _sync(rng, job["task_time"], space)
    return d


def _smith_shaped(data: dict) -> bool:
    """1||sum w_j C_j, and free of ties that would let a tie-break decide Algorithm 1's
    order: jobs of equal processing time have equal weights (their order changes
    nothing), and the least w/p belongs to one kind of job only (the relaxation's
    optimum is then unique)."""
    jobs = data["jobs"]
    if (
        len(data["gpus"]) != 1
        or len(jobs) < 2
        or not all(
            j.get("rounds", 1) == 1
            and j.get("tasks_per_round", 1) == 1
            and not j.get("sync_time", 0)
            and not j.get("release", 0)
            and not j.get("switch_overhead", 0)
            and len(j["task_time"]) == 1
            for j in jobs
        )
    ):
        return False
    kinds = {(next(iter(j["task_time"].values())), j.get("weight", 1)) for j in jobs}
    if len({p for p, _ in kinds}) < len(kinds):
        return False
    least = min(Fraction(w, p) for p, w in kinds)
    return sum(Fraction(w, p) == least for p, w in kinds) == 1


def _valid(data: dict, space: Space) -> Instance | None:
    if space.family == "smith":
        try:
            inst = instance_from_dict(data)
        except HareOptError:
            return None
        return inst if _tasks(data) <= space.max_tasks and _smith_shaped(data) else None
    if _tasks(data) > space.max_tasks or not space.min_gpus <= len(data["gpus"]) <= space.max_gpus:
        return None
    try:
        inst = instance_from_dict(data)
    except HareOptError:
        return None
    if space.model == "paper" and ((inst.sync >= inst.proc) & inst.eligible).any():
        return None  # mutations may break the paper's T^s < T^c
    if space.eligibility == "full" and not inst.eligible.all():
        return None  # a GPU of a type some job lacks (added by a mutation)
    if len(inst.gpu_types) > space.types or set(inst.gpu_types) - set(TYPES[: space.types]):
        return None
    return inst if not space.finite_alpha or math.isfinite(float(inst.alpha.max())) else None


# --- evaluation and search ---------------------------------------------------------
def evaluate(
    inst: Instance,
    solver: str,
    against: str,
    *,
    exact: str = "cpsat",
    exact_time_limit: float = 10.0,
    solver_time_limit: float | None = 30.0,
    solver_options: dict[str, Any] | None = None,
) -> tuple[float, float, Result] | None:
    """(ratio, reference, heuristic result), or None when no proved reference exists."""
    res = solve(inst, solver, time_limit=solver_time_limit, **(solver_options or {}))
    if against == "opt":
        ref_res = solve(inst, exact, time_limit=exact_time_limit, hint=res, threads=1)
        if ref_res.status != "optimal":
            return None
        ref = float(ref_res.objective)
        if res.objective < ref - 1e-6:
            raise SolverError(
                f"{solver} scores {res.objective} below the optimum {ref} that "
                f"{exact} proved on {inst.name!r}: a bug in one of them"
            )
    else:
        ref = float(lower_bound(inst))
        if not ref > 0:
            return None
    return float(res.objective) / ref, ref, res


#: Wall-clock seconds a search without ``iterations`` runs.
DEFAULT_BUDGET_S = 60.0


def falsify(
    solver: str,
    *,
    against: str = "opt",
    budget: float | None = None,
    iterations: int | None = None,
    seed: int = 0,
    space: Space | None = None,
    exact: str = "cpsat",
    exact_time_limit: float = 10.0,
    restart: float = 0.1,
    progress: bool = True,
    solver_time_limit: float | None = 30.0,
    solver_options: dict[str, Any] | None = None,
    score: str = "relative",
) -> Finding:
    """Maximise the solver's ratio to OPT (or a lower bound) for ``budget`` s or ``iterations``.

    The score climbed is ratio / claimed guarantee when the solver claims one
    (so that the search is not rewarded for inflating alpha), else the ratio;
    ``score="ratio"`` climbs the ratio itself (the worst ratio, whatever the claim).

    ``budget`` (seconds of wall clock) defaults to ``DEFAULT_BUDGET_S`` without
    ``iterations`` and to none with them: a search bounded by its iterations alone is
    determined by ``seed`` (the exact solver runs single-threaded), on any machine.
    ``Finding.worst`` keeps the instance of the highest ratio seen, whatever the score.
    """
    if against not in ("opt", "bound"):
        raise OptionError(f"against must be 'opt' or 'bound', got {against!r}")
    if budget is None:
        budget = DEFAULT_BUDGET_S if iterations is None else math.inf
    if budget <= 0:
        raise OptionError("budget must be positive")
    if score not in ("relative", "ratio"):
        raise OptionError(f"score must be 'relative' or 'ratio', got {score!r}")
    space = space or Space()
    rng = random.Random(seed)
    best = Finding(solver, against, score_kind=score)
    current: tuple[float, dict] | None = None
    t0 = time.monotonic()
    bar = _bar(progress, iterations, budget)
    it = 0
    stop = threading.Event()  # Ctrl-C / SIGTERM: the search ends, the best so far is kept
    with interrupt.library_edge(stop):
        while (
            time.monotonic() - t0 < budget
            and (iterations is None or it < iterations)
            and not stop.is_set()
        ):
            it += 1
            if current is None or rng.random() < restart:
                data = random_candidate(rng, space, f"falsify-{solver}-s{seed}-i{it}")
            else:
                data = current[1]
                for _ in range(rng.randint(1, 3)):
                    data = mutate(rng, data, space)
                data["name"] = f"falsify-{solver}-s{seed}-i{it}"
            inst = _valid(data, space)
            try:
                out = (
                    None
                    if inst is None
                    else evaluate(
                        inst,
                        solver,
                        against,
                        exact=exact,
                        exact_time_limit=exact_time_limit,
                        solver_time_limit=solver_time_limit,
                        solver_options=solver_options,
                    )
                )
            except SolverError as exc:  # a bug in some solver: keep the instance, go on
                best.errors.append((data, str(exc)))
                out = None
            if stop.is_set():
                break  # a search cut short by the signal is no measurement
            if out is None:
                best.skipped += 1
            else:
                best.evaluated += 1
                assert inst is not None  # evaluated
                ratio, ref, res = out
                if ratio > best.max_ratio:
                    best.max_ratio, best.worst = ratio, (inst, res, ref)
                g = claimed_guarantee(inst, solver)
                value = ratio / g if g and math.isfinite(g) and score == "relative" else ratio
                if current is None or value >= current[0]:
                    current = (value, data)
                if value > best.score:
                    best.instance, best.result, best.reference = inst, res, ref
                    best.ratio, best.score, best.guarantee = ratio, value, g
                    best.alpha = float(inst.alpha.max())
            best.history.append(best.score)
            _tick(bar, iterations, t0, best)
    if bar is not None:
        bar.close()
    return best


def _smaller(data: dict) -> list[dict]:
    """Candidates one step simpler than ``data`` (fewer jobs, GPUs, tasks; smaller numbers)."""
    out = []
    for pos in range(len(data["jobs"])):
        if len(data["jobs"]) > 1:
            d = copy.deepcopy(data)
            del d["jobs"][pos]
            out.append(d)
        for key, floor in (("rounds", 1), ("tasks_per_round", 1), ("weight", 1), ("release", 0)):
            v = data["jobs"][pos][key]
            for new in sorted({floor, v // 2, v - 1}):
                if floor <= new < v:
                    d = copy.deepcopy(data)
                    d["jobs"][pos][key] = new
                    out.append(d)
        for field_ in ("task_time", "sync_time"):
            value = data["jobs"][pos][field_]
            for t in sorted(value) if isinstance(value, dict) else [None]:
                v = value[t] if t else value
                for new in sorted({1 if field_ == "task_time" else 0, v // 2, v - 1}):
                    if 0 <= new < v:
                        d = copy.deepcopy(data)
                        if t:
                            d["jobs"][pos][field_][t] = new
                        else:
                            d["jobs"][pos][field_] = new
                        out.append(d)
    for pos in range(len(data["gpus"])):
        if len(data["gpus"]) > 1:
            d = copy.deepcopy(data)
            del d["gpus"][pos]
            out.append(d)
    return out


def shrink(
    finding: Finding, space: Space, *, exact: str = "cpsat", exact_time_limit: float = 10.0
) -> Finding:
    """Greedily simplify a violating instance while it still violates (like hypothesis)."""
    if not finding.violates:
        return finding
    assert finding.instance is not None  # a violation was found on it
    data = instance_to_dict(finding.instance)
    improved = True
    while improved:
        improved = False
        for cand in _smaller(data):
            inst = _valid(cand, space)
            try:
                out = (
                    None
                    if inst is None
                    else evaluate(
                        inst, finding.solver, "opt", exact=exact, exact_time_limit=exact_time_limit
                    )
                )
            except SolverError as exc:
                finding.errors.append((cand, str(exc)))
                continue
            g = None if inst is None else claimed_guarantee(inst, finding.solver)
            if inst is not None and out is not None and g is not None and out[0] > g + 1e-9:
                data, improved = cand, True
                finding.instance, (finding.ratio, finding.reference, finding.result) = inst, out
                finding.guarantee, finding.alpha = g, float(inst.alpha.max())
                finding.score = finding.ratio / g
                break
    return finding


def _bar(progress: bool, iterations: int | None, budget: float):
    import sys

    if not progress or not sys.stderr.isatty():  # no \r-redrawn bar in a log file
        return None

    if iterations is not None:
        return tqdm(total=iterations, unit="inst", desc="falsify")
    return tqdm(
        total=round(budget, 1),
        unit="s",
        desc="falsify",
        mininterval=0.5,
        bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s{postfix}",
    )


def _tick(bar, iterations: int | None, t0: float, best: Finding) -> None:
    if bar is None:
        return
    bar.set_postfix_str(describe(best), refresh=False)
    # update() honours mininterval, so the bar redraws at most twice a second
    bar.update(1 if iterations is not None else min(bar.total, time.monotonic() - t0) - bar.n)


def describe(f: Finding) -> str:
    """What the search found, named by what it measured: under the relative score the
    best instance is the one nearest to (or beyond) its claim, not the worst ratio."""
    if f.score_kind == "relative" and f.guarantee is not None and math.isfinite(f.guarantee):
        return (
            f"highest ratio / claim {f.score:.4f} (ratio {f.ratio:.4f}, claim "
            f"{f.guarantee:.4g}); highest ratio seen {f.max_ratio:.4f}"
        )
    return f"worst ratio {f.ratio:.4f}"
