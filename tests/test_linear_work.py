"""Scanning work per fed character stays flat as the output grows: streaming and one-shot, on the bundled
templates and the unseen set (random realistic templates, rewrites of the bundled ones), counted by the
work meter (tests/work_meter.py, tests/linear_work.py), never timed.

A parser that keeps the stream, rescans held text or searches a growing buffer does about 4x the work per
character on an 8 KB output as on a 2 KB one (`GROWTH` allows 2x); a linear one does the same (or less:
fixed costs spread over more text). One-shot `parse_response` is compared between 4 KB and 256 KB, and a
sample streams up to 1 MB. Every subject runs in the slow lane; `FAST` in the fast lane too.

Issue 19 makes every template linear; until then, the subjects superlinear today are expected to fail
(`xfail(strict=True)`, the reason naming the construct), so that each one shows up as an unexpected pass
when it is fixed: then take it out of `STREAMING_SUPERLINEAR` / `ONE_SHOT_SUPERLINEAR`.
`python -m tests.linear_work NAME ...` prints the figures and where the work goes.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.compiled import compiled_module
from tests.linear_work import (
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

# Why a subject's work grows today (issue 19's classes); the tables below name one per subject.
KEEPS_STREAM = (
    "a delimiter rtcompile cannot bound the lookbehind of ({}): the engine keeps the whole stream, "
    "`self._buffer += text` copies it on every feed"
)
LOOKAHEAD_OPEN = "a `(?=[\\s\\S]*?LIT)` open: all text after it is held and rescanned on every feed until LIT comes"

STREAMING_SUPERLINEAR: dict[str, str] = {}
ONE_SHOT_SUPERLINEAR: dict[str, str] = {}
FAST: set[str] = set()
MEGABYTE_SAMPLE: list[str] = []


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


@pytest.mark.parametrize("name", subjects(ONE_SHOT_SUPERLINEAR))
def test_one_shot_work_per_character_stays_flat(name: str) -> None:
    small, big = one_shot_work(name, 4 * KB), one_shot_work(name, 256 * KB)
    assert growth(small, big) <= GROWTH, _why(name, big)


@pytest.mark.slow
@pytest.mark.parametrize("name", MEGABYTE_SAMPLE)
def test_streaming_work_stays_flat_up_to_a_megabyte(name: str) -> None:
    small = streaming_work(name, 4 * KB)
    for size in (64 * KB, 1 * MB):
        big = streaming_work(name, size)
        assert growth(small, big) <= 1.5, _why(name, big)


@pytest.mark.parametrize("name", ["qwen3", "gpt_oss~lazy-names", "random-000"])
def test_metering_leaves_what_the_module_does_alone(name: str) -> None:
    """The metered module streams the same events and message as the module itself."""
    s = subject(name)
    text = s.text(4 * KB)
    plain = compiled_module(s.template).ResponseParser(s.prefix, tools=s.tools)
    counted = metered(name)[0].ResponseParser(s.prefix, tools=s.tools)
    for at in range(0, len(text), 5):
        assert plain.feed(text[at : at + 5]) == counted.feed(text[at : at + 5])
    assert plain.finalize() == counted.finalize()
