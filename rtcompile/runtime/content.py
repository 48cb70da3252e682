"""Content parsers: turn the captured body of a region into a value.

These functions are shared by the interpreter and lifted verbatim into generated modules, so they use the
standard library only and take their `content_args` already unpacked and validated by the loader. Each one
reproduces transformers' `content_parsers` exactly, including which exception type escapes for bad input
(often the one Python raises naturally, e.g. `AttributeError` when a non-participating xml-inline group hands
`None` to a nested parser), because generated parsers must fail the same way the reference does.

Arguments default to the reference's `content_args` defaults, so that a generated handler passes only what
its template changes. Optional steps that need big tables (the `unquoted_keys` rewrite and its Unicode word
class) are separate functions, passed in by the caller, so that a module holds them only when its template
uses them.
"""

import functools
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn

from rtcompile.runtime.unicode_classes import SPACE_CLASS, WORD_CLASS

# --- scalar parsers ---------------------------------------------------------------------------------------------


def parse_text(text: str, strip: bool = True) -> str:
    """Return the body, optionally without surrounding whitespace (str.strip's Unicode notion of whitespace)."""
    return text.strip() if strip else text


def parse_int(text: str, strip: bool = True) -> int:
    """Convert with `int()`, so Python's lenient syntax (underscores, non-ASCII digits, signs) is accepted."""
    return int(parse_text(text, strip))


def parse_float(text: str, strip: bool = True) -> float:
    """Convert with `float()`, which also accepts 'nan', 'inf' and underscores, like the reference."""
    return float(parse_text(text, strip))


def parse_bool(text: str, strip: bool = True) -> bool:
    """Only 'true' and '1' (any case) are true; every other text is false rather than an error."""
    return parse_text(text, strip).lower() in ("true", "1")


# --- json -------------------------------------------------------------------------------------------------------

# Markers that stand in for pre-extracted custom-delimited strings. They are control characters a model should
# never emit, and input containing them is refused so a real one cannot be confused with a marker.
_JSON_MARK_OPEN: Final = "\x01"
_JSON_MARK_CLOSE: Final = "\x02"


# A whole double-quoted string (kept as is) or a bare key after `{`/`,`. `\s`/`\w` are spelled with the `regex`
# module's Unicode tables because that is the engine the reference rewrites keys with.
# Compiled on first use: the Unicode classes make it slow to compile, and most templates never need it
# (this keeps generated modules quick to import).
@functools.lru_cache(maxsize=1)
def _json_bare_key_pattern() -> re.Pattern[str]:
    return re.compile(
        r'"(?:\\.|[^"\\])*"|(?<=[{,])(['
        + SPACE_CLASS
        + r"]*)(["
        + WORD_CLASS
        + r"]+)(["
        + SPACE_CLASS
        + r"]*):"
    )


def _json_extract_delimited(
    text: str, string_delims: Sequence[tuple[str, str]], found: list[str]
) -> str:
    """Replace every custom-delimited string by a numbered marker, appending its body to `found`.

    Pairs are applied one after another to the already-rewritten text (so a later pair can see earlier
    markers), each as a non-greedy, DOTALL, leftmost match, exactly like a regex substitution would.
    """

    def to_marker(match: re.Match[str]) -> str:
        found.append(match.group(1))
        return f"{_JSON_MARK_OPEN}{len(found) - 1}{_JSON_MARK_CLOSE}"

    for opener, closer in string_delims:
        if opener and closer and isinstance(text, str):
            text = _json_replace_delimited(text, opener, closer, found)
        else:  # an empty delimiter matches everywhere (and a non-string fails): as the regex engine does
            text = re.sub(
                re.escape(opener) + "(.*?)" + re.escape(closer),
                to_marker,
                text,
                flags=re.DOTALL,
            )
    return text


