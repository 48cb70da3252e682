"""Generated modules carry only what they run: no function, method or table that nothing calls.

Lifting follows names (and, in classes, the methods something calls), so a runtime helper a template
does not need stays out of its module; `tests/support/reachability.py` checks the result independently, with
a call graph read off the generated source.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings

import rtcompile
from tests.support.paths import GENERATED
from tests.support.reachability import unreached
from tests.support.strategies import templates


@pytest.mark.parametrize("module", sorted(p.name for p in GENERATED.glob("*_parser.py")))
def test_every_definition_of_a_bundled_module_is_reached(module: str) -> None:
    assert unreached((GENERATED / module).read_text(encoding="utf-8")) == []


@pytest.mark.slow
@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(templates(compilable=True))
@example(  # a module that waits: the engine's own `_start_waiting` was overridden, never run
    {
        "start_anchor_pattern": r"<\|im_start\|>assistant\s*",
        "fields": {"reasoning": {"open_pattern": r"(?=[\s\S]*?</think>)", "close": "</think>"}, "content": {}},
    }
)
def test_every_definition_of_a_random_templates_module_is_reached(template: dict[str, Any]) -> None:
    assert unreached(rtcompile.compile_template(template)) == []


def test_the_call_graph_finds_what_nothing_runs() -> None:
    code = """
__all__ = ["Parser", "run"]
LIMIT = 3
_UNUSED_TABLE = {"a": 1}


class Base:
    def feed(self, text):  # every concrete class overrides it, and nothing calls it
        return self._scan(text)

    def _scan(self, text):
        return text

    def _never(self):
        return 0


class Parser(Base):
    def feed(self, text):
        return Base._scan(self, text) + _helper()


def _helper():
    return ""


def _orphan():
    return LIMIT


def run():
    return Parser().feed("x")
"""
    assert unreached(code) == ["Base._never", "Base.feed", "_UNUSED_TABLE", "_orphan"]
