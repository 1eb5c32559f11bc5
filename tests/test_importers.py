"""Importers of Gavel throughputs and Philly traces: synthetic files and the shared data."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from hare_opt.generators import TESTBED, build_instance, philly_jobs_to_specs
from hare_opt.io import load_instance, save_instance
from hare_opt.io.gavel import load_gavel_throughputs, parse_job_key
from hare_opt.io.philly import TraceError, load_philly_jobs

GAVEL = {
    "v100": {
        "('ResNet-50 (batch size 64)', 1)": {"null": 4.5, "('A3C', 1)": [4.0, 3.0]},
        "('A3C', 1)": {"null": 7.0},
        "('ResNet-50 (batch size 64)', 2)": {"null": 8.0},
    },
    "k80": {"('ResNet-50 (batch size 64)', 1)": {"null": 0.6}},
    "k80_unconsolidated": {"('ResNet-50 (batch size 64)', 2)": {"null": 1.0}},
}


def write_json(path, data) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def test_gavel_synthetic(tmp_path):
    df = load_gavel_throughputs(write_json(tmp_path / "g.json", GAVEL))
    assert len(df) == 5
    row = df[(df.gpu_type == "v100") & (df.scale_factor == 1) & (df.model == "ResNet-50")]
    assert row.throughput.item() == 4.5 and row.batch_size.item() == 64
    assert row.job_type.item() == "ResNet-50 (batch size 64)" and row.consolidated.item()
    a3c = df[df.model == "A3C"]
    assert a3c.batch_size.isna().all() and a3c.throughput.item() == 7.0
    unc = df[~df.consolidated]
    assert list(unc.gpu_type) == ["k80"] and unc.scale_factor.item() == 2


@pytest.mark.parametrize(
    "data, match",
    [
        ({"v100": {"('X', 1)": {"other": 1.0}}}, "'null'"),
        ({"v100": {"('X', 1)": {"null": -1}}}, "'null'"),
        ({"v100": {"ResNet-50": {"null": 1.0}}}, "job key"),
        ({"v100": {"('X', 0)": {"null": 1.0}}}, "job key"),
        ({"v100": [1, 2]}, "v100"),
        ([1], "object"),
    ],
)
def test_gavel_errors(tmp_path, data, match):
    with pytest.raises(TraceError, match=match):
        load_gavel_throughputs(write_json(tmp_path / "g.json", data))


def test_gavel_unreadable(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(TraceError, match="not valid JSON"):
        load_gavel_throughputs(tmp_path / "bad.json")
    with pytest.raises(TraceError, match="no such file"):
        load_gavel_throughputs(tmp_path / "missing.json")
    assert parse_job_key("('LM (batch size 5)', 8)") == ("LM (batch size 5)", "LM", 5, 8)


def test_philly_gavel_style(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("duration_s,num_gpus\n7200,1\n3600,8\n100000,4\n")
    df = load_philly_jobs(path)
    assert list(df.columns) == ["duration_s", "num_gpus"]
    assert list(df.num_gpus) == [1, 8, 4] and df.duration_s.iloc[2] == 100000


def test_philly_sia_style_gzip(tmp_path):
    path = tmp_path / "s.csv.gz"
    pd.DataFrame(
        {
            "timestamp": ["2017-10-09 07:01:55", "2017-10-09 06:13:03", "2017-10-09 07:02:05"],
            "duration": [66.0, 2951.0, 10.0],
            "num_gpus": [1, 2, 16],
            "gpu_time": [66.0, 5902.0, 160.0],
            "cluster": ["a", "b", "a"],
        }
    ).to_csv(path, index=False, compression="gzip")
    df = load_philly_jobs(path)
    assert list(df.submit_s) == [2932.0, 0.0, 2942.0]  # seconds after the first submit
    assert list(df.cluster) == ["a", "b", "a"] and "gpu_time" in df.columns
    specs = philly_jobs_to_specs(df, seed=0, n_jobs=3, max_gpus=8, time_scale=0.5)
    assert [s.release for s in specs] == [0.0, 1466.0, 1471.0]  # submit order, scaled
    assert [s.tasks_per_round for s in specs] == [2, 1, 8]
    assert all(2 <= s.rounds <= 40 for s in specs)


@pytest.mark.parametrize(
    "text, match",
    [
        ("duration_s,gpus_wanted\n10,1\n", "missing column 'num_gpus'"),
        ("runtime,num_gpus\n10,1\nabc,2\n", r"line 3: column 'runtime'"),
        ("duration,num_gpus\n10,0\n", r"line 2: column 'num_gpus'"),
        ("duration,num_gpus\n10,1.5\n", r"line 2: column 'num_gpus': expected an integer"),
        ("duration,num_gpus\ninf,1\n", r"line 2: column 'duration': expected a finite number"),
        ("timestamp,duration,num_gpus\nnot-a-time,10,1\n", "line 2: column 'timestamp'"),
        ("", "not a readable CSV"),
    ],
)
def test_philly_errors(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(TraceError, match=match):
        load_philly_jobs(path)


def test_specs_without_timestamps_are_poisson(tmp_path):
    df = pd.DataFrame({"duration_s": np.geomspace(3600, 1e6, 20), "num_gpus": [1, 4] * 10})
    specs = philly_jobs_to_specs(df, 5, 10, mean_interarrival=10.0, mix=(0, 1, 0, 0))
    assert specs == philly_jobs_to_specs(df, 5, 10, mean_interarrival=10.0, mix=(0, 1, 0, 0))
    rel = [s.release for s in specs]
    assert rel[0] == 0 and rel == sorted(rel) and rel[-1] > 0
    assert {s.category for s in specs} == {"NLP"}
    with pytest.raises(ValueError, match="n_jobs"):
        philly_jobs_to_specs(df, 0, 21)
    with pytest.raises(TraceError, match="num_gpus"):
        philly_jobs_to_specs(df.drop(columns="num_gpus"), 0, 2)


# --- the shared reference data ---------------------------------------------------------


@pytest.mark.shared_data
def test_shared_gavel(shared_data):
    df = load_gavel_throughputs(shared_data / "gavel" / "simulation_throughputs.json")
    one = df[df.consolidated & (df.scale_factor == 1)]
    assert set(df.gpu_type) == {"k80", "p100", "v100"} and set(df.scale_factor) == {1, 2, 4, 8}
    assert one.groupby("gpu_type").size().to_dict() == {"k80": 26, "p100": 26, "v100": 26}
    thr = one.pivot_table(index="job_type", columns="gpu_type", values="throughput")
    ratio = thr.v100 / thr.k80
    # The README's summary of this file: V100/K80 median 4.05 over the 26 job types.
    assert ratio.median() == pytest.approx(4.05, abs=0.01)


@pytest.mark.shared_data
def test_shared_philly(shared_data, tmp_path):
    g = load_philly_jobs(shared_data / "traces" / "gavel_philly_job_distribution.csv")
    assert len(g) == 33192 and g.duration_s.min() >= 3600 and "submit_s" not in g
    s = load_philly_jobs(shared_data / "traces" / "sia_philly_jobs.csv.gz")
    assert len(s) == 82247 and s.submit_s.min() == 0 and s.num_gpus.max() == 128
    specs = philly_jobs_to_specs(s, 7, 30, time_scale=0.1)
    inst = build_instance(specs, TESTBED, name="philly-7")
    assert inst.num_jobs == 30 and inst.tasks_per_round.max() <= 8
    save_instance(inst, tmp_path / "p.json")
    assert load_instance(tmp_path / "p.json") == inst


@pytest.mark.shared_data
def test_committed_tables_match_derivation(shared_data):
    spec = importlib.util.spec_from_file_location(
        "derive_profiles", ROOT / "experiments" / "derive_profiles.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, text in mod.derive().items():
        assert (ROOT / "hare_opt" / "data" / name).read_text() == text, name
