"""``hare-opt demo`` prints the same table on every run: its searches end on work limits,
not on the wall clock (hare-paper's relaxation once gave 603,909 and then 611,177), and
the table says where each lower bound comes from and why the second instance has no
exact solver."""

from __future__ import annotations

import re

from hare_opt.cli.main import main

#: A row's runtime column ("  0.04 s"): the one figure that may differ between runs.
RUNTIME = re.compile(r" +\d+\.\d\d s(?=  |$)", re.M)


def test_the_demo_prints_the_same_table_twice_and_explains_it(capsys, tmp_path):
    tables = []
    for k in range(2):
        assert main(["demo", "--out-dir", str(tmp_path / str(k))]) == 0
        out = capsys.readouterr().out
        tables.append(RUNTIME.sub("", out).replace(str(tmp_path / str(k)), "OUT"))
    assert tables[0] == tables[1]
    out = tables[0]
    assert "error" not in out
    assert "[proved optimal]" in out and "[combinatorial bounds (no LP)]" in out
    assert "[its relaxation's proved bound (step 1)]" in out
    assert "exact solvers not run: 275 tasks" in out
    fig1, paper = out.split("\npaper-s1-n20")
    assert "cpsat" in fig1 and "portfolio" in fig1
    assert "cpsat" not in paper and "portfolio" not in paper
