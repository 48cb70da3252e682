"""What is derived from a template alone is worked out once and lives as long as the template
(`rtcompile.per_template`): compiling plans a template for the scanners and again for the grammar."""

from __future__ import annotations

import gc
import weakref

import rtcompile
from rtcompile.grammars.skeleton import grammar_skeleton
from rtcompile.plan import plan_parser
from tests.support.paths import TEMPLATES

QWEN3 = TEMPLATES / "qwen3.json"


def test_a_template_is_planned_once_whoever_asks() -> None:
    template = rtcompile.load_template(QWEN3)
    plan = plan_parser(template)
    rtcompile.compile_template(template)
    rtcompile.parse_response("<think>a</think>b", template, prefix="")
    assert plan_parser(template) is plan
    # Another load of the same file is another object: planned on its own, to an equal plan.
    other = rtcompile.load_template(QWEN3)
    assert other == template and plan_parser(other) is not plan
    assert plan_parser(other).states == plan.states


def test_what_is_derived_goes_with_its_template() -> None:
    template = rtcompile.load_template(QWEN3)
    plan_parser(template)
    grammar_skeleton(template)
    rtcompile.parse_response("text", template, prefix="")
    alive = weakref.ref(template)
    del template
    gc.collect()
    assert alive() is None  # a plan refers to its template: kept anywhere else, it would keep it alive


def test_derived_values_are_not_part_of_what_a_template_is() -> None:
    fresh, used = rtcompile.load_template(QWEN3), rtcompile.load_template(QWEN3)
    plan_parser(used)
    assert used.derived and not fresh.derived
    assert used == fresh and repr(used) == repr(fresh)
