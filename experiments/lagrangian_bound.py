"""A Lagrangian lower bound of the time-indexed relaxation: does indivisibility in time close
the certified gap? (A research measurement; ``hare-opt bound`` does not use it.)

    python experiments/lagrangian_bound.py --seeds 3108 --grid 10 --iters 400
    python experiments/lagrangian_bound.py --check 25        # <= OPT on small instances
    python experiments/lagrangian_bound.py --method colgen --iters 130 --seeds 3108
    python experiments/lagrangian_bound.py --method colgen --iters 140 --seeds 3108 --capped

Relaxation. Round every task time, sync, release and setup *down* to a multiple of the
grid g: that only lowers OPT, and with all data on the grid some optimal schedule has
every time on it. Keep each type's capacity per instant (at most m_k tasks of type k
running at any grid time t) and move it into the objective with multipliers
lambda_kt >= 0. What is left splits by job: a job's rounds run one after another, round
r + 1's tasks start at or after round r's barrier, each task occupies one window of its
type, and the job pays w_j C_j plus the multipliers over its tasks' windows, less
sum lambda_kt m_k once. Any schedule's jobs are plans of this kind (setups and the one
task per GPU rule only dropped), so for every lambda >= 0 the sum of the jobs' cheapest
plans is <= OPT. Given a round's barrier e every task takes its cheapest window ending
(with its sync) by e, and the next round's cheapest cost does not fall as its start
moves later, so each round has its K tasks in one window; a dynamic programme over the
rounds' barriers finds a job's cheapest plan (only windows that are new prefix minima
of the price from the barrier on need looking at). Beyond a horizon T (1.5 x hare's
makespan) multipliers are 0 and a round ending there is charged its least completion,
a lower estimate. The multipliers follow subgradient steps (Polyak, hare's objective as
the target); the best value seen is the bound, times g.

``--method colgen`` reaches the same relaxation's optimum by column generation instead:
an LP master (HiGHS) over the plans found so far, a convex combination per job under the
capacities, whose duals are the next multipliers; it prints the best Lagrangian value
(a bound) and the master's value, which is never below the relaxation's optimum: no
multipliers, found by any method, prove more than it.

``--capped`` makes each round's plan respect the type's GPU count: a round puts q_k of its
K tasks on type k and lasts at least ceil(q_k / m_k) p_k + s_k from the barrier before
(one GPU of the type runs that many of them back to back), each task priced at the
cheapest window of its type inside the round; the uncapped plan lets all K tasks run at
once on a type with fewer than K GPUs. Still a relaxation: a real round, read as its
split q and its two barriers, is such a plan and costs at least as much. The programme
looks at the barriers where the round's cost can fall (a cheaper window becomes
available, or a type may run one more wave) and fills the K tasks cheapest type first,
up to m_k per wave (``_capped_plan``).

Why: the bucketed LP behind ``bound --strong`` lets a job's work spread fluidly inside a
bucket; here a task holds its GPU type for its whole length. Prints, per seed, the
strong LP's bound, this one, hare's objective and both gaps, and the CPU seconds.
"""

from __future__ import annotations

import argparse
import math
import time

import numba as nb
import numpy as np

from hare_opt.model import Instance, Result
from hare_opt.solvers import solve

BIG = 1e30


@nb.njit(cache=True)
def _windows(lam, p):
    """W[k, u]: the multipliers over a task of length p[k] started at u (BIG past the
    horizon); nxt[k, u]: the next u' > u with a smaller W (-1: none)."""
    nt, horizon = lam.shape
    price = np.full((nt, horizon + 1), BIG)
    nxt = np.full((nt, horizon + 1), -1, dtype=np.int64)
    stack = np.empty(horizon + 1, dtype=np.int64)
    for k in range(nt):
        c = np.zeros(horizon + 1)
        for t in range(horizon):
            c[t + 1] = c[t] + lam[k, t]
        for u in range(horizon + 1 - p[k]):
            price[k, u] = c[u + p[k]] - c[u]
        n = 0
        for u in range(horizon, -1, -1):
            while n > 0 and price[k, stack[n - 1]] >= price[k, u]:
                n -= 1
            nxt[k, u] = stack[n - 1] if n > 0 else -1
            stack[n] = u
            n += 1
    return price, nxt


