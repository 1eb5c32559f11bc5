"""The exact template (solvers/exact.py): one check per schedule that leaves, typed
statistics that survive a CSV file and a process boundary, honest bounds and incumbents,
options refused before any work, refusals that name a solver that takes the instance,
and one-off kernel compiles left out of the time limit."""

from __future__ import annotations

import csv
import importlib
import math
import time

import numpy as np
import pytest
from conftest import INSTANCES
from hypothesis import given, settings
from oracles import brute_force
from strategies import instances

from hare_opt.bounds import lower_bound
from hare_opt.checker import check
from hare_opt.io import load_instance
from hare_opt.model import GPU, HareOptError, Instance, Job, OptionError, Stats
from hare_opt.model.limits import CapacityError
from hare_opt.solvers import SOLVERS, SolverSpec, kernels, register, solve, solver_names
from hare_opt.solvers import exact as solvers_exact

EXACT = solver_names("exact")
FIG1 = INSTANCES / "fig1.json"


@pytest.fixture
def checks(monkeypatch):
    """Counts every run of the independent checker in this process."""
    verify_module = importlib.import_module("hare_opt.checker.verify")
    count = {"n": 0}
    real = verify_module.check

    def counting(*args, **kwargs):
        count["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(verify_module, "check", counting)
    return count


@pytest.mark.parametrize("solver", [*EXACT, "lns", "hare", "wspt"])
def test_the_checker_runs_once_per_schedule_that_leaves(solver, checks):
    inst = load_instance(FIG1)
    opts = {"work_limit": 2} if solver == "lns" else {}
    result = solve(inst, solver, time_limit=10, **opts)
    assert checks["n"] == 1, (solver, checks["n"])
    if SOLVERS.spec(solver).kind in ("exact", "improver"):
        assert result.stats.checks == 1


def test_a_checked_hint_is_not_checked_again(checks):
    inst = load_instance(FIG1)
    hint = solve(inst, "fifo")
    checks["n"] = 0
    for solver in ("cpsat", "bnb", "milp", "portfolio"):
        out = solve(inst, solver, hint=hint, time_limit=10, special=False)
        assert out.stats.start_objective <= hint.objective
        assert checks["n"] == (out.schedule is not hint.schedule)  # the hint: never again
        checks["n"] = 0


def test_portfolio_children_keep_their_report_and_typed_stats(checks):
    inst = load_instance(FIG1)
    result = solve(inst, "portfolio", time_limit=30, quick=False, special=False)
    assert result.status == "optimal"
    assert checks["n"] == 1  # the children's answers are checked once, where they leave
    assert isinstance(result.stats, Stats) and result.stats.checks == 1
    assert result.report is not None and result.report.judged(inst, result.schedule)
    child = result.stats[result.stats.proved_by]  # a child's brief crossed processes
    assert child["status"] == "optimal"


def test_stats_round_trip_through_a_csv_file(tmp_path):
    stats = Stats(start="fifo", start_objective=12, build_s=0.25, checks=1, work=40)
    stats.update(nodes=7, memo_full=False, brief={"status": "optimal"}, note="a, b")
    path = tmp_path / "rows.csv"
    row = stats.to_row("stats.")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["instance", *row])
        w.writeheader()
        w.writerow({"instance": "x", **row})
    with open(path) as f:
        back = Stats.from_row(next(csv.DictReader(f)), "stats.")
    assert back == stats and back.start_objective == 12 and back.build_s == 0.25
    assert back["brief"] == {"status": "optimal"} and back["memo_full"] is False


# --- every number a user sees is true ------------------------------------------------


def _recorder():
    seen: list[tuple[str, float | None, float | None]] = []

    def record(source, incumbent, bound, note):
        seen.append((source, incumbent, bound))

    return seen, record


