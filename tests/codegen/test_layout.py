"""Generated modules are laid out exactly as `ruff format` lays them out with its default settings,
are left unchanged by black, and pass `ruff check --select E,W,F,I` (ruff's defaults plus line
length, whitespace and import order), though no formatter runs when they are generated.

ruff and black are the pinned ones of the test extra; ruff runs in a subprocess with `--isolated` (no
configuration file is read: its defaults, 88 columns), black with its defaults (also 88 columns).
The layout rules themselves (`rtcompile.backends.codegen.layout`) are checked on random statements
of every shape the generator writes; whole modules, on the bundled templates and on random templates.
"""

from __future__ import annotations

import ast
import difflib
import subprocess
import sys
import unicodedata
from typing import Any

import black
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.backends.codegen.layout import LINE_LENGTH, import_lines, lay_out, split_string, string_literal, width
from rtcompile.backends.codegen.writer import literal
from tests.support.lanes import examples
from tests.support.paths import ROOT
from tests.support.strategies import templates

RUFF = [sys.executable, "-m", "ruff"]
# ruff's default rules (E4, E7, E9, F) and the line length, whitespace and import order on top
LINT_RULES = ["--select", "E,W,F,I"]


def ruff_format(code: str) -> str:
    done = subprocess.run(
        [*RUFF, "format", "--isolated", "--stdin-filename", "module.py", "-"],
        input=code,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def ruff_check(code: str) -> str:
    """ruff's findings on `code` under `LINT_RULES` ("" if there are none)."""
    done = subprocess.run(
        [*RUFF, "check", "--isolated", *LINT_RULES, "--output-format", "concise", "--stdin-filename", "module.py", "-"],
        input=code,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    return "" if done.returncode == 0 else done.stdout + done.stderr


def assert_formatted(code: str) -> None:
    formatted = ruff_format(code)
    if formatted != code:
        diff = "\n".join(difflib.unified_diff(code.splitlines(), formatted.splitlines(), "ours", "ruff", lineterm=""))
        raise AssertionError(f"ruff lays this out differently:\n{diff[:6000]}")


def assert_black_keeps(code: str) -> None:
    formatted = black.format_str(code, mode=black.Mode())
    if formatted != code:
        diff = "\n".join(difflib.unified_diff(code.splitlines(), formatted.splitlines(), "ours", "black", lineterm=""))
        raise AssertionError(f"black lays this out differently:\n{diff[:6000]}")


def test_the_bundled_modules_pass_ruff_and_black_with_their_default_settings() -> None:
    modules = sorted((ROOT / "generated").glob("*_parser.py"))
    assert len(modules) == len(list((ROOT / "templates").glob("*.json")))  # one module per bundled template
    paths = [str(module) for module in modules]
    formatted = subprocess.run([*RUFF, "format", "--isolated", "--check", *paths], capture_output=True, text=True)
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    checked = subprocess.run([*RUFF, "check", "--isolated", *LINT_RULES, *paths], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # ruff takes a second for all of them, black about 1 s of CPU a module without its cache: here black
    # checks the largest (the generator's layout at its longest); `.ci/run` runs `black --check generated`
    # on all of them after the suite, as the README's lint commands do, so CI pays for that once.
    largest = str(max(modules, key=lambda module: module.stat().st_size))
    blacked = subprocess.run([sys.executable, "-m", "black", "--check", largest], capture_output=True, text=True)
    assert blacked.returncode == 0, blacked.stdout + blacked.stderr


@pytest.mark.slow  # a compile in a subprocess
def test_compiling_imports_no_formatter() -> None:
    code = (
        "import sys, rtcompile\n"
        "rtcompile.compile_template('qwen3')\n"
        "print(sorted(m for m in ('black', 'ruff', 'yapf', 'autopep8') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# -- statements of the shapes the generator writes -------------------------------------------------

# Text for string values: quotes of both kinds, backslashes, control and separator characters, and
# characters two columns wide (CJK, full-width forms, the DeepSeek delimiters' ▁ and ｜) or none
# (combining marks), so that quoting and column counting are both exercised.
_CHARACTERS = st.sampled_from([*"ab <>|_/{}[](),:=#'\"\\\n\t\x1b\u2028 ｜▁思考工具調用é\u0301😀", "xyz", "tool_call"])
_TEXT = st.lists(_CHARACTERS, max_size=14).map("".join)
# A string too long for any line (a pattern in TEMPLATE), written as consecutive literals.
_LONG_TEXT = st.lists(_CHARACTERS, min_size=40, max_size=120).map("".join)
_SCALARS = st.one_of(
    _TEXT,
    _LONG_TEXT,
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(_TEXT, inner, max_size=5),
    ),
    max_leaves=40,
)
_NAMES = st.sampled_from(["x", "_OUTSIDE_LITERAL_WATCHES", "content", "TEMPLATE", "_RE_IN_TOOL_CALLS_PENDING"])


@st.composite
def statements(draw: st.DrawFn, *, headers: bool = True) -> str:
    """One statement, on one line, as the generator writes it before layout (with `headers`, also
    the header of an `if` block, which ends in ':')."""
    value = literal(draw(_VALUES))
    other = literal(draw(_VALUES))
    name = draw(_NAMES)
    shape = draw(st.integers(0, 11 if headers else 8))
    if shape == 11:
        return f"if not eos and {name}.search({value}, {other}):"
    if shape == 9:
        return f"if self._fast and self._state == {len(value)} and not {name}.search({other}):"
    if shape == 10:
        return f"while not {name} or self._run_pending or not {name}.search(self._buffer, {value}):"
    if shape == 0:
        return f"{name} = {value}"
    if shape == 1:
        return f"{name}: Final = {value}"
    if shape == 2:
        return f"return {value}"
    if shape == 3:
        return f"{name} = parse_json(body, unquoted_keys={value}, strip={other})"
    if shape == 4:
        return f"{name} = re.compile({value}, re.DOTALL)"
    if shape == 5:
        return f'out.append({{"type": "function", "function": {value}, "id": {other}}})'
    if shape == 6:
        return f"{name} = find(buf, {value}, pos) if n - pos < LONG_SCAN else scan(buf, {other}, pos)"
    if shape == 7:
        return f"return {value} if eos else {other}"
    return f"return build_value({value})"


def _module_of(statements_at_depths: list[tuple[int, str]]) -> str:
    """The statements laid out, each in a function of its own at its depth (so that each is valid)."""
    blocks = []
    for number, (depth, statement) in enumerate(statements_at_depths):
        lines = [f"def f{number}():"] + [f"{'    ' * d}if x:" for d in range(1, depth)]
        lines += lay_out("    " * depth + statement)
        if statement.endswith(":"):
            lines.append("    " * (depth + 1) + "pass")
        blocks.append("\n".join(lines))
    return "\n\n\n".join(blocks) + "\n"


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(1, 4), statements()), min_size=1, max_size=25))
def test_statements_are_laid_out_as_ruff_and_black_lay_them_out(batch: list[tuple[int, str]]) -> None:
    module = _module_of(batch)
    assert_formatted(module)
    # Deliberately ignored for black: modules holding combining marks. black counts a combining
    # mark one column wide, ruff none, so a line that holds one and ends near column 88 fits for
    # one formatter and not the other, and no layout satisfies both; the layout follows ruff.
    if not any(unicodedata.combining(char) for char in module):
        assert_black_keeps(module)