@nb.njit(cache=True)
def _cheapest_plan(tasks, rounds, w, start, p, s, ok, price, nxt, rest, plan):
    """The job's cheapest plan from ``start``: its cost, and per round (type, window start)
    in ``plan`` (type -1: the round ends past the horizon)."""
    nt, horizon = price.shape[0], price.shape[1] - 1
    value = np.empty((rounds + 1, horizon + 1))
    arg = np.full((rounds, horizon + 1, 2), -1, dtype=np.int64)
    for b in range(horizon + 1):
        value[rounds, b] = w * b
    for r in range(rounds - 1, -1, -1):
        tail = w * (horizon + 1 + rest[r + 1])  # ends past the horizon: a lower estimate
        for b in range(horizon + 1):
            best, bk, bu = tail, -1, -1
            for k in range(nt):
                if not ok[k]:
                    continue
                u = b
                while u >= 0 and u + p[k] + s[k] <= horizon:
                    v = tasks * price[k, u] + value[r + 1, u + p[k] + s[k]]
                    if v < best:
                        best, bk, bu = v, k, u
                    u = nxt[k, u]
            value[r, b] = best
            arg[r, b, 0], arg[r, b, 1] = bk, bu
    plan[:, 0] = -1
    if start > horizon:
        return w * (start + rest[0])
    b = start
    for r in range(rounds):
        k, u = arg[r, b, 0], arg[r, b, 1]
        if k < 0:
            break
        plan[r, 0], plan[r, 1] = k, u
        b = u + p[k] + s[k]
    return value[0, start]


