"""A Lagrangian lower bound of the time-indexed relaxation: does indivisibility in time close
the certified gap? (A research measurement; ``hare-opt bound`` does not use it.)

    python experiments/lagrangian_bound.py --seeds 3108 --grid 10 --iters 400
    python experiments/lagrangian_bound.py --check 25        # <= OPT on small instances

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


def lagrangian_bound(inst: Instance, grid: int, iters: int, hare: Result) -> float:
    """The best Lagrangian value in ``iters`` subgradient steps (a lower bound on OPT);
    ``hare``: its schedule (its objective is the step target, its makespan sets the
    horizon)."""
    n, nt = inst.num_jobs, len(inst.gpu_types)
    ok = inst.eligible_by_type
    p = (np.where(ok, inst.proc_by_type, 0) // grid).astype(np.int64)
    s = (np.where(ok, inst.sync_by_type, 0) // grid).astype(np.int64)
    start = ((inst.release + inst.overhead) // grid).astype(np.int64)
    m = inst.type_count.astype(float)
    horizon = max(1, math.ceil(1.5 * float(hare.schedule.end.max()) / grid))
    dmin = np.array([min(p[j, k] + s[j, k] for k in range(nt) if ok[j, k]) for j in range(n)])
    lam = np.zeros((nt, horizon))
    best, theta, target = -math.inf, 1.0, hare.objective / grid
    for it in range(iters):
        total = -float(lam.sum(axis=1) @ m)
        use = np.zeros((nt, horizon))
        for j in range(n):
            price, nxt = _windows(lam, p[j])
            rounds = int(inst.rounds[j])
            rest = dmin[j] * (rounds - np.arange(rounds + 1)).astype(np.float64)
            plan = np.zeros((rounds, 2), dtype=np.int64)
            k_j = float(inst.tasks_per_round[j])
            total += _cheapest_plan(
                k_j, rounds, float(inst.weight[j]), start[j], p[j], s[j], ok[j], price, nxt,
                rest, plan,
            )  # fmt: skip
            for k, u in plan:
                if k < 0:
                    break
                use[k, u : u + p[j, k]] += k_j
        best = max(best, total)
        grad = use - m[:, None]
        norm = float((grad**2).sum())
        if norm == 0:
            break
        lam = np.maximum(0.0, lam + theta * (target - total) / norm * grad)
        if it % 50 == 49:
            theta *= 0.7
    return best * grid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", nargs="+", type=int, default=[3108])
    ap.add_argument("--grid", type=int, default=10)
    ap.add_argument("--iters", type=int, default=400)
    ap.add_argument("--check", type=int, default=0, help="small random instances vs OPT")
    a = ap.parse_args()
    if a.check:
        from hare_opt.generators import random_instance

        worst = 0.0
        for seed in range(a.check):
            inst = random_instance(seed, n_jobs=4, n_gpus=3, rounds=(1, 3), tasks_per_round=(1, 2))
            opt = solve(inst, "cpsat", time_limit=20)
            if opt.status.value != "optimal":
                continue
            lb = lagrangian_bound(inst, 1, 300, solve(inst, "hare"))
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
        lb = lagrangian_bound(inst, a.grid, a.iters, run)
        lp_gap = f"{hare / lp - 1:.2%}" if lp else "-"
        print(
            f"seed {seed}: hare {hare:.0f}; strong LP {lp or 0:.0f} (gap {lp_gap}); "
            f"Lagrangian {lb:.0f} (gap {hare / lb - 1:.2%}, grid {a.grid}, {a.iters} steps, "
            f"{time.process_time() - t:.0f} CPU s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