def test_a_trailing_comment_that_does_not_fit_goes_above_its_statement() -> None:
    """A random template's module had `self._buffer = text[-1:]  # the committed character...` four
    levels deep, 89 columns: ruff and black split the subscript around the comment. The comment goes
    on a line of its own (a `#` inside a string is not one), whatever the statement."""
    statements = [
        (4, "self._buffer = text[-1:]  # the committed character a delimiter may look back at"),
        (3, "best = min(best, start, hold, pending_start, other)  # a pending delimiter starts no later"),
        (2, 'x = f(a, "b # c", d)  # ' + "a comment longer than anything that could fit on the line " * 2),
        (1, 'return "# not a comment, and the line fits"'),
    ]
    module = _module_of(statements)
    assert "    # the committed character a delimiter may look back at\n" in module
    assert_formatted(module)
    assert_black_keeps(module)


def test_big_and_deep_values_are_laid_out_as_ruff_lays_them_out() -> None:
    big = {f"key {i}": [f"<t{i}>", i, {"nested": (i, None, f"</t{i}>")}] for i in range(3000)}
    deep: Any = "leaf"
    for level in range(15):
        deep = {f"level {level}": [deep, level]}
    assert_formatted(_module_of([(1, f"x = {literal(big)}"), (2, f"return {literal(deep)}")]))


@settings(max_examples=examples(100), deadline=None)
@given(_TEXT)
def test_string_literals_are_in_ruffs_quotes_and_mean_the_text(text: str) -> None:
    source = string_literal(text)
    assert eval(source) == text  # noqa: S307 - a literal we just built
    assert ruff_format(f"x = {source}\n") == f"x = {source}\n" or width(f"x = {source}") > LINE_LENGTH


def test_imports_too_long_for_a_line_get_parentheses() -> None:
    names = ["Any", "Final", "Literal", "NoReturn", "TypeAlias", "TypedDict", "cast", "overload", "Iterable"]
    code = "\n".join(["if x:", *import_lines("    ", "typing", names)]) + "\n"
    assert_formatted(code)
    assert import_lines("", "re", ["Match"]) == ["from re import Match"]


def test_a_long_string_value_goes_in_parentheses_when_that_makes_it_fit() -> None:
    fits = "x" * 70
    assert lay_out(f'TEMPLATE_SHA256: Final = "{fits}"') == ["TEMPLATE_SHA256: Final = (", f'    "{fits}"', ")"]
    too_long = "x" * 100
    assert lay_out(f'X: Final = "{too_long}"') == ["X: Final = (", f'    "{"x" * 82}"', f'    "{"x" * 18}"', ")"]