@nb.njit(cache=True)
def _capped_plan(tasks, rounds, w, start, p, s, ok, m, price, nxt, rest, plan):
    """``_cheapest_plan`` with rounds that respect the GPU counts ``m`` (``--capped``):
    per round in ``plan`` its barrier, then per type the window start (-1: unused) and
    the tasks there (barrier -1: the round ends past the horizon)."""
    nt, horizon = price.shape[0], price.shape[1] - 1
    value = np.empty((rounds + 1, horizon + 1))
    arg_e = np.full((rounds, horizon + 1), -1, dtype=np.int64)
    arg = np.zeros((rounds, horizon + 1, 2 * nt), dtype=np.int64)
    for b in range(horizon + 1):
        value[rounds, b] = w * b
    waves = np.zeros(nt, dtype=np.int64)
    for k in range(nt):
        if ok[k]:
            waves[k] = (tasks + m[k] - 1) // m[k]
    ptr = np.empty(nt, dtype=np.int64)  # the next window of the chain not yet available
    cur = np.empty(nt, dtype=np.int64)  # the cheapest window available (-1: none yet)
    nw = np.empty(nt, dtype=np.int64)  # waves the round's length allows so far
    order = np.empty(nt, dtype=np.int64)
    q = np.zeros(nt, dtype=np.int64)
    for r in range(rounds - 1, -1, -1):
        tail = w * (horizon + 1 + rest[r + 1])
        for b in range(horizon + 1):
            best, be = tail, -1
            for k in range(nt):
                ptr[k] = b if ok[k] and b + p[k] + s[k] <= horizon else -1
                cur[k], nw[k] = -1, 0
            while True:
                e = horizon + 1  # the next barrier where the round's cost can fall
                for k in range(nt):
                    if ptr[k] >= 0:
                        e = min(e, ptr[k] + p[k] + s[k])
                    if cur[k] >= 0 and nw[k] < waves[k]:
                        e = min(e, b + (nw[k] + 1) * p[k] + s[k])
                if e > horizon or value[r + 1, e] >= best:
                    break  # later barriers cost the rest of the job at least as much
                n = 0
                for k in range(nt):
                    while ptr[k] >= 0 and ptr[k] + p[k] + s[k] <= e:
                        cur[k] = ptr[k]
                        nx = nxt[k, ptr[k]]
                        ptr[k] = nx if nx >= 0 and nx + p[k] + s[k] <= horizon else -1
                    if cur[k] >= 0:
                        # a task rounded to length 0 on the grid takes no time: no wave limit
                        nw[k] = min(waves[k], (e - b - s[k]) // p[k]) if p[k] > 0 else waves[k]
                        order[n] = k
                        n += 1
                for i in range(1, n):  # the available types, cheapest window first
                    x, y = order[i], i - 1
                    while y >= 0 and price[order[y], cur[order[y]]] > price[x, cur[x]]:
                        order[y + 1] = order[y]
                        y -= 1
                    order[y + 1] = x
                left, cost = tasks, 0.0
                q[:] = 0
                for i in range(n):
                    k = order[i]
                    q[k] = min(left, m[k] * nw[k])
                    cost += q[k] * price[k, cur[k]]
                    left -= q[k]
                if left == 0 and cost + value[r + 1, e] < best:
                    best, be = cost + value[r + 1, e], e
                    for k in range(nt):
                        arg[r, b, k] = cur[k] if q[k] > 0 else -1
                        arg[r, b, nt + k] = q[k]
            value[r, b], arg_e[r, b] = best, be
    plan[:, 0] = -1
    if start > horizon:
        return w * (start + rest[0])
    b = start
    for r in range(rounds):
        if arg_e[r, b] < 0:
            break
        plan[r, 0] = arg_e[r, b]
        plan[r, 1:] = arg[r, b]
        b = arg_e[r, b]
    return value[0, start]


class _Grid:
    """The instance on the grid: task times, syncs and starts rounded down, the horizon
    (1.5 x hare's makespan), each job's shortest round (the tail's lower estimate)."""

    def __init__(self, inst: Instance, grid: int, hare: Result, capped: bool = False):
        self.inst, self.grid, self.capped = inst, grid, capped
        ok = inst.eligible_by_type
        self.p = (np.where(ok, inst.proc_by_type, 0) // grid).astype(np.int64)
        self.s = (np.where(ok, inst.sync_by_type, 0) // grid).astype(np.int64)
        self.start = ((inst.release + inst.overhead) // grid).astype(np.int64)
        self.m = inst.type_count.astype(float)
        self.counts = inst.type_count.astype(np.int64)
        self.horizon = max(1, math.ceil(1.5 * float(hare.schedule.end.max()) / grid))
        nt = len(inst.gpu_types)
        self.dmin = np.array(
            [
                min(self.p[j, k] + self.s[j, k] for k in range(nt) if ok[j, k])
                for j in range(inst.num_jobs)
            ]
        )

    def cheapest(self, lam: np.ndarray) -> tuple[float, list[tuple[float, np.ndarray, np.ndarray]]]:
        """The Lagrangian value at ``lam`` (a lower bound, in grid units) and per job its
        cheapest plan: (w_j C_j, rows k * horizon + t of its tasks' windows, tasks there)."""
        inst, total, out = self.inst, -float(lam.sum(axis=1) @ self.m), []
        for j in range(inst.num_jobs):
            value, held = self._plan(j, *_windows(lam, self.p[j]))
            total += value
            # the rounds before the first past the horizon hold windows: (type, start, tasks)
            rows = np.concatenate(
                [np.zeros(0, np.int64)]
                + [k * self.horizon + np.arange(u, u + self.p[j, k]) for k, u, _ in held]
            )
            tasks = np.concatenate([np.zeros(0)] + [np.full(self.p[j, k], c) for k, _, c in held])
            idx, inv = np.unique(rows, return_inverse=True)
            n = np.bincount(inv, weights=tasks, minlength=len(idx))
            # the plan's own cost, as the programme priced it (the tail's lower estimate
            # included): its value less the multipliers over its windows
            out.append((value - float(lam.reshape(-1)[idx] @ n), idx, n))
        return total, out

    def _plan(self, j: int, price, nxt) -> tuple[float, list[tuple[int, int, float]]]:
        """Job j's cheapest plan at window prices ``price``: its value and its windows
        (type, start, tasks there)."""
        inst, nt = self.inst, len(self.inst.gpu_types)
        rounds, w, k_j = int(inst.rounds[j]), float(inst.weight[j]), inst.tasks_per_round[j]
        rest = self.dmin[j] * (rounds - np.arange(rounds + 1)).astype(np.float64)
        args = (self.start[j], self.p[j], self.s[j], inst.eligible_by_type[j])
        if not self.capped:
            plan = np.zeros((rounds, 2), dtype=np.int64)
            value = _cheapest_plan(float(k_j), rounds, w, *args, price, nxt, rest, plan)
            return value, [(k, u, float(k_j)) for k, u in plan.tolist() if k >= 0]
        plan = np.zeros((rounds, 1 + 2 * nt), dtype=np.int64)
        value = _capped_plan(int(k_j), rounds, w, *args, self.counts, price, nxt, rest, plan)
        held = [
            (k, row[1 + k], float(row[1 + nt + k]))
            for row in plan.tolist()
            if row[0] >= 0
            for k in range(nt)
            if row[1 + nt + k] > 0
        ]
        return value, held


def lagrangian_bound(
    inst: Instance, grid: int, iters: int, hare: Result, capped: bool = False
) -> float:
    """The best Lagrangian value in ``iters`` subgradient steps (a lower bound on OPT);
    ``hare``: its schedule (its objective is the step target, its makespan sets the
    horizon)."""
    g = _Grid(inst, grid, hare, capped)
    nt = len(inst.gpu_types)
    lam = np.zeros((nt, g.horizon))
    best, theta, target = -math.inf, 1.0, hare.objective / grid
    for it in range(iters):
        total, plans = g.cheapest(lam)
        use = np.zeros(nt * g.horizon)
        for _, idx, n in plans:
            use[idx] += n
        best = max(best, total)
        grad = use.reshape(nt, g.horizon) - g.m[:, None]
        norm = float((grad**2).sum())
        if norm == 0:
            break
        lam = np.maximum(0.0, lam + theta * (target - total) / norm * grad)
        if it % 50 == 49:
            theta *= 0.7
    return best * grid


def colgen_bound(
    inst: Instance, grid: int, iters: int, hare: Result, capped: bool = False
) -> tuple[float, float]:
    """Column generation on the same relaxation: (the best Lagrangian value at the master's
    duals, a lower bound on OPT; the restricted master's value). The master picks a convex
    combination of plans per job under each type's capacity per instant; its value never
    falls below the relaxation's optimum (the best any multipliers give), so it is a
    ceiling on what this relaxation can prove, whatever the method."""
    import highspy

    g, n, nt = _Grid(inst, grid, hare, capped), inst.num_jobs, len(inst.gpu_types)
    ncap, inf = nt * g.horizon, highspy.kHighsInf
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    no = np.zeros(0, np.int32)
    h.addRows(ncap, np.full(ncap, -inf), np.repeat(g.m, g.horizon), 0, no, no, np.zeros(0))
    h.addRows(n, np.ones(n), np.ones(n), 0, no, no, np.zeros(0))  # one plan per job

    def add(j: int, cost: float, idx: np.ndarray, val: np.ndarray) -> None:
        rows = np.r_[idx, ncap + j].astype(np.int32)
        h.addCol(float(cost), 0.0, inf, len(rows), rows, np.r_[val, 1.0])

    for j, (cost, idx, val) in enumerate(g.cheapest(np.zeros((nt, g.horizon)))[1]):
        add(j, cost, idx, val)
    # every job past the horizon, so that the master is always feasible: the programme's
    # plan when every window costs more than any plan's tail estimate
    dear = float(inst.weight.max()) * (g.horizon + 2 + g.start.max() + g.dmin @ inst.rounds)
    for j, (cost, idx, _) in enumerate(g.cheapest(np.full((nt, g.horizon), dear))[1]):
        assert len(idx) == 0, "a window was cheaper than the horizon's tail"
        add(j, cost, no, np.zeros(0))
    best = master = -math.inf
    for _ in range(iters):
        h.run()
        master = h.getInfo().objective_function_value
        dual = np.asarray(h.getSolution().row_dual)
        lam = np.maximum(0.0, -dual[:ncap]).reshape(nt, g.horizon)
        total, plans = g.cheapest(lam)
        best = max(best, total)
        new = [
            j
            for j, (cost, idx, val) in enumerate(plans)
            if cost + lam.reshape(-1)[idx] @ val < dual[ncap + j] - 1e-6 * max(1.0, abs(cost))
        ]
        if not new:  # no plan prices out: the master is the relaxation's optimum
            best = max(best, master)
            break
        for j in new:
            add(j, *plans[j])
    return best * grid, master * grid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", nargs="*", type=int, default=[3108])
    ap.add_argument("--grid", type=int, default=10)
    ap.add_argument("--iters", type=int, default=400, help="subgradient steps / pricing rounds")
    ap.add_argument("--method", choices=("subgradient", "colgen"), default="subgradient")
    ap.add_argument("--check", type=int, default=0, help="small random instances vs OPT")
    ap.add_argument("--capped", action="store_true", help="rounds respect the GPU counts")
    a = ap.parse_args()

    def bound(inst: Instance, grid: int, iters: int, hare: Result) -> tuple[float, float | None]:
        if a.method == "colgen":
            return colgen_bound(inst, grid, iters, hare, a.capped)
        return lagrangian_bound(inst, grid, iters, hare, a.capped), None

    if a.check:
        from hare_opt.generators import random_instance

        worst = 0.0
        for seed in range(a.check):
            # up to 3 tasks a round with --capped: rounds wider than a type's GPU count
            width = (1, 3) if a.capped else (1, 2)
            inst = random_instance(seed, n_jobs=4, n_gpus=3, rounds=(1, 3), tasks_per_round=width)
            opt = solve(inst, "cpsat", time_limit=20)
            if opt.status.value != "optimal":
                continue
            lb = bound(inst, 1, 300, solve(inst, "hare"))[0]
            worst = max(worst, lb / opt.objective)
            print(f"random {seed}: OPT {opt.objective:.0f}, bound {lb:.1f}", flush=True)
            assert lb <= opt.objective + 1e-6, "not a lower bound"
        print(f"largest bound / OPT: {worst:.4f}")
    from hare_opt.cli.commands.bound import strong
    from hare_opt.generators import TESTBED, paper_instance

    for seed in a.seeds:
        inst = paper_instance(seed, 40, TESTBED, switching="hare", regime="compressed")
        run = solve(inst, "hare")
        hare = run.objective
        lp = strong(inst)  # what ``bound --strong`` prints
        t = time.process_time()
        lb, ceiling = bound(inst, a.grid, a.iters, run)
        lp_gap = f"{hare / lp - 1:.2%}" if lp else "-"
        top = f"; master {ceiling:.0f} (gap {hare / ceiling - 1:.2%})" if ceiling else ""
        print(
            f"seed {seed}: hare {hare:.0f}; strong LP {lp or 0:.0f} (gap {lp_gap}); "
            f"Lagrangian {lb:.0f} (gap {hare / lb - 1:.2%}, grid {a.grid}, {a.iters} "
            f"{a.method} rounds{top}, {time.process_time() - t:.0f} CPU s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
