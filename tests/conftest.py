"""Shared test set-up: hypothesis profiles, the solver fixture, shared-data paths.

Hypothesis profiles (choose with HYPOTHESIS_PROFILE or --hypothesis-profile):
* ``ci`` (default, and always under CI=true): derandomised, bounded examples,
  no deadline: the same inputs every run, so CI is never flaky.
* ``dev``: more examples, still derandomised.
* ``hunt``: many random examples for local bug and worst-case hunting, e.g.
  ``HYPOTHESIS_PROFILE=hunt pytest -m "not slow" tests/test_bounds.py``.

Slow or exhaustive tests carry ``@pytest.mark.slow``; CI runs them only on a
bounded sample (``--slow-sample``, default from SLOW_SAMPLE or 1 in CI).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, max_examples=25, deadline=None,
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", derandomize=True, max_examples=100, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("hunt", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = ROOT / "instances"
SHARED_DATA = ROOT.parent / "shared" / "data"

EXACT = ("cpsat", "milp")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--solvers", default=",".join(EXACT),
                     help="comma-separated exact solvers to parametrise over (default: all)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # PyJobShop's pattern: every test that takes `exact_solver` runs once per backend,
    # so a new backend is cross-checked by the same tests.
    if "exact_solver" in metafunc.fixturenames:
        names = [s for s in metafunc.config.getoption("--solvers").split(",") if s]
        metafunc.parametrize("exact_solver", names)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (reference data is optional)")
    return SHARED_DATA
