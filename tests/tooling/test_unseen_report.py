"""How the benchmark judges issue 19's targets on the unseen set (benchmarks/unseen_report.py) where a
figure is missing: a stream that raises (as transformers' does) has no growth figure and does not count,
one stopped for growing too fast does; a one-shot size at which only transformers was stopped (it grew
too fast) is judged by a lower bound, one at which compiled was not run is missed."""

from __future__ import annotations

from typing import Any

from benchmarks.unseen_report import unseen_targets

KB, MB = 1024, 1024 * 1024
NAN = float("nan")


def _row(growth: dict[int, float], stopped: dict[int, float], oneshot: dict[int, dict[str, float]]) -> dict[str, Any]:
    stream = {"compiled": 0.3, "transformers": 2.0, "bound": 0.2}
    return {"stream": stream, "growth": growth, "stopped": stopped, "oneshot": oneshot, "constructs": [], "notes": []}


def _judged(rows: dict[str, dict[str, Any]]) -> dict[str, tuple[bool, str]]:
    unseen = {"rows": rows, "sizes": [MB, 4 * MB], "oneshot_sizes": [4 * KB, 4 * MB]}
    return {t.name: (t.met, t.missed_by) for t in unseen_targets(unseen)}


def _growth_target(size: str) -> str:
    return f"Unseen templates: compiled per-chunk cost at {size} within 1.3x of 4 KB, every template"


ONE_SHOT_4MB = "Unseen templates, one-shot `parse_response` 4 MB: every template at least as fast as transformers"
FLAT = {MB: 1.0, 4 * MB: 1.0}
LINEAR = {4 * KB: {"compiled": 0.1, "transformers": 0.3}, 4 * MB: {"compiled": 90.0, "transformers": 300.0}}


def test_a_stream_that_raises_has_no_growth_figure_and_a_stopped_one_misses() -> None:
    rows = {"a": _row({MB: 1.0, 4 * MB: 1.1}, {}, LINEAR), "raises": _row({MB: NAN, 4 * MB: NAN}, {}, LINEAR)}
    judged = _judged(rows)
    assert judged[_growth_target("1 MB")] == (True, "")
    rows["stopped"] = _row({MB: 9.0}, {MB: 0.2}, LINEAR)
    judged = _judged(rows)
    assert judged[_growth_target("1 MB")] == (False, "1 over")
    assert judged[_growth_target("4 MB")] == (False, "1 stopped at a smaller size")


def test_a_one_shot_size_transformers_did_not_reach_is_judged_by_its_time_at_a_smaller_one() -> None:
    quadratic = {4 * KB: {"compiled": 0.1, "transformers": 50.0}, 4 * MB: {"compiled": 40.0}}
    assert _judged({"a": _row(FLAT, {}, LINEAR), "tf slow": _row(FLAT, {}, quadratic)})[ONE_SHOT_4MB] == (True, "")
    # Compiled's time above transformers' at the smaller size: no bound shows it faster.
    slower = {4 * KB: {"compiled": 0.1, "transformers": 50.0}, 4 * MB: {"compiled": 100.0}}
    met, missed = _judged({"a": _row(FLAT, {}, LINEAR), "unknown": _row(FLAT, {}, slower)})[ONE_SHOT_4MB]
    assert (met, missed) == (False, "2.00x short")
    # Compiled not run at that size: missed, and said so.
    gone = {4 * KB: {"compiled": 0.1, "transformers": 0.3}}
    assert _judged({"a": _row(FLAT, {}, LINEAR), "gone": _row(FLAT, {}, gone)})[ONE_SHOT_4MB] == (False, "1 not run")