def _json_replace_delimited(
    text: str, opener: str, closer: str, found: list[str]
) -> str:
    """The substitution `opener(.*?)closer` -> marker, with `str.find`: the same matches (each opener, then
    the first closer after it), in linear time. (`re` tries the lazy body at every character, and a group
    around it hides the literal that follows from its shortcut: quadratic-looking costs on long bodies.)"""
    pieces: list[str] = []
    pos = 0
    while True:
        start = text.find(opener, pos)
        end = -1 if start < 0 else text.find(closer, start + len(opener))
        if end < 0:
            break  # no closer after this opener, so none after any later one either
        found.append(text[start + len(opener) : end])
        pieces += [
            text[pos:start],
            f"{_JSON_MARK_OPEN}{len(found) - 1}{_JSON_MARK_CLOSE}",
        ]
        pos = end + len(closer)
    pieces.append(text[pos:])
    return "".join(pieces)


def json_quote_bare_keys(text: str) -> str:
    """The `unquoted_keys` rewrite: wrap bare identifier keys in double quotes, leaving the inside of quoted
    strings untouched."""

    def quote(match: re.Match[str]) -> str:
        if match.group(2) is None:
            return match.group(0)
        return f'{match.group(1)}"{match.group(2)}"{match.group(3)}:'

    return _json_bare_key_pattern().sub(quote, text)


def _json_restore_delimited(text: str, found: Sequence[str]) -> str:
    """Turn the markers back into standard JSON string literals, in extraction order."""
    for index, body in enumerate(found):
        text = text.replace(
            f"{_JSON_MARK_OPEN}{index}{_JSON_MARK_CLOSE}", json.dumps(body)
        )
    return text


def json_delimited_strings(
    text: str,
    string_delims: Sequence[tuple[str, str]],
    quote_keys: Callable[[str], str] | None,
) -> str:
    """The `string_delims` rewrite (non-empty pairs): custom-delimited strings become JSON strings, with
    `quote_keys` (the `unquoted_keys` rewrite, if wanted) applied in between, outside those strings."""
    return _json_restore_delimited(*_json_marked(text, string_delims, quote_keys))


def _json_marked(
    text: str,
    string_delims: Sequence[tuple[str, str]],
    quote_keys: Callable[[str], str] | None,
) -> tuple[str, list[str]]:
    """The `string_delims` rewrite up to its markers: the text with a marker for each delimited string
    (and `quote_keys` applied), and the strings the markers stand for. Text holding the markers'
    sentinel characters is refused, so that a real one cannot be confused with a marker."""
    if _JSON_MARK_OPEN in text or _JSON_MARK_CLOSE in text:
        raise ValueError(
            "json: input contains reserved sentinel characters (\\x01/\\x02); cannot parse safely."
        )
    found: list[str] = []
    rewritten = _json_extract_delimited(text, string_delims, found)
    if quote_keys is not None:
        rewritten = quote_keys(rewritten)
    return rewritten, found


def parse_json(
    text: str,
    *,
    dialect: Callable[[str], str] | None = None,
    allow_non_json: bool = False,
    strip: bool = True,
) -> Any:
    """Parse JSON after the `dialect` rewrite (the `unquoted_keys` one, say); on failure fall back to the text or raise
    ValueError.

    Only `json.JSONDecodeError` triggers the fallback: other errors (e.g. the int-digits limit ValueError or a
    RecursionError) escape unchanged, as they do in the reference.
    """
    return _decode_json(
        text, text if dialect is None else dialect(text), allow_non_json, strip
    )


def _decode_json(text: str, rewritten: str, allow_non_json: bool, strip: bool) -> Any:
    """`parse_json` from the rewritten text on: decode it, else fall back or raise as the reference does."""
    try:
        return json.loads(rewritten)
    except json.JSONDecodeError as error:
        if allow_non_json:
            return parse_text(text, strip)
        if rewritten == text:
            raise ValueError(
                f"json parser could not parse region as JSON.\nContent: {text!r}\nError: {error}"
            ) from error
        raise ValueError(
            "json: could not parse after dialect transforms.\n"
            f"Original: {text!r}\nTransformed: {rewritten!r}\nError: {error}"
        ) from error


