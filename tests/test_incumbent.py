"""The incumbent the portfolio's runs share while they run (solvers/incumbent.py)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from conftest import ROOT

from hare_opt.model import Stats
from hare_opt.solvers import solve
from hare_opt.solvers.incumbent import SharedIncumbent, sharing
from hare_opt.solvers.portfolio.solver import from_board

sys.path.insert(0, str(ROOT / "experiments"))
from bench_exact import frontier_instance  # noqa: E402


def _rows(inst, result):
    s = result.schedule
    return np.column_stack([s.job_indices(inst), s.round, s.task, s.gpu_indices(inst), s.start])


@pytest.fixture(scope="module")
def case():
    inst = frontier_instance(20, 2)
    opt = solve(inst, "bnb", special=False)
    assert opt.status == "optimal"
    return inst, opt


def test_only_a_better_schedule_replaces_the_shared_one(tmp_path, case):
    inst, opt = case
    board = SharedIncumbent(tmp_path / "best.json")
    assert board.peek() is None
    fifo = solve(inst, "fifo")
    assert board.offer(int(fifo.objective), _rows(inst, fifo))
    assert board.offer(int(opt.objective), _rows(inst, opt))
    assert not board.offer(int(fifo.objective), _rows(inst, fifo))
    assert board.peek() == opt.objective
    value, schedule = board.schedule(inst)
    assert value == opt.objective and schedule == opt.schedule


def test_bnb_below_a_shared_optimum_proves_its_value(tmp_path, case):
    # bnb starts from fifo; the board holds OPT: the search for anything below OPT fails,
    # which proves OPT (the portfolio holds that schedule) though bnb's own is worse.
    inst, opt = case
    board = SharedIncumbent(tmp_path / "best.json")
    board.offer(int(opt.objective), _rows(inst, opt))
    with sharing(board):
        out = solve(inst, "bnb", hint=solve(inst, "fifo"))
    assert out.lower_bound == opt.objective <= out.objective
    assert out.stats["search_bound_from_shared"] == (out.objective > opt.objective)


def test_a_false_claim_on_the_board_is_refused(tmp_path, case):
    inst, opt = case
    board = SharedIncumbent(tmp_path / "best.json")
    board.offer(int(opt.objective) - 1, _rows(inst, opt))  # claims better than it scores
    stats = Stats()
    assert from_board(inst, board, stats, float("inf")) is None and "shared_error" in stats
    assert stats.checks == 1


def test_cpsat_offers_its_solutions(tmp_path, case):
    inst, _ = case
    board = SharedIncumbent(tmp_path / "best.json")
    with sharing(board):
        out = solve(inst, "cpsat", time_limit=20)
    assert board.peek() is not None and board.peek() <= out.objective
    assert from_board(inst, board, Stats(), float("inf")).objective == board.peek()


def test_a_malformed_or_foreign_board_reads_as_empty(tmp_path, case):
    inst, _ = case
    path = tmp_path / "best.json"
    board = SharedIncumbent(path)
    for text in (
        b"\x80\x04K\x01.",
        b"{}",
        b'{"value": "1", "rows": []}',
        b"[1, 2]",
        b'{"value": 5, "rows": [[0, 0, 0, 99, 0]]}',
    ):
        path.write_bytes(text)
        board._seen = None
        assert board.peek() in (None, 5) and board.schedule(inst) is None
    path.unlink()
    os.symlink(tmp_path / "elsewhere", path)  # a link is not followed
    (tmp_path / "elsewhere").write_text('{"value": 1, "rows": []}')
    assert board.peek() is None
