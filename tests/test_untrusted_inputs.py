"""No input can run code, write outside its target or overflow.

Each case is a command a user can type; each must do no harm: a crafted pickle named by
any option runs nothing, no option writes over a file that is not a declared output,
names that become paths are plain file names, and instances whose weighted sums could
leave 64 bits are refused at load naming the field.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from cli_run import refused, run
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "instances" / "small" / "small-00.json"


class _Payload:
    def __init__(self, mark: Path) -> None:
        self.mark = mark

    def __reduce__(self):
        return (Path.touch, (self.mark,))


@pytest.fixture
def evil(tmp_path) -> tuple[Path, Path]:
    mark = tmp_path / "PWNED"
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(_Payload(mark)))
    return path, mark


@pytest.mark.parametrize(
    "solver,extra",
    [
        ("cpsat", "incumbent={evil}"),
        ("bnb", "incumbent={evil}"),
        ("portfolio", 'backend_options={{"bnb": {{"incumbent": "{evil}"}}}}'),
        ("portfolio", 'backend_options={{"cpsat": {{"incumbent": "{evil}"}}}}'),
    ],
)
def test_no_incumbent_option_and_a_pickle_runs_nothing(evil, solver, extra):
    path, mark = evil
    line = refused(
        [
            "solve",
            str(SMALL),
            "--solver",
            solver,
            "--time-limit",
            "5",
            "--option",
            extra.format(evil=path),
        ]
    )
    assert "incumbent" in line
    assert not mark.exists()


@pytest.mark.parametrize("solver", ["cpsat", "bnb"])
def test_the_instance_being_solved_is_not_overwritten(tmp_path, solver):
    inst = tmp_path / "s00.json"
    inst.write_bytes(SMALL.read_bytes())
    before = inst.read_bytes()
    refused(
        [
            "solve",
            str(inst),
            "--solver",
            solver,
            "--time-limit",
            "5",
            "--option",
            f"incumbent={inst}",
        ]
    )
    assert inst.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s00.json"]


def test_a_pickle_given_as_any_input_path_runs_nothing(evil, tmp_path):
    # every input path is read by a format that cannot run code: a pickle is refused
    path, mark = evil
    for argv in (
        ["solve", str(path), "--solver", "fifo"],
        ["check", str(SMALL), str(path)],
        ["check", str(path), str(path)],
    ):
        refused(argv)
    assert not mark.exists()


# --- names that become paths

SWEEP = 'fn = "arith"\nseeds = 1\n'


@pytest.mark.parametrize(
    "name", ['"../x"', '"../../escaped"', '"/abs/x"', '"a\\\\b"', '"."', '".."', '""', "5", "[1]"]
)
def test_a_sweep_name_that_is_not_a_plain_file_name_is_refused(tmp_path, name):
    out = tmp_path / "out"
    config = tmp_path / "conf" / "s.toml"
    config.parent.mkdir()
    config.write_text(f"name = {name}\n{SWEEP}")
    victim = tmp_path / "x.csv"
    victim.write_text("mine\n")
    line = refused(["sweep", str(config), "--out-dir", str(out), "--no-progress"])
    assert "field 'name'" in line
    assert not out.exists() and victim.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["conf", "s.toml", "x.csv"]


def test_a_sweep_never_writes_over_its_config(tmp_path):
    config = tmp_path / "conf.csv"
    text = f'name = "conf"\n{SWEEP}'
    config.write_text(text)
    line = refused(["sweep", str(config), "--out-dir", str(tmp_path), "--no-progress"])
    assert "config file itself" in line and "field 'name'" in line
    assert config.read_text() == text and not (tmp_path / "cells").exists()
    link = tmp_path / "link.toml"  # through a link to it: the same file
    link.symlink_to(config)
    refused(["sweep", str(link), "--out-dir", str(tmp_path), "--no-progress"])
    assert config.read_text() == text


def test_a_plain_sweep_name_still_runs(tmp_path):
    config = tmp_path / "s.toml"
    config.write_text(f'name = "fine"\n{SWEEP}')
    code, _, err = run(["sweep", str(config), "--out-dir", str(tmp_path / "o"), "--no-progress"])
    assert code == 0, err
    assert (tmp_path / "o" / "fine.csv").is_file()


@pytest.mark.parametrize("name", ["../x", "/abs", "a/b", "a\\b", ".", "..", ""])
def test_generate_name_must_be_a_plain_file_name(tmp_path, name):
    out = tmp_path / "d"
    line = refused(["generate", "random", "--out-dir", str(out), "--name", name])
    assert "--name" in line
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_generate_with_a_plain_name_writes_inside_the_folder(tmp_path):
    code, _, err = run(
        ["generate", "random", "--out-dir", str(tmp_path / "d"), "--name", "ok", "--count", "2"]
    )
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["ok-0.json", "ok-1.json"]


# --- 64-bit sums


def _doc(jobs: list[dict], gpus: list[dict] | None = None) -> dict:
    return {
        "format": "hare-opt/instance@1",
        "name": "big",
        "time_unit": "s",
        "gpus": gpus or [{"id": "g0", "type": "A"}],
        "jobs": jobs,
    }


@pytest.mark.parametrize(
    "doc",
    [
        _doc(
            [
                {
                    "id": f"j{i}",
                    "weight": 10**7,
                    "rounds": 1,
                    "tasks_per_round": 1,
                    "task_time": {"A": 10**12},
                }
                for i in range(2)
            ]
        ),
        _doc(
            [
                {
                    "id": f"j{i}",
                    "weight": 1000,
                    "rounds": 100,
                    "tasks_per_round": 1,
                    "task_time": {"A": 10**12},
                }
                for i in range(100)
            ]
        ),
    ],
    ids=["two-heavy-jobs", "hundred-long-jobs"],
)
@pytest.mark.parametrize(
    "command",
    [["solve", "--solver", "hare"], ["solve", "--solver", "cpsat"], ["simulate", "--instance"]],
)
def test_the_overflow_examples_are_refused_at_load(tmp_path, doc, command):
    import json

    f = tmp_path / "big.json"
    f.write_text(json.dumps(doc))
    argv = [command[0], str(f), *command[1:]] if command[0] == "solve" else [*command, str(f)]
    line = refused(argv)
    assert "field 'weight'" in line and "job 'j0'" in line and "2^60" in line


def test_the_limit_is_exact():
    from hare_opt.model import GPU, Instance, InstanceError, Job
    from hare_opt.model.instance import MAX_WEIGHTED_TIME

    def make(time: int) -> Instance:
        return Instance((GPU("g0", "A"),), (Job("a", {"A": time}, weight=2**21),))

    assert MAX_WEIGHTED_TIME == 2**60
    make(2**39)  # weight x horizon = 2^60 exactly: accepted
    with pytest.raises(InstanceError, match="field 'weight'"):
        make(2**39 + 1)


FAST = ["hare", "geobatch", "fifo", "wspt", "eft", "cpsat"]


@st.composite
def at_the_limit(draw) -> dict:
    """Instances whose weight x serial horizon is within a few percent of 2^60 (either
    side), with the largest weights and times the spec allows."""
    from hare_opt.model.instance import MAX_TIME, MAX_WEIGHTED_TIME

    n = draw(st.integers(1, 4))
    types = ["A", "B"][: draw(st.integers(1, 2))]
    gpus = [{"id": f"g{i}", "type": types[i % len(types)]} for i in range(draw(st.integers(1, 3)))]
    shape = [
        (
            draw(st.integers(1, 3)),
            draw(st.integers(1, 2)),
            {t: draw(st.integers(1, 8)) for t in types},
            draw(st.integers(0, 2)),
            draw(st.integers(0, 1)),
        )
        for _ in range(n)
    ]
    weights = [draw(st.sampled_from([1, 10**6, 10**7 - 1, 10**7])) for _ in range(n)]
    # the time unit T that puts sum(w) x horizon at ``share`` x 2^60
    units = sum(r * k * (max(tt.values()) + s + o) for r, k, tt, s, o in shape) + 1
    share = draw(st.sampled_from([0.5, 0.97, 0.999, 1.0, 1.001, 1.05]))
    unit = max(1, min(MAX_TIME // 8, int(share * MAX_WEIGHTED_TIME / (sum(weights) * units))))
    jobs = [
        {
            "id": f"j{i}",
            "weight": w,
            "rounds": r,
            "tasks_per_round": k,
            "task_time": {t: p * unit for t, p in tt.items()},
            "sync_time": s * unit,
            "switch_overhead": o * unit,
            "release": draw(st.sampled_from([0, unit])),
        }
        for i, (w, (r, k, tt, s, o)) in enumerate(zip(weights, shape))
    ]
    return _doc(jobs, gpus)


@settings(max_examples=min(settings().max_examples, 12))
@given(doc=at_the_limit())
def test_at_the_limits_every_fast_solver_checks_or_refuses_in_one_line(doc):
    _at_the_limit(doc, FAST)


#: The other solvers (seconds each, so fewer examples); ``milp`` may refuse an instance
#: its model cannot hold (its own size limit, one line).
SLOW = ["milp", "bnb", "lns", "hare-paper", "portfolio"]
SIZE_LIMITED = {"milp"}


@settings(max_examples=min(settings().max_examples, 5))
@given(doc=at_the_limit())
def test_at_the_limits_every_other_solver_checks_or_refuses_in_one_line(doc):
    _at_the_limit(doc, SLOW)


def _at_the_limit(doc: dict, solvers: list[str]) -> None:
    import json
    import tempfile

    from hare_opt.model.instance import MAX_WEIGHTED_TIME

    jobs = doc["jobs"]
    horizon = max(j["release"] for j in jobs) + sum(
        j["rounds"]
        * j["tasks_per_round"]
        * (max(j["task_time"].values()) + j["sync_time"] + j["switch_overhead"])
        for j in jobs
    )
    over = sum(j["weight"] for j in jobs) * horizon > MAX_WEIGHTED_TIME
    with tempfile.TemporaryDirectory() as folder:
        f = Path(folder) / "i.json"
        f.write_text(json.dumps(doc))
        for solver in solvers:
            out = Path(folder) / f"{solver}.json"
            code, _, err = run(
                ["solve", str(f), "--solver", solver, "--time-limit", "1", "--out", str(out)]
            )
            assert "Traceback" not in err, (solver, err)
            if code == 2 and not over and solver in SIZE_LIMITED:
                assert len(err.splitlines()) == 1, (solver, err)
                continue
            if code == 2:  # refused at load, in one line naming the field; nothing else
                assert len(err.splitlines()) == 1 and "field 'weight'" in err, (solver, err)
                assert over, (solver, err)
                continue
            assert not over, solver
            assert code == 0, (solver, code, err)
            code, text, err = run(["check", str(f), str(out), "--json"])
            assert code == 0 and json.loads(text)["feasible"], (solver, text, err)
            assert json.loads(text)["objective"] < 2**63


# --- tracebacks and late refusals


@pytest.mark.parametrize(
    "policy,says",
    [
        ("hare:budget=1:x=2", "must be an integer"),
        ("hare:budget=-1", "must be >= 0"),
        ("hare:improve=maybe", "true or false"),
    ],
)
def test_simulate_checks_the_planner_options_as_solve_does(policy, says):
    line = refused(
        ["simulate", "--workload", "random", "--jobs", "3", "--policies", policy, "--no-progress"]
    )
    assert "option '" in line and says in line


@pytest.mark.parametrize(
    "extra,field",
    [
        ('solver = "nosuch"', "solver"),
        ('solver = "wspt"\nsolvers = ["nosuch"]', "solvers"),
        ('solver = "wspt"\ntime_limit = -1.0', "time_limit"),
        ('solver = "wspt"\ntime_limit = "soon"', "time_limit"),
        ('solver = "wspt"\ncluster = "V100:0"', "cluster"),
    ],
)
def test_sweep_values_are_refused_before_any_work(tmp_path, extra, field):
    config = tmp_path / "v.toml"
    config.write_text(f'fn = "solve-random"\nseeds = 1\n[fixed]\nn_jobs = 3\n{extra}\n')
    line = refused(["sweep", str(config), "--out-dir", str(tmp_path / "o"), "--no-progress"])
    assert f"field {field!r}" in line
    assert not (tmp_path / "o").exists()


def test_a_sweep_grid_policy_is_checked_before_any_work(tmp_path):
    config = tmp_path / "s.toml"
    config.write_text(
        'fn = "simulate"\nseeds = 1\n[fixed]\nn_jobs = 3\n[grid]\npolicy = ["hare", "nosuch"]\n'
    )
    line = refused(["sweep", str(config), "--out-dir", str(tmp_path / "o"), "--no-progress"])
    assert "[grid] field 'policy'" in line and "nosuch" in line
    assert not (tmp_path / "o").exists()


def test_check_prints_a_big_integer_objective_exactly():
    from hare_opt.model.units import fmt_number, fmt_time

    big = 89999993000000000001  # beyond 2^63 and 2^53: a float would print ...000000
    assert fmt_number(big) == str(big)
    assert fmt_time(big, "0.5s") == f"{big} 0.5s (= 44999996500000000000.5 s)"


def test_check_text_at_the_limit_prints_exact_integers(tmp_path):
    import json

    from hare_opt.model.instance import MAX_WEIGHTED_TIME

    time = MAX_WEIGHTED_TIME // (2 * 10**7) // 2 - 1  # two jobs, weight 10^7: at the limit
    doc = _doc(
        [
            {
                "id": f"j{i}",
                "weight": 10**7,
                "rounds": 1,
                "tasks_per_round": 1,
                "task_time": {"A": time + i},
            }
            for i in range(2)
        ]
    )
    f, out = tmp_path / "i.json", tmp_path / "s.json"
    f.write_text(json.dumps(doc))
    code, _, err = run(["solve", str(f), "--solver", "wspt", "--out", str(out)])
    assert code == 0, err
    code, text, _ = run(["check", str(f), str(out)])
    exact = 10**7 * time + 10**7 * (2 * time + 1)
    assert code == 0 and str(exact) in text, text


def test_plot_refuses_a_huge_title_at_once(tmp_path):
    line = refused(
        [
            "plot",
            str(ROOT / "instances" / "fig1.json"),
            str(ROOT / "instances" / "fig1" / "c.schedule.json"),
            "--out",
            str(tmp_path / "p.png"),
            "--title",
            "x" * 100_000,
        ]
    )
    assert "--title" in line and "300 characters" in line
    assert not (tmp_path / "p.png").exists()  # refused before drawing anything


@pytest.mark.parametrize("delta", [1, 1e-6 * 17, 1e-9])
def test_check_refuses_a_header_objective_off_by_any_amount(tmp_path, delta):
    import json

    doc = json.loads((ROOT / "instances" / "fig1" / "c.schedule.json").read_text())
    doc["objective"] = doc["objective"] + delta
    f = tmp_path / "s.json"
    f.write_text(json.dumps(doc))
    code, text, _ = run(["check", str(ROOT / "instances" / "fig1.json"), str(f)])
    assert code == 1 and "header: objective" in text and "but the tasks score 17" in text
    doc["objective"] = 17.0  # the same integer, written as a float: no contradiction
    f.write_text(json.dumps(doc))
    assert run(["check", str(ROOT / "instances" / "fig1.json"), str(f)])[0] == 0


@pytest.mark.parametrize("what", ["gpu", "job"])
def test_plot_draws_ids_holding_a_lone_surrogate(tmp_path, what):
    import json

    inst = json.loads((ROOT / "instances" / "fig1.json").read_text())
    sched = json.loads((ROOT / "instances" / "fig1" / "c.schedule.json").read_text())
    items = inst["gpus"] if what == "gpu" else inst["jobs"]
    old, new = items[0]["id"], "x\ud800"
    items[0]["id"] = new
    for t in sched["tasks"]:
        if t[what] == old:
            t[what] = new
    fi, fs = tmp_path / "i.json", tmp_path / "s.json"
    fi.write_text(json.dumps(inst))
    fs.write_text(json.dumps(sched))
    code, _, err = run(
        ["plot", str(fi), str(fs), "--out", str(tmp_path / "p.png"), "--title", "t\udfff"]
    )
    assert code == 0, err
    assert (tmp_path / "p.png").stat().st_size > 0


#: Every option of every command that takes a path (``cli.args.path``): what it is.
#: A new path option must be added here, as an input (read, never written) or as a
#: declared output (written through ``io.output``), or this test fails.
PATH_OPTIONS = {
    ("check", "instance"): "input",
    ("check", "schedule"): "input",
    ("plot", "instance"): "input",
    ("plot", "schedule"): "input",
    ("plot", "out"): "output",
    ("solve", "instance"): "input",
    ("solve", "start"): "input",
    ("solve", "out"): "output",
    ("bound", "instance"): "input",
    ("simulate", "instance"): "input",
    ("simulate", "trace"): "input",
    ("simulate", "out"): "output",
    ("simulate", "out_dir"): "output",
    ("explain", "instance"): "input",
    ("explain", "schedule"): "input",
    ("explain", "out"): "output",
    ("demo", "out_dir"): "output",
    ("falsify", "out"): "output",
    ("reproduce", "out_dir"): "output",
    ("reproduce", "cache"): "output",
    ("sweep", "config"): "input",
    ("sweep", "out_dir"): "output",
    ("generate", "out"): "output",
    ("generate", "out_dir"): "output",
}


def test_every_path_option_is_an_input_or_a_declared_output():
    from hare_opt.cli import args as a
    from hare_opt.cli.main import build_parser

    found = set()
    parser = build_parser()
    sub = next(x for x in parser._actions if x.dest == "command")
    for name, p in sub.choices.items():
        stack = [p]
        while stack:
            q = stack.pop()
            for act in q._actions:
                if act.type is a.path:
                    found.add((name, act.dest))
                if act.choices and isinstance(act.choices, dict):  # generate's kinds
                    stack.extend(act.choices.values())
    assert found == set(PATH_OPTIONS), found ^ set(PATH_OPTIONS)


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "{inst}", "--solver", "hare", "--out", "{inst}"],
        ["solve", "{inst}", "--solver", "lns", "--start", "{sched}", "--out", "{sched}"],
        ["simulate", "--instance", "{inst}", "--policies", "gavel-fifo", "--out", "{inst}"],
        ["plot", "{inst}", "{sched}", "--out", "{inst}"],
        ["plot", "{inst}", "{sched}", "--out", "{sched}"],
        ["explain", "{inst}", "{sched}", "--out", "{inst}"],
        ["explain", "{inst}", "{sched}", "--out", "{sched}"],
    ],
    ids=[
        "solve",
        "solve-start",
        "simulate",
        "plot-instance",
        "plot-schedule",
        "explain-instance",
        "explain-schedule",
    ],
)
def test_an_output_option_naming_an_input_is_refused_and_the_input_kept(tmp_path, argv):
    """Each declared output that a command also reads from refuses to write over its own
    input (the other outputs name folders or files the command does not read)."""
    inst, sched = tmp_path / "i.json", tmp_path / "s.json"
    inst.write_bytes((ROOT / "instances" / "fig1.json").read_bytes())
    sched.write_bytes((ROOT / "instances" / "fig1" / "c.schedule.json").read_bytes())
    before = inst.read_bytes(), sched.read_bytes()
    refused([x.format(inst=inst, sched=sched) for x in argv])
    assert (inst.read_bytes(), sched.read_bytes()) == before