def parse_json_delimited(
    text: str,
    string_delims: Sequence[tuple[str, str]],
    *,
    quote_keys: Callable[[str], str] | None = None,
    allow_non_json: bool = False,
    strip: bool = True,
) -> Any:
    """`parse_json` after the `string_delims` rewrite (`json_delimited_strings`). Where the delimited
    strings are long, without writing them out as JSON and decoding them again: each marker becomes
    a short JSON string standing for it, and the decoded value gets the strings back, so a long
    argument is copied once instead of escaped, rescanned and decoded.

    The text around the markers is the reference's, token for token, so it decodes to the same
    structure. Wherever that could still differ, the reference's way is taken instead: text holding
    escaped sentinels (they would read as markers), a marker that does not decode as a whole string
    (one written inside another string), an object where a string restored as a key meets another
    key (JSON keeps the last value of duplicates), and any failure to decode (for the reference's
    error or fallback)."""
    rewritten, found = _json_marked(text, string_delims, quote_keys)
    if sum(map(len, found)) >= _LONG_DELIMITED and "\\u000" not in text:
        tokens = _json_marker().sub(r'"\\u0001\1\\u0002"', rewritten)
        try:
            return _json_with_bodies(json.loads(tokens), found)
        except (ValueError, RecursionError, _NotAMarker):
            pass
    return _decode_json(
        text, _json_restore_delimited(rewritten, found), allow_non_json, strip
    )


# Delimited strings shorter than this together cost less to write out and decode than the detour.
_LONG_DELIMITED: Final = 1024


class _NotAMarker(Exception):
    """A decoded string holds a marker's sentinels but is not one marker."""


@functools.cache
def _json_marker() -> re.Pattern[str]:
    return re.compile(f"{_JSON_MARK_OPEN}(\\d+){_JSON_MARK_CLOSE}")


def _json_with_bodies(value: Any, found: Sequence[str]) -> Any:
    """`value` with every marker string (a key or a value) replaced by the string it stands for."""
    if isinstance(value, str):
        return _json_body(value, found)
    if isinstance(value, list):
        return [_json_with_bodies(item, found) for item in value]
    if isinstance(value, dict):
        restored = {
            _json_body(key, found): _json_with_bodies(item, found)
            for key, item in value.items()
        }
        if len(restored) != len(value):
            raise _NotAMarker  # keys collide once restored: which value wins depends on the order
        return restored
    return value


def _json_body(text: str, found: Sequence[str]) -> str:
    if _JSON_MARK_OPEN not in text and _JSON_MARK_CLOSE not in text:
        return text
    match = _json_marker().fullmatch(text)
    if match is None or int(match.group(1)) >= len(found):
        raise _NotAMarker
    return found[int(match.group(1))]


# --- xml-inline and kv-lines ------------------------------------------------------------------------------------


def _apply_value_parser(raw: Any, value_parser: Callable[[str], Any] | None) -> Any:
    """Run the nested parser if there is one; `raw` may be None (a group that did not take part)."""
    return raw if value_parser is None else value_parser(raw)


def parse_xml_inline(
    text: str,
    tag_re: re.Pattern[str],
    tag_pattern: str,
    value_parser: Callable[[str], Any] | None = None,
    merge_duplicates: bool = False,
) -> dict[str, Any]:
    """Collect `key` -> `value` from every match of `tag_re` (compiled with DOTALL by the caller).

    `tag_re` may be a `regex` pattern (interpreter) or a stdlib translation (generated code), so only
    `finditer` and `groupdict` are used. A missing `value` group yields "", a `value` group that did not
    participate yields None (handed to `value_parser` as is). With `merge_duplicates`, a repeated key turns
    into a list of all its values; otherwise the last value wins (keeping the key's first position).
    """
    out: dict[str, Any] = {}
    listed: set[str] = set()
    for match in tag_re.finditer(text):
        groups = match.groupdict()
        key = groups.get("key")
        if key is None:
            raise ValueError(
                f"xml-inline: tag_pattern must have a named group 'key'. Pattern: {tag_pattern}"
            )
        value = _apply_value_parser(groups.get("value", ""), value_parser)
        if merge_duplicates and key in out:
            if key not in listed:
                out[key] = [out[key]]
                listed.add(key)
            out[key].append(value)
        else:
            out[key] = value
    return out


