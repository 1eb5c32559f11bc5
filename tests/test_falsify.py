"""``hare-opt falsify``: reproducible for a seed, valid output, honest ratios."""

from __future__ import annotations

import random
import re

import pytest

from hare_opt.checker import check
from hare_opt.cli.main import main
from hare_opt.examples import smith_counterexample
from hare_opt.falsify import (
    Finding,
    Space,
    _valid,
    claimed_guarantee,
    falsify,
    mutate,
    random_candidate,
    shrink,
)
from hare_opt.io import instance_to_dict, load_instance, load_result
from hare_opt.solvers import solve

SMALL = Space(max_tasks=5, max_gpus=2, max_time=9)


def test_short_run_is_deterministic_and_ratio_at_least_one():
    runs = [falsify("hare-paper", iterations=12, budget=300, seed=5, space=SMALL, progress=False)
            for _ in range(2)]
    a, b = runs
    assert a.evaluated > 0
    assert a.ratio >= 1.0
    assert (a.ratio, a.evaluated, a.skipped, a.history) == (b.ratio, b.evaluated, b.skipped,
                                                            b.history)
    assert instance_to_dict(a.instance) == instance_to_dict(b.instance)
    opt = solve(a.instance, "cpsat", time_limit=30)
    assert opt.status == "optimal"
    assert a.ratio == pytest.approx(a.result.objective / opt.objective)


def test_cli_writes_a_valid_instance_and_schedule(tmp_path, capsys):
    out = tmp_path / "worst.json"
    rc = main(["falsify", "--solver", "wspt", "--iterations", "8", "--budget", "300",
               "--seed", "3", "--max-tasks", "5", "--max-gpus", "2", "--no-progress",
               "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "worst ratio" in text
    inst = load_instance(out)
    res = load_result(tmp_path / "worst.schedule.json")
    rep = check(inst, res.schedule)
    assert rep.feasible and rep.objective == res.objective


@pytest.mark.parametrize("argv", [["--solver", "no-such"], ["--solver", "fifo", "--budget", "0"],
                                  ["--solver", "fifo", "--iterations", "0"],
                                  ["--solver", "fifo", "--min-gpus", "5"]])
def test_cli_bad_arguments_exit_2(argv, capsys):
    assert main(["falsify", "--no-progress", *argv]) == 2
    assert "error" in capsys.readouterr().err


def test_generated_and_mutated_instances_stay_in_space():
    rng = random.Random(11)
    space = Space(max_tasks=6, max_gpus=3, model="paper")
    data = random_candidate(rng, space)
    seen = 0
    for _ in range(200):
        cand = mutate(rng, data, space)
        inst = _valid(cand, space)
        if inst is None:
            continue
        seen += 1
        data = cand
        assert inst.num_tasks <= 6 and inst.num_gpus <= 3
        assert not inst.overhead.any()  # the paper's model: no setups
        assert (inst.sync < inst.proc)[inst.eligible].all()  # the paper's T^s < T^c
    assert seen > 50


@pytest.mark.slow
def test_shrink_keeps_a_violation():
    inst = smith_counterexample(6, 100)
    res = solve(inst, "hare-paper")
    f = Finding("hare-paper", "opt", inst, res, 475.0, res.objective / 475.0,
                guarantee=claimed_guarantee(inst, "hare-paper"), alpha=1.0)
    assert f.violates
    small = shrink(f, Space(max_tasks=8, max_gpus=1))
    assert small.violates
    assert small.instance.num_tasks <= inst.num_tasks
    opt = solve(small.instance, "wspt")  # one GPU, no releases: Smith's rule is optimal
    assert small.ratio == pytest.approx(small.result.objective / opt.objective)


@pytest.mark.parametrize("score", ["relative", "ratio"])
def test_the_label_names_what_the_score_measured(score, capsys):
    # Under the default score the best instance is the one nearest its claim, not the
    # worst ratio: "worst ratio 1" was printed while a ratio-score run found 1.26.
    argv = ["falsify", "--solver", "hare", "--iterations", "25", "--budget", "300",
            "--seed", "1", "--max-tasks", "6", "--max-gpus", "2", "--no-progress",
            "--score", score]
    assert main(argv) == 0
    text = capsys.readouterr().out
    f = falsify("hare", iterations=25, budget=300, seed=1, space=Space(max_tasks=6, max_gpus=2),
                progress=False, score=score)
    assert f.max_ratio >= f.ratio >= 1.0
    if score == "ratio":
        assert f.ratio == f.max_ratio and f"worst ratio  {f.ratio:.6g}" in text
    else:
        assert not re.search(r"worst ratio +\d", text)  # no number under that name
        assert f"highest ratio / claimed guarantee  {f.score:.6g}" in text
        assert f"highest ratio of any instance evaluated  {f.max_ratio:.6g}" in text