def test_a_string_too_long_for_any_line_is_written_in_pieces() -> None:
    pattern = string_literal("<tool_call>" * 10)
    pieces = [
        '"<tool_call><tool_call><tool_call><tool_call><tool_call><tool_call><tool_ca"',
        '"ll><tool_call><tool_call><tool_call>"',
    ]
    assert lay_out(f'x = {{"fields": {{"open": {pattern}, "n": 1}}}}') == [
        "x = {",
        '    "fields": {',
        '        "open": (',
        *(f"            {piece}" for piece in pieces),
        "        ),",
        '        "n": 1,',
        "    }",
        "}",
    ]
    assert lay_out(f"    f(1, tag_pattern={pattern})") == [
        "    f(",
        "        1,",
        "        tag_pattern=(",
        *(f"            {piece}" for piece in pieces),
        "        ),",
        "    )",
    ]
    assert lay_out(f"{' ' * 20}frozenset({pattern})") == [
        f"{' ' * 20}frozenset(",
        f"{' ' * 24}(",
        *(f"{' ' * 28}{piece}" for piece in split_pieces(pattern, 28)),
        f"{' ' * 24})",
        f"{' ' * 20})",
    ]


def split_pieces(pattern: str, indent: int) -> list[str]:
    return split_string(eval(pattern), LINE_LENGTH - indent + 1)  # noqa: S307 - a literal we just built


# -- whole modules ---------------------------------------------------------------------------------


@pytest.mark.slow
@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(templates(compilable=True))
def test_modules_of_random_templates_pass_ruff_with_its_default_settings(template: dict[str, Any]) -> None:
    try:
        code = rtcompile.compile_template(template)
    except rtcompile.TemplateError:
        return  # refused with a message (the differential suites check when that may happen)
    assert_formatted(code)
    assert ruff_check(code) == ""


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(templates(compilable=True))
def test_black_leaves_modules_of_random_templates_unchanged(template: dict[str, Any]) -> None:
    try:
        code = rtcompile.compile_template(template)
    except rtcompile.TemplateError:
        return  # refused with a message (the differential suites check when that may happen)
    assert_black_keeps(code)


def expression_of(statement: str) -> str:
    """The expression a statement computes (the value assigned or returned, or the expression itself),
    as written: read from the parsed statement, since the text may hold " = " inside a string."""
    node = ast.parse(statement).body[0]
    assert isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr)) and node.value is not None
    expression = ast.get_source_segment(statement, node.value)
    assert expression is not None
    return expression


@settings(max_examples=examples(200), deadline=None)
@given(statements(headers=False), st.sampled_from(["{}", "({}) < 0", "if ({}) < 0: pass", "f(({}))"]))
# A string value holding " = " (found by Hypothesis): splitting the text at " = " cut the literal in two.
@example('return " = "', "({}) < 0")
@example('out.append({"type": "function", "function": "a = b", "id": None})', "f(({}))")
def test_layout_never_changes_what_the_code_means(statement: str, shape: str) -> None:
    """Whatever the line, the laid-out code parses to the same tree (no comma added to a
    parenthesised expression, none lost from a one-member tuple)."""
    line = "    " + (statement if shape == "{}" else shape.format(expression_of(statement)))
    laid_out = "\n".join(lay_out(line))
    assert ast.dump(ast.parse(f"if x:\n{laid_out}\n")) == ast.dump(ast.parse(f"if x:\n{line}\n"))


# A state's fast-path test too long for a line: its first test, then `busy = busy or ...` for the end
# of a `$` and for each literal a lookbehind needs (`fast_path._any_of`); a lookbehind on a literal too
# long to test on a line makes the state scan every chunk.
LONG_BUSY_TESTS = {
    "second look, then a final newline": {
        "fields": {
            "content": {"open_pattern": "<b\\s*>", "content": "text"},
            "reasoning_content": {"open_pattern": "<b\\s*>", "content": "text"},
            "tool_calls": {"open_pattern": "\\[C\\]\\s*", "content": "text"},
            "x": {"close_pattern": "</f>|$", "content": "text"},
        },
        "start_anchor_pattern": "<\\|im_start\\|>assistant\\s*",
    },
    "second look, then a lookbehind": {
        "fields": {
            "content": {"open_pattern": "<(?:b|tool)\\s*>", "content": "text"},
            "tool_calls": {"open_pattern": "<tool>", "close_pattern": "</t>|(?<=</function>)\\s*(?:</tool>)"},
        },
        "start_anchor": "<|im_start|>assistant",
    },
    "a lookbehind too long to test on a line": {
        "fields": {
            "tool_calls": {
                "open_pattern": "<tool>",
                "close_pattern": "(?<=</a_closing_tag_much_longer_than_any_real_model_writes_at_the_end>)\\s*</tool>",
            },
        },
        "start_anchor": "<|im_start|>assistant",
    },
}


@pytest.mark.parametrize("name", LONG_BUSY_TESTS)
def test_fast_path_tests_too_long_for_a_line_are_laid_out_as_ruff_and_black_lay_them_out(name: str) -> None:
    code = rtcompile.compile_template(LONG_BUSY_TESTS[name])
    assert_formatted(code)
    assert ruff_check(code) == ""
    assert_black_keeps(code)
