"""How thorough this run is: the full suite (CI), or the fast lane (`pytest -m "not slow"`).

The fast lane runs every test that is not marked slow, and every property-based test with a tenth of
its examples (at least 10): the same checks, each less exhaustive, so that the lane stays within its
budget (README: "The test suite"). A full run, and CI, draw every example. tests/conftest.py decides
which lane this is from the `-m` expression before any test module is imported.
"""

from __future__ import annotations

FULL = True  # set by tests/conftest.py


def examples(full: int) -> int:
    """How many Hypothesis examples a property draws: `full` in a full run, a tenth (at least 10, never
    more than `full`) in the fast lane."""
    return full if FULL else min(full, max(10, full // 10))


def pick(full: int, fast: int) -> int:
    """A size for a test's own loop (patterns drawn, texts enumerated up to a length): `full` in a full run,
    `fast` in the fast lane."""
    return full if FULL else fast
