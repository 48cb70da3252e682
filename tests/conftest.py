"""Suite-wide rules: hypothesis profiles, and no skipped tests (the oracle must always run)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# CI runs the same examples every time (so a red run is reproducible); locally, fresh ones each run.
settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


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
