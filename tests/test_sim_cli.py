"""``hare-opt simulate``: summary JSON, per-job CSV, one-line errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hare_opt.cli.main import main
from hare_opt.io import load_instance
from hare_opt.sim import simulate

FIG1 = "instances/fig1.json"


def run_cli(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_summary_json_matches_the_library(capsys, tmp_path):
    from conftest import ROOT

    path = str(ROOT / FIG1)
    out_csv = tmp_path / "jobs.csv"
    code, out, _ = run_cli(
        [
            "simulate",
            "--instance",
            path,
            "--policies",
            "hare,hlas,srtf",
            "--json",
            "--out",
            str(out_csv),
            "--no-progress",
        ],
        capsys,
    )
    assert code == 0
    summary = json.loads(out)
    assert list(summary) == ["hare", "hlas", "srtf"]
    inst = load_instance(path)
    for policy, figures in summary.items():
        assert figures.pop("switching_model") == "instance"
        assert figures == simulate(inst, policy).summary()
        assert set(figures) == {"total_weighted_jct", "avg_jct", "makespan"}
    jobs = pd.read_csv(out_csv)
    assert len(jobs) == 3 * inst.num_jobs and set(jobs.policy) == set(summary)


def test_generated_workload_table(capsys):
    code, out, _ = run_cli(
        [
            "simulate",
            "--workload",
            "paper",
            "--jobs",
            "6",
            "--cluster",
            "V100:4,K80:4",
            "--policies",
            "hare,allox",
            "--switching",
            "pipeswitch",
            "--seed",
            "2",
            "--no-progress",
        ],
        capsys,
    )
    assert code == 0
    assert "paper-s2-n6: 6 jobs" in out and "allox" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--instance", FIG1, "--policies", "hare,nope"], "unknown ['nope']"),
        (["--instance", FIG1, "--switching", "hare"], "an instance file names no models"),
        (["--workload", "paper", "--cluster", "V100:x"], "V100:x"),
        (["--workload", "paper", "--switching", "fast"], "option 'switching'"),
        (["--instance", "no-such-file.json"], "no-such-file.json"),
    ],
)
def test_user_errors_are_one_line(args, message, capsys):
    from conftest import ROOT

    args = [str(ROOT / a) if a == FIG1 else a for a in args]
    code, _, err = run_cli(["simulate", *args, "--no-progress"], capsys)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_semantics_flag_and_the_gang_policies_switching(capsys):
    """``--semantics``: under leases a gang policy runs the workload built with Table 3's
    default switching, per-round with ``--switching``; relaxed policies alike under both."""
    from hare_opt.generators import workload_instance

    summaries = {}
    for semantics in ("lease", "per-round"):
        code, out, _ = run_cli(
            [
                "simulate",
                "--workload",
                "paper",
                "--jobs",
                "5",
                "--policies",
                "srtf,hlas",
                "--semantics",
                semantics,
                "--summary-json",
                "--no-progress",
            ],
            capsys,
        )
        assert code == 0
        summaries[semantics] = json.loads(out)
    assert summaries["lease"]["hlas"] == summaries["per-round"]["hlas"]
    for semantics, switching in (("lease", "default"), ("per-round", "hare")):
        inst = workload_instance("paper", n_jobs=5, switching=switching)
        got = dict(summaries[semantics]["srtf"])
        assert got.pop("switching_model") == switching  # the output says which
        assert got == simulate(inst, "srtf", semantics=semantics).summary()
    code, _, err = run_cli(["simulate", "--workload", "paper", "--semantics", "gang"], capsys)
    assert code != 0 and "semantics" in err


def test_no_progress_bar_is_drawn_into_a_stderr_that_is_not_a_terminal():
    import contextlib
    import io

    from hare_opt.cli.main import main

    for argv in (
        ["simulate", "--workload", "paper", "--jobs", "4", "--policies", "gavel-fifo"],
        ["falsify", "--solver", "hare", "--iterations", "5", "--seed", "1"],
    ):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            assert main(argv) == 0, argv
        assert "\r" not in err.getvalue(), argv


def test_the_table_names_each_policy_s_switching(capsys):
    code, out, _ = run_cli(
        [
            "simulate",
            "--workload",
            "paper",
            "--jobs",
            "5",
            "--policies",
            "hlas,srtf",
            "--no-progress",
        ],
        capsys,
    )
    assert code == 0
    head, rows = out.splitlines()[1], out.splitlines()[3:]
    assert head.split()[0] == "switching"
    assert {r.split()[0]: r.split()[1] for r in rows} == {"hlas": "hare", "srtf": "default"}


def test_python_and_the_command_give_one_workload_the_same_numbers(capsys):
    """``simulate_workload`` is what ``simulate --workload`` runs: each policy on the jobs
    built with its column, the same numbers, and every result names the column. The
    instance-level call differs for a gang policy given Hare's switching, and the result
    of the workload-level one says why (its column)."""
    from hare_opt.generators import workload_instance
    from hare_opt.sim.workload import simulate_workload

    policies = ["hare", "gavel-fifo", "allox"]
    code, out, _ = run_cli(
        [
            "simulate",
            "--workload",
            "paper",
            "--jobs",
            "6",
            "--policies",
            ",".join(policies),
            "--json",
            "--no-progress",
        ],
        capsys,
    )
    assert code == 0
    cli = json.loads(out)
    runs = simulate_workload("paper", policies, n_jobs=6)
    for run in runs:
        assert {**run.summary(), "switching_model": run.metrics["switching_model"]} == cli[
            run.policy
        ]
    assert [r.metrics["switching_model"] for r in runs] == ["hare", "default", "default"]
    as_built = workload_instance("paper", n_jobs=6, switching="hare")
    fifo = simulate(as_built, "gavel-fifo")  # the instance as built: Hare's switching
    assert fifo.summary() != runs[1].summary()
    assert (
        simulate(workload_instance("paper", n_jobs=6, switching="default"), "gavel-fifo").summary()
        == runs[1].summary()
    )
