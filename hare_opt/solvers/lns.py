"""``lns``: an anytime improver for large instances (large-neighbourhood search with CP-SAT).

Why: the exact models do not scale to paper-size instances (hundreds of tasks, task
times in the thousands), and a generic CP model given a minute finds schedules there
that ``hare`` misses. Starting from a schedule (``hare``'s by default), each step frees
the tasks that start in one time window (on all GPUs or a subset), keeps every other
task where it is, and lets CP-SAT re-place the freed ones exactly: GPU choice, order,
setups (a circuit per GPU between the fixed task before the window and the fixed task
after it) and barriers with the fixed rounds before and after. The result is then
*left-shifted* (every GPU keeps its order, every task starts as early as the spec
allows), which pulls later tasks into any time the window freed, checked, and kept
when it is no worse. The window size adapts: it grows while CP-SAT proves its
neighbourhoods and shrinks when it runs out of time.

Every schedule it returns passes the checker; it proves nothing (status ``feasible``,
no bound), so it is a heuristic.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from hare_opt.heuristics.listshift import Plan, left_shift, plan_objective
from hare_opt.model import Instance, OptionError, Result, SolverError, Stats, Status
from hare_opt.model.options import Options, Run, option
from hare_opt.model.phases import declare
from hare_opt.solvers.base import SOLVERS, checked_report
from hare_opt.util.ortools import cp_model, solve_stoppable

#: Budget (s) when the run has no time limit.
DEFAULT_BUDGET_S = 10.0
START = declare("lns.start", 0.2, floor_s=0.1, of_limit=True, doc="lns's start heuristic")


@dataclass(frozen=True)
class LnsOptions(Options):
    start: str = option("hare", doc="solver whose schedule is improved (or the run's hint)")
    window: int = option(40, lo=2, doc="tasks freed per step at first (then adapted)")
    max_window: int = option(160, lo=2, doc="largest window the adaptation may reach")
    step_time: float = option(2.0, lo=0.01, doc="CP-SAT seconds per step")
    step_work: float | None = option(
        None,
        lo=0.001,
        doc="CP-SAT deterministic seconds per "
        "step (one worker) instead of "
        "step_time: with work_limit and no "
        "time limit the run depends on "
        "nothing but its inputs",
    )
    work_limit: int | None = option(
        None, lo=1, doc="stop after this many steps (reproducible with step_work)"
    )

    owner = "solver 'lns'"

    def __post_init__(self) -> None:
        if self.start in SOLVERS and SOLVERS.spec(self.start).kind in ("heuristic", "rule"):
            return
        names = SOLVERS.names(lambda s: s.kind in ("heuristic", "rule"))
        raise OptionError(
            f"must be a heuristic or rule ({', '.join(names)}), got {self.start!r}",
            option="start",
            owner=self.owner,
        )


def _window(
    inst: Instance, plan: Plan, size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(free task rows, GPUs they may use): the ``size`` tasks that start first at or after a
    random task's start, on every GPU, or on a random half of them on large clusters.
    A window as large as the instance frees all of it (one exact step then ends the run)."""
    gpus = np.arange(inst.num_gpus)
    if size >= inst.num_tasks:
        return np.arange(len(plan.job)), gpus
    if inst.num_gpus > 8 and rng.random() < 0.5:
        gpus = np.sort(rng.choice(inst.num_gpus, size=max(2, inst.num_gpus // 2), replace=False))
    rows = np.flatnonzero(np.isin(plan.gpu, gpus))
    rows = rows[np.argsort(plan.start[rows], kind="stable")]
    first = int(rng.integers(0, max(1, len(rows) - size // 2)))
    chosen = rows[first : first + size]
    if len(chosen) == 0:
        return chosen, gpus
    lo, hi = plan.start[chosen].min(), plan.start[chosen].max()
    chosen = rows[(plan.start[rows] >= lo) & (plan.start[rows] <= hi)]  # whole time window
    return chosen, gpus


def _reoptimise(
    inst: Instance,
    plan: Plan,
    free: np.ndarray,
    gpus: np.ndarray,
    limit: float,
    run: Run,
    work: float | None = None,
) -> tuple[Plan | None, bool]:
    """Re-place the ``free`` rows on ``gpus`` with everything else fixed (CP-SAT).

    Returns (the plan with the rows moved, or None if CP-SAT found nothing; whether CP-SAT
    proved the neighbourhood optimal). ``work``: CP-SAT's deterministic seconds on one
    worker (reproducible), ``limit`` then only a safety net.
    """
    m = cp_model.CpModel()
    is_free = np.zeros(len(plan.job), dtype=bool)
    is_free[free] = True
    allowed = np.zeros(inst.num_gpus, dtype=bool)
    allowed[gpus] = True
    end = plan.start + inst.proc[plan.job, plan.gpu]
    ready = end + inst.sync[plan.job, plan.gpu]
    span = (
        int(end.max()) + int(inst.proc.max()) * len(free) + int(inst.overhead.max()) * len(free) + 1
    )
    # per GPU: the fixed task just before the freed ones and the one just after
    before: dict[int, int] = {}
    after: dict[int, int] = {}
    for g in gpus.tolist():
        on = np.flatnonzero(plan.gpu == g)
        on = on[np.argsort(plan.start[on])]
        mine = np.flatnonzero(is_free[on])
        if len(mine) == 0:
            lo = int(np.searchsorted(plan.start[on], plan.start[free].min()))
            if lo > 0:
                before[g] = int(on[lo - 1])
            if lo < len(on):
                after[g] = int(on[lo])
            continue
        if mine[0] > 0:
            before[g] = int(on[mine[0] - 1])
        if mine[-1] + 1 < len(on):
            after[g] = int(on[mine[-1] + 1])
        if np.any(~is_free[on[mine[0] : mine[-1] + 1]]):
            return None, False  # a fixed task between freed ones: cannot happen for windows
    start, lits, ready_expr = {}, {}, {}
    for i in free.tolist():
        j = int(plan.job[i])
        s = m.new_int_var(int(inst.release[j] + inst.overhead[j]), span, f"s{i}")
        start[i] = s
        choice = {}
        for g in np.flatnonzero(inst.eligible[j] & allowed).tolist():
            x = m.new_bool_var(f"x{i}_{g}")
            choice[g] = x
            if g in before:
                m.add(s >= int(end[before[g]])).only_enforce_if(x)
        m.add_exactly_one(choice.values())
        lits[i] = choice
        ready_expr[i] = s + sum(
            int(inst.proc[j, g] + inst.sync[j, g]) * x for g, x in choice.items()
        )
        m.add_hint(s, int(plan.start[i]))
        for g, x in choice.items():
            m.add_hint(x, int(plan.gpu[i] == g))
    setups = bool((inst.overhead[plan.job[free]] > 0).any()) or any(
        inst.overhead[plan.job[k]] > 0 for k in after.values()
    )
    for g in gpus.tolist():
        nodes = [i for i in free.tolist() if g in lits[i]]
        intervals = [
            m.new_optional_fixed_size_interval_var(
                start[i], int(inst.proc[plan.job[i], g]), lits[i][g], f"I{i}_{g}"
            )
            for i in nodes
        ]
        m.add_no_overlap(intervals)
        q = after.get(g)
        if not setups:
            if q is not None:
                for i in nodes:
                    m.add(
                        start[i] + int(inst.proc[plan.job[i], g]) <= int(plan.start[q])
                    ).only_enforce_if(lits[i][g])
            continue
        _circuit(m, inst, plan, g, nodes, start, lits, before.get(g), q, end)
    # barriers: a variable per round holding a freed task; constants elsewhere
    objective = []
    jobs = sorted(set(plan.job[free].tolist()))
    for j in jobs:
        rows = np.flatnonzero(plan.job == j)
        rounds = int(inst.rounds[j])
        freed = set(plan.rnd[rows[is_free[rows]]].tolist())
        const = np.full(rounds, -1, dtype=np.int64)
        first_fixed = np.full(rounds, np.iinfo(np.int64).max, dtype=np.int64)
        for i in rows.tolist():
            if not is_free[i]:
                r = int(plan.rnd[i])
                const[r] = max(const[r], int(ready[i]))
                first_fixed[r] = min(first_fixed[r], int(plan.start[i]))
        bar: dict[int, Any] = {}
        for r in sorted(freed):
            b = m.new_int_var(0, span + int(inst.sync.max()) + int(inst.proc.max()), f"B{j}_{r}")
            m.add(b >= int(const[r]))
            for i in rows[is_free[rows] & (plan.rnd[rows] == r)].tolist():
                m.add(b >= ready_expr[i])
                prev = bar.get(r - 1)
                if prev is not None:
                    m.add(start[i] >= prev)
                elif r > 0:
                    m.add(start[i] >= int(const[r - 1]))
            if r + 1 < rounds and first_fixed[r + 1] < np.iinfo(np.int64).max:
                m.add(b <= int(first_fixed[r + 1]))
            m.add_hint(b, int(max(const[r], ready[rows[plan.rnd[rows] == r]].max())))
            bar[r] = b
        if rounds - 1 in bar:
            objective.append(int(inst.weight[j]) * bar[rounds - 1])
    if not objective:
        return None, True
    m.minimize(sum(objective))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.01, limit)
    solver.parameters.num_workers = run.threads or 2
    if work is not None:
        solver.parameters.max_deterministic_time = work
        solver.parameters.num_workers = 1
    solver.parameters.random_seed = run.seed
    solver.parameters.catch_sigint_signal = False  # hare_opt.util.interrupt handles signals
    code = solve_stoppable(solver, m, run.stop)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, False
    out = plan.copy()
    for i in free.tolist():
        out.start[i] = solver.value(start[i])
        out.gpu[i] = next(g for g, x in lits[i].items() if solver.boolean_value(x))
    return out, code == cp_model.OPTIMAL


def _circuit(
    m: cp_model.CpModel,
    inst: Instance,
    plan: Plan,
    g: int,
    nodes: list[int],
    start: dict,
    lits: dict,
    p: int | None,
    q: int | None,
    end: np.ndarray,
) -> None:
    """Setups on GPU g: a circuit from the fixed task before (node 0) through the freed tasks
    it runs back to the fixed task after (also node 0: 'before' then 'after')."""
    jp = -1 if p is None else int(plan.job[p])
    ep = 0 if p is None else int(end[p])
    jq = None if q is None else int(plan.job[q])
    sq = None if q is None else int(plan.start[q])
    arcs = []
    direct_ok = (
        q is None
        or sq is None
        or jq is None
        or sq >= (ep if jp == jq else max(ep, int(inst.release[jq])) + int(inst.overhead[jq]))
    )
    if direct_ok:
        arcs.append((0, 0, m.new_bool_var(f"d{g}")))
    else:
        m.add_bool_or([lits[i][g] for i in nodes] or [m.new_constant(0)])
    for a_pos, a in enumerate(nodes, start=1):
        ja = int(plan.job[a])
        x = lits[a][g]
        arcs.append((a_pos, a_pos, x.negated()))
        first, last = m.new_bool_var(""), m.new_bool_var("")
        arcs += [(0, a_pos, first), (a_pos, 0, last)]
        if ja == jp:
            m.add(start[a] >= ep).only_enforce_if(first)
        else:
            m.add(
                start[a] >= max(ep, int(inst.release[ja])) + int(inst.overhead[ja])
            ).only_enforce_if(first)
        if q is not None:
            gap = int(inst.proc[ja, g]) + (0 if ja == jq else int(inst.overhead[jq]))
            m.add(start[a] + gap <= sq).only_enforce_if(last)
        for c_pos, c in enumerate(nodes, start=1):
            if a == c:
                continue
            jc = int(plan.job[c])
            if ja == jc and plan.rnd[a] > plan.rnd[c]:
                continue  # a later round cannot run before an earlier one
            lit = m.new_bool_var("")
            arcs.append((a_pos, c_pos, lit))
            gap = int(inst.proc[ja, g]) + (0 if ja == jc else int(inst.overhead[jc]))
            m.add(start[c] >= start[a] + gap).only_enforce_if(lit)
    m.add_circuit(arcs)
    # a complete hint (the current order): CP-SAT rarely completes a partial one of a circuit
    here = sorted((i for i in nodes if plan.gpu[i] == g), key=lambda i: plan.start[i])
    pos = {a: k for k, a in enumerate(nodes, start=1)}
    chain = [0, *(pos[i] for i in here), 0] if here else [0, 0]
    used = set(zip(chain, chain[1:]))
    for tail, head, lit in arcs:
        if tail == head and tail:
            continue  # a task's self-loop is the negation of its assignment, hinted already
        m.add_hint(lit, int((tail, head) in used))


def solve_lns(
    instance: Instance, run: Run | None = None, options: LnsOptions | None = None
) -> Result:
    """Improve the run's hint (else ``start``'s schedule) until the time limit.

    Without a time limit it runs ``DEFAULT_BUDGET_S`` seconds (or ``work_limit`` steps);
    with ``work_limit`` and ``step_work`` only the steps count (reproducible).
    """
    run = run or Run()
    opts = options or LnsOptions()
    # reproducible (steps of deterministic work, no time limit): no wall-clock budget
    steady = opts.work_limit is not None and opts.step_work is not None
    budget = run.time_limit if run.time_limit is not None else None if steady else DEFAULT_BUDGET_S
    deadline = math.inf if budget is None else run.started + budget
    if run.hint is not None:
        base = run.hint
    else:  # not checked here: the schedule that leaves is, once
        # without a time limit the start runs as it would alone, so lns never returns a
        # schedule worse than its start's own (tests/test_start.py)
        spec = SOLVERS.spec(opts.start)
        with run.phase(START) as sub:
            base = SOLVERS.load(opts.start)(instance, sub, spec.parse_options({}))
        if not base.status.has_schedule:
            raise SolverError(f"lns: the start {opts.start!r} gave no schedule")
    best = Plan.of(instance, base.schedule)
    value = plan_objective(instance, best)
    rng = np.random.default_rng(run.seed)
    size = min(opts.window, instance.num_tasks)
    steps = improved = proved = 0
    run.report("lns", incumbent=value, note="improving")
    while (opts.work_limit is None or steps < opts.work_limit) and not run.stop.is_set():
        left = deadline - time.perf_counter()
        if left < 0.05:
            break
        steps += 1
        free, gpus = _window(instance, best, size, rng)
        if len(free) == 0:
            continue
        step = opts.step_time if opts.step_work is None else max(opts.step_time, 60.0)
        cand, done = _reoptimise(instance, best, free, gpus, min(step, left), run, opts.step_work)
        if (
            done
            and cand is not None
            and len(free) == instance.num_tasks
            and len(gpus) == instance.num_gpus
        ):  # CP-SAT solved the whole instance exactly
            best = left_shift(instance, cand)
            value, proved = plan_objective(instance, best), proved + 1
            break  # nothing is left to improve
        if done:
            proved += 1
            size = min(opts.max_window, instance.num_tasks, math.ceil(size * 1.2))
        else:
            size = max(4, int(size * 0.8))
        if cand is None:
            continue
        cand = left_shift(instance, cand)
        new = plan_objective(instance, cand)
        if new <= value:
            improved += new < value
            best, value = cand, new
            run.report("lns", incumbent=value, note=f"step {steps}")
    schedule = best.schedule(instance)
    stats = Stats(
        start="given" if base is run.hint else base.solver,
        start_objective=int(base.objective),
        work=steps,
    )
    stats.update(improvements=improved, proved_neighbourhoods=proved, final_window=size)
    if run.stop.is_set():
        stats.stopped = "interrupted"
    report = checked_report(
        instance,
        schedule,
        base.report if improved == 0 and schedule is base.schedule else None,
        stats,
    )
    if not report.feasible:  # a bug in the neighbourhood model: never a result
        raise SolverError(f"lns: infeasible schedule: {report.violations[:3]}")
    return Result.checked("lns", Status.FEASIBLE, report, runtime_s=run.elapsed(), stats=stats)
