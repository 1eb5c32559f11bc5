"""Shared test set-up: hypothesis profiles, registry-driven parametrisation, shared-data paths.

Tests that take ``exact_solver`` run once per registered exact solver, and the
simulator tests run once per registered policy: a solver or policy registered before
collection (in the package, or by a plugin: ``pytest -p my_plugin``) is cross-checked
with no test edit (tests/test_registries.py shows it).

Hypothesis profiles (choose with HYPOTHESIS_PROFILE or --hypothesis-profile):
* ``ci`` (default, and always under CI=true): derandomised, bounded examples,
  no deadline: the same inputs every run, so CI is never flaky.
* ``dev``: more examples, still derandomised.
* ``hunt``: many random examples for local bug and worst-case hunting, e.g.
  ``HYPOTHESIS_PROFILE=hunt pytest -m "not slow" tests/test_bounds.py``.

Slow or exhaustive tests carry ``@pytest.mark.slow``. By default a bounded,
deterministic sample of them runs (``--slow-sample N``, default from the
SLOW_SAMPLE variable, else 2): the same ones every run, chosen by a hash of
their id. ``--slow-sample all`` (or ``-m slow``) runs every one of them.
"""

from __future__ import annotations

import hashlib
import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from hare_opt.solvers import solver_names

# The signal tests send Ctrl-C to commands as a terminal would, where SIGINT is not
# ignored. A test run started in the background of a non-interactive shell (``cmd &``)
# inherits SIGINT ignored, and so would every command it starts (an ignored signal
# survives exec; a handler does not): a Ctrl-C early in start-up was then ignored and
# the command ran on. With a handler here, commands start with SIGINT at its default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=25,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    derandomize=True,
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "hunt", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = ROOT / "instances"
SHARED_DATA = ROOT.parent / "shared" / "data"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--solvers",
        default=None,
        help="comma-separated exact solvers to parametrise over (default: every "
        "registered exact solver)",
    )
    parser.addoption(
        "--slow-sample",
        default=os.environ.get("SLOW_SAMPLE", "2"),
        help="how many @slow tests to run (a fixed sample), or 'all'",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    sample = config.getoption("--slow-sample")
    if sample == "all" or "slow" in (config.getoption("-m") or ""):
        return
    slow = [it for it in items if it.get_closest_marker("slow")]
    keep = {
        it.nodeid
        for it in sorted(slow, key=lambda it: hashlib.sha1(it.nodeid.encode()).hexdigest())[
            : int(sample)
        ]
    }
    dropped = [it for it in slow if it.nodeid not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [it for it in items if it not in dropped]
        config._slow_dropped = len(dropped)  # type: ignore[attr-defined]


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001
    n = getattr(config, "_slow_dropped", 0)
    if n:
        terminalreporter.write_line(
            f"{n} @slow test(s) not in the bounded sample; run them with --slow-sample all"
        )


def exact_solvers(config: pytest.Config) -> list[str]:
    """The ``--solvers`` list, else every exact solver registered at collection time."""
    chosen = config.getoption("--solvers")
    if chosen is None:
        return solver_names("exact")
    return [s for s in chosen.split(",") if s]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # PyJobShop's pattern: every test that takes `exact_solver` runs once per backend,
    # so a new backend is cross-checked by the same tests.
    if "exact_solver" in metafunc.fixturenames:
        metafunc.parametrize("exact_solver", exact_solvers(metafunc.config))


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (reference data is optional)")
    return SHARED_DATA
