"""The generated module's docstring: what this model writes, as the template reads it, and how to use it.

A reader who opens a vendored parser should learn the format from its first screen: which field
each delimiter opens, what each region's content is parsed as, what the prompt pre-writes. Template
text appears as JSON (`quoted`: ASCII only, so it can neither end the docstring nor forge a line,
and its width is its length); a value too long to read there is named by where it is in
`TEMPLATE` instead.
"""

from __future__ import annotations

import json
import textwrap

from rtcompile.backends.codegen.layout import LINE_LENGTH
from rtcompile.backends.codegen.options import ModuleOptions
from rtcompile.backends.codegen.parts import RegexFallback
from rtcompile.errors import JsonPath, format_path
from rtcompile.ir import Delimiter, Field, Template

# What a region's content becomes, by content parser.
_CONTENT = {
    "text": "text",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
    "json": "JSON",
    "xml-inline": "XML-like tags, one value per tag",
    "kv-lines": "key-value lines",
    "python-call-list": "a list of Python calls",
}


# Quoted template values longer than this are named by their place in TEMPLATE instead.
MAX_QUOTED = 60


def quoted(value: object) -> str:
    """A template value as a docstring shows it: its JSON in ASCII (line breaks, control characters,
    quotes and non-ASCII characters escaped), backslashes doubled so that the docstring's text is that
    JSON. Its raw quotes are JSON's own, never three in a row (`module_docstring` checks the whole)."""
    return _in_docstring(json.dumps(value, ensure_ascii=True, default=repr))


def escaped_name(text: str) -> str:
    """A file name as printable ASCII, as the header comment shows it: control characters, line breaks
    (U+2028, U+0085 among them), quotes and backslashes become JSON escapes. (The docstring gets it
    with backslashes doubled, so that what `help()` prints shows the escapes the header shows.)"""
    return json.dumps(text, ensure_ascii=True)[1:-1]


def _place(where: JsonPath) -> str:
    """A JSON path as a docstring shows it: `format_path`'s text, JSON-escaped (field names are template
    text), so that the docstring holds no raw quote of it."""
    return _in_docstring(escaped_name(format_path(where)))


def _in_docstring(escaped: str) -> str:
    """Escaped text with its backslashes doubled: the docstring's value shows the escapes."""
    return escaped.replace("\\", "\\\\")


def _quoted_or_place(value: object, where: JsonPath) -> str:
    text = quoted(value)
    return text if len(text) <= MAX_QUOTED else f"the value at {_place(where)}"


def module_docstring(
    template: Template, source_name: str, options: ModuleOptions, fallbacks: list[RegexFallback]
) -> str:
    """The docstring's text, without its quotes (every line within `LINE_LENGTH` columns)."""
    paragraphs = [
        f"Response parser compiled by rtcompile from {_in_docstring(escaped_name(source_name))}.",
        "What the model writes, as the template reads it:",
        "\n".join(_field_line(f) for f in template.fields),
        _prompt_paragraph(template),
        "Use `parse_response(text, prefix=prompt)` for a complete output, or `ResponseParser(prefix=prompt)` "
        "and its `feed()` / `finalize()` for a stream. Behaves exactly like transformers' `parse_response` / "
        "`ResponseParser` for the template in `TEMPLATE`. Beyond the reference, each off unless asked for: "
        "`ResponseParser(..., captures=, spans=, recover=)`"
        + (
            ", `to_openai(message)` and `DeltaStream(OPENAI_ROLES)` for OpenAI-compatible messages and "
            "chat-completion deltas."
            if options.openai
            else "."
        ),
    ]
    if fallbacks:
        paragraphs.append(
            "Needs the third-party `regex` module (see `REQUIRES`): no exact standard-library translation is "
            "known for these patterns, which are matched with `regex` exactly as the reference matches them:"
        )
        paragraphs.append("\n".join(f"* {quoted(f'{format_path(f.where)}: {f.construct}')[1:-1]}" for f in fallbacks))
    if not options.function_tools:
        paragraphs.append(
            "Compiled with --no-function-tools (see `FUNCTION_TOOLS`): `tools` takes JSON schemas (dicts) only, "
            "and a Python function in it raises TypeError. Recompile without that option to accept functions as "
            "the reference does (converted to JSON schemas like transformers' `get_json_schema`)."
        )
    if not options.openai:
        paragraphs.append(
            "Compiled with --no-openai (see `OPENAI`): the OpenAI-compatible messages and deltas are left out. "
            "Recompile without that option to get `to_openai` and `DeltaStream`."
        )
    if not options.grammar:
        paragraphs.append(
            "Compiled with --no-grammar (see `GRAMMAR_FUNCTION`): `grammar()` is left out. Recompile without "
            "that option to get it, or build the same grammars with `rtcompile grammar`."
        )
    if options.shared_runtime:
        paragraphs.append(
            "Compiled with --shared-runtime (see `SHARED_RUNTIME`): the engine and the helpers this module runs "
            "are imported from rtcompile_runtime.py beside it, which must come from the same rtcompile version "
            "(checked on import). The directory is a package: import this module from it."
        )
    # The summary line is never wrapped: it names the source file, which has no place to break.
    docstring = "\n\n".join([paragraphs[0], *map(_wrap, paragraphs[1:])])
    # Quoted values are always followed by text that is not a quote: nothing can close the docstring.
    assert '"""' not in docstring and not docstring.endswith('"'), docstring
    return docstring


def _field_line(f: Field) -> str:
    path: JsonPath = ("fields", f.name)
    if f.open is None:
        where = "what no other field takes"
    else:
        where = f"from {_delimiter(f.open, (*path, 'open'))}"
        if f.close is not None:
            where += f" to {_delimiter(f.close, (*path, 'close'))}"
        else:
            where += " to the next field or the end"
    content = _CONTENT.get(f.content, f.content)
    shape = " reshaped by its transform" if f.transform is not None else ""
    if f.transform is not None and f.transform_each:
        shape = " each item reshaped by its transform"
    line = f"* {quoted(f.name)}: {where}; {content}{shape}"
    if f.join is not None:
        line += f"; regions joined with {_quoted_or_place(f.join, (*path, 'join'))}"
    elif f.repeats:
        line += "; a list, one item per region"
    if not f.optional:
        line += "; required"
    return line


def _delimiter(delimiter: Delimiter, where: JsonPath) -> str:
    """A delimiter as the docstring names it; `where` is its key without the `_pattern` suffix."""
    if delimiter.literals is not None:
        text = " or ".join(quoted(lit) for lit in delimiter.literals)
        return text if len(text) <= MAX_QUOTED else f"a string listed at {_place(where)}"
    where = (*where[:-1], f"{where[-1]}_pattern")
    return f"a match of {_quoted_or_place(delimiter.pattern, where)}"


def _prompt_paragraph(template: Template) -> str:
    anchor = _delimiter(template.start_anchor, ("start_anchor",))
    defaults = ""
    if template.defaults:
        defaults = f" Each message starts as {_quoted_or_place(dict(template.defaults), ('defaults',))}."
    return (
        f"The prompt (`prefix`) is read from after its last {anchor}: what it already opened there (a "
        f"reasoning block, say) is part of the message.{defaults}"
    )


def _wrap(paragraph: str) -> str:
    """A paragraph filled to `LINE_LENGTH` columns; a list keeps one item a line, continued indented."""
    if paragraph.startswith("* "):
        return "\n".join(
            textwrap.fill(item, LINE_LENGTH, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
            for item in paragraph.split("\n")
        )
    return textwrap.fill(paragraph, LINE_LENGTH, break_long_words=False, break_on_hyphens=False)