def parse_kv_lines(
    text: str,
    line_sep: str | None = "\n",
    kv_sep: str = ":",
    strip: bool = True,
    value_parser: Callable[[str], Any] | None = None,
) -> dict[str, Any]:
    """Parse `key<kv_sep>value` lines; lines that are empty or lack the separator are skipped.

    Empty separators raise ValueError from `str.split` (for `kv_sep` only once a non-empty line is seen),
    and `line_sep=None` splits on whitespace runs, both exactly as the reference's `str` calls do.
    """
    out: dict[str, Any] = {}
    for raw_line in text.split(line_sep):
        line = parse_text(raw_line, strip)
        if not line or kv_sep not in line:
            continue
        key, value = line.split(kv_sep, 1)
        out[parse_text(key, strip)] = _apply_value_parser(
            parse_text(value, strip), value_parser
        )
    return out


# --- python-call-list -------------------------------------------------------------------------------------------
# A strict recursive-descent parser for `[name(arg=value, ...), ...]`. Each function takes the source and a
# position and returns (result, new position). Errors name the position where the reference's parser stands
# when it gives up, which (because every lookahead first skips whitespace) is after any skipped whitespace.
# The reference's regexes are ASCII-only, so stdlib `re` matches them exactly.

_CALL_LIST_SPACE: Final = " \t\n\r"
_CALL_LIST_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*")
_CALL_LIST_NUMBER: Final = re.compile(
    r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"
)
# The reference's `'((?:[^'\\\n\r]|\\.)*)'` (and the same with `"`), unrolled: a backslash can only
# start the escape branch, so each string splits into runs and escapes one way, and a run is one
# tight loop in `re` instead of one repeat iteration per character (same matches, same groups).
_CALL_LIST_STRING: Final = re.compile(
    r"""'([^'\\\n\r]*(?:\\.[^'\\\n\r]*)*)'|"([^"\\\n\r]*(?:\\.[^"\\\n\r]*)*)\"""",
    re.DOTALL,
)
_CALL_LIST_HEX4: Final = re.compile(r"u([0-9a-fA-F]{4})")
_CALL_LIST_LOW_ESCAPE: Final = re.compile(r"\\u([dD][c-fC-F][0-9a-fA-F]{2})")
_CALL_LIST_RAW_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
# Single-character escapes: the character after the backslash, and what it stands for (same index).
_CALL_LIST_ESCAPE_CODES: Final = "\\'\"/bfnrt"
_CALL_LIST_ESCAPE_VALUES: Final = "\\'\"/\b\f\n\r\t"
_CALL_LIST_KEYWORDS: Final = ("True", "true", "False", "false", "None", "null")
_CALL_LIST_KEYWORD_VALUES: Final = (True, True, False, False, None, None)
_CALL_LIST_MAX_INTEGER: Final = 2**53 - 1
_CALL_LIST_MAX_DEPTH: Final = 100


def _call_list_fail(text: str, position: int, message: str) -> NoReturn:
    """Raise the reference's error: what went wrong, where, and the whole input."""
    raise ValueError(
        f"python-call-list: {message} at position {position}.\nContent: {text!r}"
    )


def _call_list_skip(text: str, position: int) -> int:
    """Skip the four ASCII whitespace characters the grammar allows between tokens."""
    while position < len(text) and text[position] in _CALL_LIST_SPACE:
        position += 1
    return position


def _call_list_expect(text: str, position: int, char: str) -> int:
    """Consume `char` after optional whitespace, or fail at the first non-space position."""
    position = _call_list_skip(text, position)
    if not text.startswith(char, position):
        _call_list_fail(text, position, f"expected {char!r}")
    return position + 1


