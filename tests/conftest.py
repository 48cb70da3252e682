"""Suite-wide rules: hypothesis profiles, the lane (full or fast), and no skipped tests (the oracle must always run)."""

from __future__ import annotations

import gc
import os
import shutil
import sys
import tempfile
import warnings

import pytest
from hypothesis import HealthCheck, settings

from rtcompile.backends.codegen.runtime_index import CACHE_ENV
from tests.support import compiled, lanes

# CI runs the same examples every time, so a red run is reproducible and a green one stays green:
# derandomized (examples drawn from a fixed seed) and no example database (a failure found in one
# checkout is not replayed in the next run; the tests that found one keep it as an @example).
# Locally, fresh examples each run, and the database replays the last failures first.
# `.ci/run` selects the CI profile explicitly (--hypothesis-profile=ci); elsewhere a CI environment
# variable (set by GitHub Actions, GitLab CI and most others) does.
settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


# The run's own cache of what the lifter reads of the runtime (rtcompile/backends/codegen/runtime_index.py):
# shared by the workers and by the `rtcompile` processes tests start (they inherit the environment), and
# never the user's. Made by the process that starts the run, which removes it at the end.
_RUN_CACHE: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    # The fast lane leaves out the slow tests and draws fewer Hypothesis examples (tests/support/lanes.py).
    lanes.FULL = "not slow" not in (config.getoption("markexpr") or "")
    global _RUN_CACHE
    if CACHE_ENV not in os.environ:
        _RUN_CACHE = os.environ[CACHE_ENV] = tempfile.mkdtemp(prefix="rtcompile-test-cache-")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _RUN_CACHE is not None:
        shutil.rmtree(_RUN_CACHE, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # A run keeps many thousands of objects alive (collected tests and their parameters, transformers,
    # compiled modules), and every full collection of the cyclic garbage collector scanned them all again:
    # a property test late in a run took ten times its CPU time alone. Collect what the last test left,
    # and move what survives out of the collector's way (gc.freeze) before each test.
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session", autouse=True)
def _workers_share_compiled_templates(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Under pytest-xdist, the workers of a run share their compiled bundled templates through a directory
    beside their own temporary directories (tests/support/compiled.py)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # set in each worker (gw0, gw1...), not in a run without them
        shared = tmp_path_factory.getbasetemp().parent / "compiled-bundled-templates"
        shared.mkdir(exist_ok=True)
        compiled.SHARED = shared


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:  # only without the terminal (-p no:terminal): then nothing counts the skips
        return
    skipped = reporter.stats.get("skipped", [])
    if skipped and exitstatus == 0:
        reporter.write_line(
            f"{len(skipped)} test(s) skipped: this suite allows none (is transformers installed?)", red=True
        )
        session.exitstatus = 1


@pytest.hookimpl(tryfirst=True)
def pytest_warning_recorded(warning_message: warnings.WarningMessage) -> None:
    # A generated module defines its own warning class (StartAnchorWarning), and tests import modules
    # under made-up names from temporary directories. pytest-xdist sends a warning to the controller
    # as its class's module and name, and the controller cannot import such a module (an internal
    # error that stops the run): the warning goes on as the nearest base class anyone can import.
    category = warning_message.category
    if not _importable(category):
        stand_in = next(base for base in category.__mro__ if _importable(base))
        warning_message.category = stand_in
        if isinstance(warning_message.message, Warning):
            warning_message.message = stand_in(*warning_message.message.args)


def _importable(cls: type) -> bool:
    """Whether another process could import the module defining `cls` (asked of the import system's
    finders, not of `sys.modules`, where the tests' generated modules are too)."""
    top = cls.__module__.split(".")[0]
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is not None and find_spec(top, None) is not None:
            return True
    return False