@settings(max_examples=8)
@given(inst=instances(max_jobs=3, max_gpus=3, max_rounds=2, max_k=2, max_tasks=6, max_time=6))
def test_printed_bounds_and_incumbents_are_proved_or_checked(inst):
    """Every bound a solver prints or reports is <= OPT; every incumbent is >= OPT (the
    objective of a schedule; the relaxation's values never show as incumbents)."""
    opt = brute_force(inst)
    for solver in EXACT:
        seen, record = _recorder()
        res = solve(inst, solver, time_limit=10, progress=record, special=False)
        assert res.lower_bound is not None and res.lower_bound <= opt <= res.objective
        if res.status == "optimal":
            assert res.objective == opt
        for source, incumbent, bound in seen:
            assert incumbent is None or incumbent >= opt, (solver, source, incumbent, opt)
            assert bound is None or bound <= opt + 1e-6, (solver, source, bound, opt)


def test_cpsat_progress_never_shows_its_setup_relaxation_as_incumbent():
    inst = load_instance(INSTANCES / "small" / "small-00.json")
    opt = solve(inst, "bnb", time_limit=60)
    assert opt.status == "optimal"
    seen, record = _recorder()
    res = solve(inst, "cpsat", time_limit=6, progress=record)
    incumbents = [i for _, i, _ in seen if i is not None]
    assert incumbents and min(incumbents) >= opt.objective
    assert res.lower_bound <= opt.objective


def test_every_cpsat_incumbent_is_the_objective_of_a_schedule_the_checker_passes(monkeypatch):
    # Each value CP-SAT reports as an incumbent is scored from the schedule its solution
    # gives; the checker, run on every such schedule, must pass it at that very value.
    import hare_opt.solvers.cpsat.solver as cpsat_solver

    inst = load_instance(INSTANCES / "small" / "small-00.json")
    scored = cpsat_solver.plan_objective
    checked: set[int] = set()

    def scored_and_checked(instance, plan):
        value = scored(instance, plan)
        report = check(instance, plan.schedule(instance))
        assert report.feasible and report.objective == value, report.violations[:3]
        checked.add(value)
        return value

    started = solvers_exact.best_start

    def start_checked(instance, *args, **kwargs):  # the start, reported before the search
        start = started(instance, *args, **kwargs)
        report = check(instance, start.schedule)
        assert report.feasible and report.objective == start.objective
        checked.add(int(start.objective))
        return start

    monkeypatch.setattr(cpsat_solver, "plan_objective", scored_and_checked)
    monkeypatch.setattr(solvers_exact, "best_start", start_checked)
    seen, record = _recorder()
    # the rules' start (not hare's, which CP-SAT rarely beats here): CP-SAT improves on it
    res = solve(inst, "cpsat", time_limit=6, progress=record, threads=1, start_heuristic=None)
    incumbents = {i for _, i, _ in seen if i is not None}
    assert len(incumbents) >= 2 and incumbents <= checked, (incumbents, checked)
    assert res.objective <= min(incumbents)  # the answer is at least the best it showed


def test_a_portfolio_without_a_backend_bound_prints_the_proved_floor():
    # Every member fails: the start is the answer, its bound the cheap proved floor, never
    # its own objective.
    inst = load_instance(INSTANCES / "small" / "small-07.json")
    res = solve(
        inst,
        "portfolio",
        time_limit=9,
        quick=False,
        backends=("milp",),
        backend_options={"milp": {"max_vars": 1}},
    )
    assert "milp_error" in res.stats
    assert res.lower_bound == lower_bound(inst, lp=False) < res.objective
    assert res.status == "feasible"


