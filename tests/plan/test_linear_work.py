"""Scanning work per fed character stays flat as the output grows: streaming and one-shot, on the bundled
templates and the unseen set (random realistic templates, rewrites of the bundled ones), counted by the
work meter (tests/support/work_meter.py, tests/support/linear_work.py), never timed.

A parser that keeps the stream, rescans held text or searches a growing buffer does about 4x the work per
character on an 8 KB output as on a 2 KB one (`GROWTH` allows 2x); a linear one does the same (or less:
fixed costs spread over more text). One-shot `parse_response` is compared on a longer output (32 KB against
512 KB: both past the sizes where long-buffer searches take over, so that a step there is not taken for
growth) and on more regions (a 4 KB output written 2 and 16 times over: a parse that searches the rest of
the text for every region grows with their number); a sample streams up to 1 MB. Every subject runs in
the slow lane; `FAST` ones in the fast lane too.

Every subject is linear. A construct found superlinear goes in `STREAMING_SUPERLINEAR` /
`LONG_ONE_SHOT_SUPERLINEAR` / `MANY_REGIONS_SUPERLINEAR` (`xfail(strict=True)`, the reason naming it) until it is
fixed, and shows up then as an unexpected pass.

`python -m tests.support.linear_work NAME ...` prints the figures and where the work goes.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.compiled import compiled_module
from tests.support.linear_work import (
    KB,
    MB,
    bundled_names,
    growth,
    metered,
    one_shot_work,
    random_names,
    rewrite_names,
    streaming_work,
    subject,
)

GROWTH = 2.0

# Why a subject's work grows today; the tables say which reason each subject fails for. Empty: every subject is
# linear (the lazy names after an optional prefix, `(?:\[TOOL_CALLS\])?(?P<name>[^\s\[\]]+?)\[ARGS\]`, the last
# to be, since the strategy that waits past a lazy run: tests/regex/test_lazy_runs.py).
STREAMING_SUPERLINEAR: dict[str, str] = {}
LONG_ONE_SHOT_SUPERLINEAR: dict[str, str] = {}
MANY_REGIONS_SUPERLINEAR: dict[str, str] = {}
# The fast lane: a literal and a regex bundled template, three rewrites (one a lazy name after an optional prefix),
# and random templates with lookahead and nullable closes, `$`/`\Z` closes and `|$` alternatives, leading and
# trailing `\s*`, start-anchored opens and case-insensitive flags. (Other lookahead opens, lazy names and
# back-references run in the slow lane.)
FAST = {
    *("qwen3", "deepseek_r1", "qwen3~edges", "qwen3~lookahead-open", "magistral~lazy-names"),
    *("random-007", "random-008", "random-024", "random-039"),
}
MEGABYTE_SAMPLE = ["qwen3", "gpt_oss", "deepseek_r1", "qwen3~edges", "random-000", "random-010", "random-061"]


def subjects(superlinear: dict[str, str]) -> list[Any]:
    names = [*bundled_names(), *rewrite_names(), *random_names()]
    params = []
    for name in names:
        marks: list[pytest.MarkDecorator] = [] if name in FAST else [pytest.mark.slow]
        if name in superlinear:
            marks.append(pytest.mark.xfail(strict=True, reason=superlinear[name]))
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def _why(name: str, work: object) -> str:
    return (
        f"{name}: busiest sites {getattr(work, 'busiest', ())}; constructs {getattr(subject(name), 'constructs', ())}"
    )


@pytest.mark.parametrize("name", subjects(STREAMING_SUPERLINEAR))
def test_streaming_work_per_character_stays_flat(name: str) -> None:
    small, big = streaming_work(name, 2 * KB), streaming_work(name, 8 * KB)
    assert growth(small, big) <= GROWTH, _why(name, big)


@pytest.mark.parametrize("name", subjects(LONG_ONE_SHOT_SUPERLINEAR))
def test_one_shot_work_per_character_stays_flat_on_a_longer_output(name: str) -> None:
    small, big = one_shot_work(name, 32 * KB), one_shot_work(name, 512 * KB)
    assert growth(small, big) <= GROWTH, _why(name, big)


@pytest.mark.parametrize("name", subjects(MANY_REGIONS_SUPERLINEAR))
def test_one_shot_work_per_character_stays_flat_with_more_regions(name: str) -> None:
    small, big = one_shot_work(name, 4 * KB, copies=2), one_shot_work(name, 4 * KB, copies=16)
    assert growth(small, big) <= GROWTH, _why(name, big)


@pytest.mark.slow
@pytest.mark.parametrize("name", MEGABYTE_SAMPLE)
def test_streaming_work_stays_flat_up_to_a_megabyte(name: str) -> None:
    small = streaming_work(name, 4 * KB)
    for size in (64 * KB, 1 * MB):
        big = streaming_work(name, size)
        assert growth(small, big) <= 1.5, _why(name, big)


@pytest.mark.parametrize("name", ["qwen3", "deepseek_r1~lazy-names", "random-000"])
def test_metering_leaves_what_the_module_does_alone(name: str) -> None:
    """The metered module streams the same events and message as the module itself."""
    s = subject(name)
    text = s.text(4 * KB)
    plain = compiled_module(s.template).ResponseParser(s.prefix, tools=s.tools)
    counted = metered(name)[0].ResponseParser(s.prefix, tools=s.tools)
    for at in range(0, len(text), 5):
        assert plain.feed(text[at : at + 5]) == counted.feed(text[at : at + 5])
    assert plain.finalize() == counted.finalize()