def _call_list_unique(
    text: str, position: int, pairs: list[tuple[str, Any]]
) -> dict[str, Any]:
    """Build a dict, refusing repeated names; checked only once the whole group has parsed."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            _call_list_fail(text, position, f"repeated name {key!r}")
        out[key] = value
    return out


def _call_list_unescape(text: str, quote_at: int, body: str) -> str:
    r"""Decode a string body's escapes; surrogate pairs only as `\uD8xx\uDCxx` escape pairs.

    Errors are reported at the opening quote. Every backslash in `body` is followed by a character because
    the string pattern only admits backslashes as two-character pairs.
    """
    if _CALL_LIST_RAW_SURROGATE.search(body) is not None:
        _call_list_fail(text, quote_at, "lone surrogate in the string starting")
    pieces: list[str] = []
    done = 0
    backslash = body.find("\\")
    while backslash != -1:
        pieces.append(body[done:backslash])
        kind = _CALL_LIST_ESCAPE_CODES.find(body[backslash + 1])
        if kind != -1:
            pieces.append(_CALL_LIST_ESCAPE_VALUES[kind])
            done = backslash + 2
        else:
            hex4 = _CALL_LIST_HEX4.match(body, backslash + 1)
            if hex4 is None:
                escape = body[backslash : backslash + 2]
                _call_list_fail(
                    text,
                    quote_at,
                    f"unsupported escape {escape!r} in the string starting",
                )
            code, done = int(hex4.group(1), 16), hex4.end()
            if 0xD800 <= code <= 0xDBFF:
                low = _CALL_LIST_LOW_ESCAPE.match(body, done)
                if low is not None:
                    code = (
                        0x10000
                        + ((code - 0xD800) << 10)
                        + (int(low.group(1), 16) - 0xDC00)
                    )
                    done = low.end()
            if 0xD800 <= code <= 0xDFFF:
                _call_list_fail(
                    text, quote_at, "lone surrogate escape in the string starting"
                )
            pieces.append(chr(code))
        backslash = body.find("\\", done)
    pieces.append(body[done:])
    return "".join(pieces)


def _call_list_string(text: str, position: int) -> tuple[str, int]:
    """Parse a single- or double-quoted string starting exactly at `position`."""
    match = _CALL_LIST_STRING.match(text, position)
    if match is None:
        _call_list_fail(text, position, "invalid string")
    body = match.group(1) if match.group(1) is not None else match.group(2)
    return _call_list_unescape(text, position, body), match.end()


def _call_list_number(text: str, match: re.Match[str]) -> int | float:
    """Convert a number token: integers must fit in a double exactly, floats must be finite."""
    token = match.group(0)
    if match.group(1) is None and match.group(2) is None:
        # The length test keeps enormous literals away from int(); 2^53 - 1 has 16 digits.
        if len(token) > 17 or abs(int(token)) > _CALL_LIST_MAX_INTEGER:
            _call_list_fail(
                text,
                match.start(),
                "integer outside the range of -(2^53 - 1) to 2^53 - 1",
            )
        return int(token)
    number = float(token)
    if math.isinf(number):
        _call_list_fail(text, match.start(), "number too large")
    return number


def _call_list_items(
    text: str,
    position: int,
    depth: int,
    closer: str,
    item: Callable[[str, int, int], tuple[Any, int]],
) -> tuple[list[Any], int]:
    """Parse comma-separated items after an opening bracket until `closer` (no trailing comma);
    `item(text, position, depth)` parses one. Returns them and the position after `closer`."""
    items: list[Any] = []
    position = _call_list_skip(text, position)
    if text.startswith(closer, position):
        return items, position + 1
    while True:
        value, position = item(text, position, depth)
        items.append(value)
        position = _call_list_skip(text, position)
        if text.startswith(closer, position):
            return items, position + 1
        position = _call_list_expect(text, position, ",")


def _call_list_sequence(text: str, position: int, depth: int) -> tuple[list[Any], int]:
    """Parse list items after `[` until `]`; items sit at `depth`."""
    return _call_list_items(text, position, depth, "]", _call_list_value)


def _call_list_mapping(
    text: str, position: int, depth: int
) -> tuple[dict[str, Any], int]:
    """Parse `"key": value` entries after `{` until `}`; keys must be quoted strings."""
    pairs, position = _call_list_items(text, position, depth, "}", _call_list_entry)
    return _call_list_unique(text, position, pairs), position


def _call_list_entry(
    text: str, position: int, depth: int
) -> tuple[tuple[str, Any], int]:
    """Parse one `"key": value` entry of a dict; the value sits at `depth`."""
    position = _call_list_skip(text, position)
    if not text.startswith(("'", '"'), position):
        _call_list_fail(text, position, "dict keys must be strings")
    key, position = _call_list_string(text, position)
    position = _call_list_expect(text, position, ":")
    value, position = _call_list_value(text, position, depth)
    return (key, value), position


def _call_list_value(text: str, position: int, depth: int) -> tuple[Any, int]:
    """Parse one value; `depth` counts the lists and dicts enclosing it."""
    position = _call_list_skip(text, position)
    if text.startswith(("'", '"'), position):
        return _call_list_string(text, position)
    if text.startswith(("[", "{"), position):
        if depth >= _CALL_LIST_MAX_DEPTH:
            _call_list_fail(
                text,
                position,
                f"lists and dicts nested more than {_CALL_LIST_MAX_DEPTH} levels deep",
            )
        if text[position] == "[":
            return _call_list_sequence(text, position + 1, depth + 1)
        return _call_list_mapping(text, position + 1, depth + 1)
    number = _CALL_LIST_NUMBER.match(text, position)
    if number is not None:
        return _call_list_number(text, number), number.end()
    word = _CALL_LIST_NAME.match(text, position)
    if word is not None and word.group(0) in _CALL_LIST_KEYWORDS:
        return _CALL_LIST_KEYWORD_VALUES[
            _CALL_LIST_KEYWORDS.index(word.group(0))
        ], word.end()
    _call_list_fail(
        text, position, "expected a string, number, list, dict, True, False or None"
    )


def _call_list_name(text: str, position: int, what: str) -> tuple[str, int]:
    """Parse a (possibly dotted or dashed) identifier after optional whitespace."""
    position = _call_list_skip(text, position)
    match = _CALL_LIST_NAME.match(text, position)
    if match is None:
        _call_list_fail(text, position, f"expected {what}")
    return match.group(0), match.end()


def _call_list_arguments(text: str, position: int) -> tuple[dict[str, Any], int]:
    """Parse `name=value` keyword arguments after `(` until `)`; positional ones are refused."""
    pairs, position = _call_list_items(text, position, 0, ")", _call_list_argument)
    return _call_list_unique(text, position, pairs), position


def _call_list_argument(
    text: str, position: int, depth: int
) -> tuple[tuple[str, Any], int]:
    """Parse one `name=value` keyword argument; the value sits at `depth`."""
    key, position = _call_list_name(
        text,
        position,
        "a keyword argument (positional arguments and trailing commas are not supported)",
    )
    position = _call_list_skip(text, position)
    if not text.startswith("=", position):
        _call_list_fail(
            text,
            position,
            "expected '=' (positional arguments are not supported)",
        )
    value, position = _call_list_value(text, position + 1, depth)
    return (key, value), position


def _call_list_call(text: str, position: int) -> tuple[dict[str, Any], int]:
    """Parse `name(arguments)` into the reference's `{"name", "arguments"}` record."""
    name, position = _call_list_name(text, position, "a function name")
    position = _call_list_expect(text, position, "(")
    arguments, position = _call_list_arguments(text, position)
    return {"name": name, "arguments": arguments}, position


def parse_python_call_list(text: str) -> list[dict[str, Any]]:
    """Parse `[f(a=1), g(b="x")]` into `[{"name": "f", "arguments": {"a": 1}}, ...]`, strictly.

    Values are JSON-like literals (strings with JSON escapes in either quote style, numbers, lists, dicts with
    string keys, True/False/None and their JSON spellings). Anything else raises ValueError with the position.
    """
    calls: list[dict[str, Any]] = []
    position = _call_list_expect(text, 0, "[")
    position = _call_list_skip(text, position)
    if text.startswith("]", position):
        position += 1
    else:
        while True:
            call, position = _call_list_call(text, position)
            calls.append(call)
            position = _call_list_skip(text, position)
            if text.startswith("]", position):
                position += 1
                break
            position = _call_list_expect(text, position, ",")
    position = _call_list_skip(text, position)
    if position != len(text):
        _call_list_fail(text, position, "unexpected content after the closing ']'")
    return calls