def test_a_portfolio_no_member_takes_is_refused_before_any_work(tmp_path, capsys):
    # A bound must never stand in for the members' proof (the portfolio once printed its
    # objective as a proved bound on an instance every member refused): such an instance
    # is refused up front, in one line naming every member, and nothing is written.
    from hare_opt.cli.main import main
    from hare_opt.io import dumps_instance

    gpus = tuple(GPU(f"g{i}", "V100" if i % 2 else "K80") for i in range(8))
    inst = Instance(
        gpus,
        tuple(
            Job(f"j{n}", {"V100": 5, "K80": 9}, rounds=250, tasks_per_round=10, sync_time=1)
            for n in range(100)
        ),
        "wide",
    )  # 250,000 tasks: over each member's own size limit
    with pytest.raises(CapacityError, match="no member"):
        solve(inst, "portfolio", time_limit=30)
    path, out = tmp_path / "wide.json", tmp_path / "s.json"
    path.write_text(dumps_instance(inst))
    code = main(
        [
            "solve",
            str(path),
            "--solver",
            "portfolio",
            "--time-limit",
            "30",
            "--json",
            "--out",
            str(out),
        ]
    )
    got = capsys.readouterr()
    assert code == 2 and got.out == "" and not out.exists()
    from hare_opt.solvers.portfolio.options import members

    assert len(got.err.splitlines()) == 1 and f"no member ({', '.join(members())})" in got.err


def _wide(tasks: int, gpus: int) -> Instance:
    rounds = tasks // 10
    return Instance(
        tuple(GPU(f"g{i}", "V100" if i % 2 else "K80") for i in range(gpus)),
        (Job("big", {"V100": 5, "K80": 9}, rounds=rounds, tasks_per_round=10, sync_time=1),),
        "wide",
    )


def test_milp_refuses_a_large_instance_at_once_and_names_who_takes_it():
    inst = _wide(250_000, 8)
    t0 = time.process_time()
    with pytest.raises(CapacityError) as err:
        solve(inst, "milp", special=False)
    assert time.process_time() - t0 < 30  # a regression guard: it used to run for minutes
    text = str(err.value)
    assert "max_vars" in text and "solvers that take it:" in text
    takers = text.split("solvers that take it:")[1]
    assert "milp" not in takers and "hare" in takers
    for name in (n.strip() for n in takers.split(",")):
        spec = SOLVERS.spec(name)
        if spec.fits is not None:  # every solver it recommends takes the instance
            from hare_opt.util.registry import resolve

            resolve(spec.fits)(inst)


# --- options refused before any work, on one line ------------------------------------


@pytest.mark.parametrize(
    "solver, options, says",
    [
        ("milp", {"mip_rel_gap": -1}, "HiGHS refuses the value -1"),
        ("milp", {"mip_rel_gap": "abc"}, "HiGHS refuses the value 'abc'"),
        ("milp", {"backend": "cbc", "gapRel": -1}, "must be a number between 0 and 1 for CBC"),
        ("milp", {"backend": "cbc", "keepFiles": True}, "is set by the solver"),
        ("cpsat", {"start_heuristic": "nope"}, "'start_heuristic': must be a heuristic or rule"),
        ("lns", {"start": "nope"}, "'start': must be a heuristic or rule"),
        ("cpsat", {"linearization_level": "abc"}, "must be of type int (a CP-SAT parameter)"),
        ("cpsat", {"max_deterministic_time": -1}, "must be non-negative"),
        ("portfolio", {"seed": 2**31}, "'seed': must be between 0 and 2147483647"),
        ("lns", {"seed": 2**31}, "'seed': must be between 0 and 2147483647"),
        ("cpsat", {"threads": 100_000}, "'threads': must be between 1 and 1024"),
        ("cpsat", {"seed": 2**31}, "'seed': must be between 0 and 2147483647"),
        ("milp", {"backend": "cbc", "gapRel": "abc"}, "must be a number between 0 and 1 for CBC"),
        (
            "portfolio",
            {"start_heuristic": "nope"},
            "'start_heuristic': must be a heuristic or rule",
        ),
        (
            "cpsat",
            {"params": {"linearization_level": "abc"}},
            "must be of type int (a CP-SAT parameter)",
        ),
        ("cpsat", {"params": {"num_search_workers": "x"}}, "is the shared option 'threads'"),
    ],
)
def test_bad_option_values_are_refused_before_any_work_on_one_line(solver, options, says):
    inst = load_instance(FIG1)
    with pytest.raises(OptionError) as err:
        solve(inst, solver, **options)
    assert says in str(err.value) and "\n" not in str(err.value)


