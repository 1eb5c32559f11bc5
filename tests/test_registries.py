"""Adding a solver or a policy is one module plus one registration: the tests pick it up.

A plugin registers a toy exact solver and a toy policy before collection (``pytest -p``);
the cross-checking tests then run on them with no edit, and a deliberately wrong toy is
caught by them. The registries themselves are checked for names, options and claims.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hare_opt.model import Instance, Status
from hare_opt.sim import POLICIES
from hare_opt.solvers import SOLVERS, available_solvers, claimed_factor, solver_names
from hare_opt.util.registry import resolve

TESTS = Path(__file__).resolve().parent

PLUGIN = textwrap.dedent('''
    """Toy registrations, loaded with ``pytest -p toy_plugin`` before collection."""
    from dataclasses import dataclass

    from hare_opt.model import Result, Status
    from hare_opt.model.options import Options, Run, option
    from hare_opt.bounds import BoundSpec, register_bound
    from hare_opt.sim import register_policy
    from hare_opt.sweeps.catalog import ITEMS
    from hare_opt.sweeps.items import sim_item, testbed
    from hare_opt.sweeps.verdicts import Best
    from hare_opt.solvers import SolverSpec, register, solve


    @dataclass(frozen=True)
    class ToyOptions(Options):
        honest: bool = option(True)


    def solve_toy(instance, run: Run, options: ToyOptions) -> Result:
        """An "exact" solver: CP-SAT with one worker, or (not honest) Smith's order
        reported as optimal, which the cross-checks must catch."""
        if options.honest:
            res = solve(instance, "cpsat", time_limit=run.time_limit, threads=1)
        else:
            res = solve(instance, "wspt")
            res.status = Status.OPTIMAL
        res.solver = "toy"
        return res


    class HeavyFirst:
        """Heaviest ready job first, each task on its earliest-finish idle GPU; with
        ``lazy`` it never starts anything (the simulator must report that)."""

        name, mode = "toy-policy", "relaxed"

        def __init__(self, lazy=False):
            self.lazy = lazy

        def reset(self, sim):
            self.ready = set()

        def decide(self, sim, events):
            if self.lazy:
                return
            self.ready |= set(events.arrived) | set(events.opened)
            self.ready = {j for j in self.ready if sim.ready(j)}
            for j in sorted(self.ready, key=lambda j: -int(sim.inst.weight[j])):
                r = int(sim.state.round[j])
                while sim.state.round[j] == r:
                    g = int(sim.finishes(j).argmin())
                    if not sim.idle(g):
                        break
                    sim.start(j, g)

        def stats(self):
            return {}


    register(SolverSpec("toy", solve_toy, "exact", ToyOptions))
    register_policy("toy-policy", HeavyFirst)


    def toy_bound(instance) -> int:
        """Each job ends no earlier than its release plus its fastest task (a wrong one
        claims ten times that)."""
        return TIMES * sum(j.weight * (j.release + min(j.task_time.values()))
                           for j in instance.jobs)


    TIMES = 1
    register_bound(BoundSpec("toy-bound", toy_bound, exact=True, cheap=False))

    # a reproduction item: hare against gavel-fifo on a 4-job testbed
    ITEMS["toy-item"] = sim_item("toy: hare and gavel-fifo on 4 jobs", "hare is best",
                                 [{**testbed(n_jobs=4), "label": "4 jobs"}], [Best()],
                                 policies=["hare", "gavel-fifo"])
''')


NO_CACHE = ("-p", "no:cacheprovider")


def run_pytest(tmp_path: Path, *args: str, honest: bool = True) -> subprocess.CompletedProcess:
    source = (
        PLUGIN
        if honest
        else PLUGIN.replace("honest: bool = option(True)", "honest: bool = option(False)")
        .replace("def __init__(self, lazy=False)", "def __init__(self, lazy=True)")
        .replace("TIMES = 1", "TIMES = 10")
    )
    (tmp_path / "toy_plugin.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}:{TESTS}", "CI": "true"}
    return subprocess.run(
        # one process (-n 0): this runs inside a worker already, and -v's lines are read
        [sys.executable, "-m", "pytest", "-n", "0", "-p", "toy_plugin", "-v", *NO_CACHE, *args],
        cwd=TESTS.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_a_registered_toy_solver_and_policy_are_cross_checked(tmp_path):
    out = run_pytest(
        tmp_path,
        "tests/test_exact.py",
        "tests/test_sim.py",
        "-k",
        "toy and (brute_force or smith or fig1_beats or every_policy_gives_checked)",
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    for test in (
        "test_exact.py::test_matches_brute_force[toy]",
        "test_exact.py::test_single_gpu_smith_rule[toy]",
        "test_exact.py::test_fig1_beats_paper[toy]",
        "test_sim.py::test_every_policy_gives_checked_schedules[toy-policy]",
    ):
        assert f"{test} PASSED" in out.stdout, out.stdout[-3000:]


def test_the_recipes_toy_bound_and_item_and_the_engines_contract(tmp_path):
    """docs/contributing.md's recipes as a user follows them, in a plugin (no file of the
    package edited): a bound registered with one call is checked against the brute
    force; an item added to ``ITEMS`` is drawn and read by the figure test and runs
    end to end; a policy without a kernel leaves the engines' tests green (it runs in
    the reference engine)."""
    out = run_pytest(
        tmp_path,
        "tests/test_bounds.py",
        "tests/test_figures.py",
        "tests/test_relaxed.py",
        "tests/test_compiled.py",
        "-k",
        "brute_force or toy-item or has_a_kernel",
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    for test in (
        "test_bounds.py::test_bounds_below_brute_force_optimum_below_heuristics",
        "test_figures.py::test_each_item_figure_reads[toy-item]",
        "test_relaxed.py::test_every_built_in_relaxed_policy_has_a_kernel",
        "test_compiled.py::test_every_built_in_gang_policy_has_a_kernel",
    ):
        assert f"{test} PASSED" in out.stdout, out.stdout[-3000:]
    (tmp_path / "toy_plugin.py").write_text(PLUGIN)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}:{TESTS}", "CI": "true"}
    script = (
        "import toy_plugin, sys\n"
        "from hare_opt.sweeps.reproduce import run_items\n"
        "[o] = run_items(sys.argv[1], only=['toy-item'], workers=1, progress=False)\n"
        "print(o.verdict)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "figs")],
        cwd=TESTS.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "figs" / "toy-item.csv").is_file()
    assert (tmp_path / "figs" / "toy-item.png").is_file()
    assert "toy-item" in (tmp_path / "figs" / "README.md").read_text()
    assert "FAILED" not in done.stdout and done.stdout.strip()


def test_a_wrong_toy_bound_is_caught(tmp_path):
    out = run_pytest(tmp_path, "tests/test_bounds.py", "-k", "brute_force", honest=False)
    assert out.returncode == 1, out.stdout[-3000:]
    assert "test_bounds_below_brute_force_optimum_below_heuristics FAILED" in out.stdout
    assert "toy-bound" in out.stdout


def test_a_wrong_toy_solver_and_policy_are_caught(tmp_path):
    out = run_pytest(
        tmp_path,
        "tests/test_exact.py",
        "tests/test_sim.py",
        "-k",
        "toy and (brute_force or every_policy_gives_checked)",
        honest=False,
    )
    assert out.returncode == 1, out.stdout[-3000:]
    assert "test_matches_brute_force[toy] FAILED" in out.stdout
    assert "test_every_policy_gives_checked_schedules[toy-policy] FAILED" in out.stdout


@pytest.mark.parametrize("name", solver_names())
def test_every_solver_spec_is_complete(name):
    spec = SOLVERS.spec(name)
    assert spec.kind in ("exact", "heuristic", "rule", "improver")
    cls = spec.options_class()
    cls.parse({})  # the defaults pass their own validation
    assert [n for n, _, _ in cls.describe()] == cls.names()
    if spec.guarantee is not None:
        assert callable(resolve(spec.guarantee))
    assert name in available_solvers()


def test_registry_views_agree():
    assert set(solver_names("exact")) >= {"cpsat", "milp", "bnb", "portfolio"}
    assert solver_names(portfolio=True) == ["cpsat", "milp", "bnb"]
    assert {"hare", "hare-paper"} <= set(solver_names("heuristic"))
    assert {p.name for p in POLICIES if p.mode == "gang"} >= {"gavel-fifo", "allox"}


def test_claims_come_from_the_registry():
    from hare_opt.examples import smith_counterexample

    inst: Instance = smith_counterexample(2, 3)
    assert claimed_factor(inst, "hare-paper") == 3.0  # alpha = 1 on one GPU
    assert claimed_factor(inst, "wspt") is None
    assert claimed_factor(inst, "hare") >= 1.0
    assert Status.OPTIMAL.has_schedule and not Status.UNKNOWN.has_schedule