# --- one-off compiles --------------------------------------------------------------


def slow_warm_up() -> float:
    time.sleep(1.0)
    return 1.0


def test_a_kernel_compile_is_announced_and_left_out_of_the_time_limit(monkeypatch):
    monkeypatch.setitem(kernels.KERNELS, "toy", f"{__name__}:slow_warm_up")
    register(SolverSpec("toy-kernels", SOLVERS.spec("wspt").target, "rule", kernels=("toy",)))
    notes: list[tuple] = []
    inst = load_instance(INSTANCES / "small" / "small-00.json")  # beyond INTERPRET_TASKS
    try:
        res = solve(inst, "toy-kernels", time_limit=0.5)
        again = solve(inst, "toy-kernels", time_limit=0.5, progress=lambda *a: notes.append(a))
    finally:
        SOLVERS.remove("toy-kernels")
        kernels.LOADER.loaded.discard("toy")
    assert res.stats.compile_s >= 1.0 and res.runtime_s < 0.5
    assert again.stats.compile_s is None  # once per process


# --- the bounds registry -----------------------------------------------------------

TOY_BOUND = """
from hare_opt.bounds import BoundSpec, register_bound
register_bound(BoundSpec("toy", "hare_opt.bounds.combinatorial:critical_path_bound"
                         if {honest} else lambda inst: 10**9, description="toy"))
"""


@pytest.mark.parametrize("honest", [True, False])
def test_a_registered_toy_bound_is_cross_checked(tmp_path, honest):
    # Like the toy solver and policy (test_registries.py): a bound registered before
    # collection runs through the bound tests with no edit; a wrong one is caught.
    import os
    import subprocess
    import sys

    (tmp_path / "toy_bound.py").write_text(TOY_BOUND.format(honest=honest))
    tests = INSTANCES.parent / "tests"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}:{tests}", "CI": "true"}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "0",  # one process: this runs inside a worker already
            "-p",
            "toy_bound",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "tests/test_bounds.py",
            "-k",
            "brute_force",
        ],
        cwd=INSTANCES.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert (out.returncode == 0) == honest, out.stdout[-2000:]
    if not honest:
        assert "toy" in out.stdout


def test_a_bound_above_a_checked_schedule_is_a_bug_not_a_proof():
    from hare_opt.bounds import BOUNDS, BoundSpec, all_bounds, register_bound

    inst = load_instance(FIG1)
    register_bound(BoundSpec("toy", lambda i: 10**9))
    try:
        assert all_bounds(inst, lp=False)["toy"] == 10**9
        with pytest.raises(HareOptError, match="bound"):
            solve(inst, "cpsat", special=False)
    finally:
        BOUNDS.remove("toy")
    assert "toy" not in all_bounds(inst, lp=False)


def test_the_portfolio_members_order_and_defaults_come_from_the_registry():
    from hare_opt.solvers.portfolio.options import PortfolioOptions
    from hare_opt.solvers.portfolio.solver import members

    opts = PortfolioOptions()
    assert members(opts) == solver_names(portfolio=True)
    assert members(opts, quick=True) == [s.name for s in SOLVERS if s.portfolio_quick]
    assert SOLVERS.spec("cpsat").portfolio_options == {"interleave_search": True}


def test_stats_mapping_view_reads_like_a_dict():
    s = Stats(start="given")
    s["nodes"] = 3
    assert dict(s) == {"start": "given", "nodes": 3} and "stopped" not in s
    assert s.get("stopped") is None and s.setdefault("stopped", "x") == "x"
    assert not math.isnan(float(np.float64(1.0)))
