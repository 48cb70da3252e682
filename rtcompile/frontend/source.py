"""Reading response template sources, keeping track of where every value came from.

Users point rtcompile at a file and expect any problem to come back as one line naming
``file:line:col`` and the JSON path, never as a traceback. Python's :mod:`json` cannot help with
that: it forgets positions, silently keeps the last of two duplicate keys, accepts ``NaN``, and dies
with :class:`RecursionError` on deeply nested input. So this module walks the JSON structure itself,
with an explicit stack, and uses :meth:`json.JSONDecoder.raw_decode` only for the scalars (strings,
numbers, literals) so that every decoded value is exactly what :func:`json.loads` would produce.

Input rules (each violation is a :class:`~rtcompile.errors.TemplateError` with file and, where
meaningful, line and column):

* Files must be UTF-8 without a byte-order mark (RFC 8259 forbids one). transformers reads
  ``tokenizer_config.json`` with ``json.load`` and fails on a BOM, so a template file with one would
  break the model for everyone else; we reject it with a message saying how to fix it. UTF-16/32
  files and undecodable bytes are rejected too, naming the byte offset.
* Files larger than :data:`MAX_SOURCE_BYTES` (64 MiB) are rejected without being read.
* Nesting deeper than :data:`MAX_NESTING_DEPTH` (512) containers is rejected with a clean error.
* Inside the response template (and for the ``"response_template"`` key itself) duplicate object
  keys and the ``NaN`` / ``Infinity`` / ``-Infinity`` literals are errors: they are not JSON, and a
  template that says two different things about one key is a mistake we should not guess about.
  The rest of a ``tokenizer_config.json`` belongs to the tokenizer, not to us, so there we accept
  exactly what transformers' ``json.load`` accepts (the last duplicate wins, ``NaN`` is a float).
* Lines are counted on ``"\\n"`` (so CRLF files work); columns count characters (code points), 1-based.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from rtcompile.errors import Diagnostic, JsonPath, TemplateError, quote
from rtcompile.frontend.catalog import bundled_path, closest_names, looks_like_name

__all__ = [
    "MAX_NESTING_DEPTH",
    "MAX_SOURCE_BYTES",
    "TEMPLATE_KEY",
    "TOKENIZER_CONFIG_NAME",
    "SourceDocument",
    "TemplateText",
    "parse_json_document",
    "read_json_file",
    "read_template_source",
    "read_text_file",
    "resolve_template_path",
]

#: Largest file we read. Real tokenizer configs are at most a few MiB; the cap keeps a wrong path
#: (a model weights file, say) from being slurped into memory.
MAX_SOURCE_BYTES: Final = 64 * 1024 * 1024

#: Deepest container nesting we accept. Templates nest a handful of levels; the limit exists so that
#: hostile or corrupt input fails cleanly instead of exhausting the stack.
MAX_NESTING_DEPTH: Final = 512

#: The file transformers reads the response template from, and the key it is stored under.
TOKENIZER_CONFIG_NAME: Final = "tokenizer_config.json"
TEMPLATE_KEY: Final = "response_template"

_CONFIG_PREFIX: Final[JsonPath] = (TEMPLATE_KEY,)
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")  # JSON's four whitespace characters, nothing else
_NON_FINITE: Final = ("NaN", "Infinity", "-Infinity")
_SCALAR_START: Final = frozenset('"-0123456789tfnNI')
_BARE_WORD: Final = re.compile(r"[-+.\w]{2,40}")


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``text[offset]``; columns count code points, lines end at ``"\\n"``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _describe_char(text: str, offset: int) -> str:
    """How to show the character at ``offset`` in a message: quoted if printable, else as a code point."""
    if offset >= len(text):
        return "end of file"
    char = text[offset]
    if char.isprintable() and char != " ":
        return repr(char)
    hint = " (is the file UTF-16 encoded?)" if char == "\0" else ""
    return f"U+{ord(char):04X}{hint}"


def _describe_token(text: str, offset: int) -> str:
    """Like :func:`_describe_char`, but shows a whole bare word (``'tru'``, ``'None'``) when there is one."""
    word = _BARE_WORD.match(text, offset)
    return repr(word.group()) if word else _describe_char(text, offset)


@dataclass(frozen=True)
class SourceDocument:
    """A parsed JSON source together with the position of every value in the response template.

    Attributes:
        value: The whole parsed document (for a tokenizer config, the full config object).
        file: The file it was read from, or None for text that did not come from a file.
        text: The decoded text, without any byte-order mark; positions refer to it.
        prefix: Where the response template sits in ``value``: ``("response_template",)`` for a
            tokenizer config, ``()`` for a bare template. Paths given to :meth:`locate` and friends
            are relative to it, matching :attr:`TemplateError.path`.
    """

    value: object
    file: str | None
    text: str = field(repr=False)
    prefix: JsonPath = ()
    _value_offsets: Mapping[JsonPath, int] = field(default_factory=dict, repr=False, compare=False)
    _key_offsets: Mapping[JsonPath, int] = field(default_factory=dict, repr=False, compare=False)

    def locate(self, path: Iterable[str | int]) -> tuple[int, int] | None:
        """1-based ``(line, col)`` of the first character of the value at ``path``, or None if there is none."""
        offset = self._value_offsets.get(self.prefix + tuple(path))
        return None if offset is None else _line_col(self.text, offset)

    def locate_key(self, path: Iterable[str | int]) -> tuple[int, int] | None:
        """``(line, col)`` of the quoted key that names the object member at ``path``, if it is one.

        Useful for complaints about the key itself ("unknown key ..."), where pointing at the value
        would be confusing.
        """
        offset = self._key_offsets.get(self.prefix + tuple(path))
        return None if offset is None else _line_col(self.text, offset)

    def locate_nearest(self, path: Iterable[str | int]) -> tuple[int, int] | None:
        """Like :meth:`locate`, but falls back to the closest enclosing value that exists.

        A missing key has no position of its own; the object that should have held it is the most
        helpful place to point at.
        """
        parts = tuple(path)
        for end in range(len(parts), -1, -1):
            position = self.locate(parts[:end])
            if position is not None:
                return position
        return None

    def error(
        self, message: str, path: Iterable[str | int] = (), *, error_class: type[TemplateError] = TemplateError
    ) -> TemplateError:
        """Build (not raise) an error about the value at ``path``, located via :meth:`locate_nearest`."""
        parts = tuple(path)
        line, col = self.locate_nearest(parts) or (None, None)
        return error_class(message, parts, file=self.file, line=line, col=col)

    def diagnostic(
        self, severity: Literal["error", "warning"], message: str, path: Iterable[str | int] = ()
    ) -> Diagnostic:
        """Build a :class:`Diagnostic` about the value at ``path``, located like :meth:`error`."""
        parts = tuple(path)
        line, col = self.locate_nearest(parts) or (None, None)
        return Diagnostic(severity, message, parts, self.file, line, col)


class _Frame:
    """One open object or array on the parser's explicit stack."""

    __slots__ = ("container", "index", "is_object", "key", "key_offsets", "path")

    def __init__(self, is_object: bool, path: JsonPath) -> None:
        self.is_object = is_object
        self.path = path
        self.container: dict[str, Any] | list[Any] = {} if is_object else []
        self.key = ""  # the member being parsed (objects)
        self.index = 0  # the element being parsed (arrays)
        self.key_offsets: dict[str, int] = {}  # where each key was first seen, to report duplicates


class _Parser:
    """Iterative JSON parser that records positions and enforces the strictness rules.

    Values whose path lies on the "prefix line" (ancestors of the prefix, the prefix itself, and
    everything under it) are parsed strictly and have their positions recorded. Everything else is
    parsed strictly too when ``strict_outside_prefix`` is set; otherwise it is handed whole to the C
    decoder, which is both much faster (tokenizer configs can be megabytes of added tokens) and
    exactly as lenient as transformers.
    """

    def __init__(self, text: str, file: str | None, prefix: JsonPath, strict_outside_prefix: bool) -> None:
        self.text = text
        self.file = file
        self.prefix = prefix
        self.strict_outside_prefix = strict_outside_prefix
        self.decoder = json.JSONDecoder()  # json.load's exact semantics, for scalars and lenient subtrees
        self.value_offsets: dict[JsonPath, int] = {}
        self.key_offsets: dict[JsonPath, int] = {}
        #: Set when a failure happened at or under the prefix, i.e. inside the response template.
        self.failed_inside_prefix = False

    # -- helpers -------------------------------------------------------------------------------

    def on_prefix_line(self, path: JsonPath) -> bool:
        common = min(len(path), len(self.prefix))
        return path[:common] == self.prefix[:common]

    def strict(self, path: JsonPath) -> bool:
        return self.strict_outside_prefix or self.on_prefix_line(path)

    def skip_whitespace(self, pos: int) -> int:
        match = _WHITESPACE.match(self.text, pos)
        assert match is not None  # the pattern matches the empty string
        return match.end()

    def fail(self, message: str, offset: int, path: JsonPath) -> TemplateError:
        """An error at ``offset``; its path is template-relative, or empty outside the template."""
        inside = path[: len(self.prefix)] == self.prefix
        self.failed_inside_prefix = inside
        line, col = _line_col(self.text, offset)
        relative = path[len(self.prefix) :] if inside else ()
        return TemplateError(message, relative, file=self.file, line=line, col=col)

    # -- the parser ----------------------------------------------------------------------------

    def parse(self) -> object:
        text = self.text
        end = len(text)
        stack: list[_Frame] = []
        path: JsonPath = ()
        pos = self.skip_whitespace(0)
        if pos >= end:
            raise self.fail("the document is empty; expected a JSON value", pos, path)
        while True:
            # Here a value for `path` starts at `pos` (whitespace already skipped).
            if pos >= end:
                raise self.fail("expected a value, found end of file", pos, path)
            if self.on_prefix_line(path):
                self.value_offsets[path] = pos
            char = text[pos]
            value: Any
            if char in "{[":
                if len(stack) >= MAX_NESTING_DEPTH:
                    # The full path would be hundreds of "[0]"s; its first few steps say enough.
                    raise self.fail(
                        f"nesting is deeper than {MAX_NESTING_DEPTH} levels; rtcompile does not read such documents",
                        pos,
                        path[: len(self.prefix) + 8],
                    )
                fast = None if self.strict(path) else self.decode_lenient(pos, len(stack))
                if fast is not None:
                    value, pos = fast
                else:
                    frame = _Frame(char == "{", path)
                    closer = "}" if frame.is_object else "]"
                    pos = self.skip_whitespace(pos + 1)
                    if pos < end and text[pos] == closer:
                        value, pos = frame.container, pos + 1
                    else:
                        stack.append(frame)
                        pos, path = self.first_member(frame, pos)
                        continue
            else:
                value, pos = self.scalar(pos, path)

            # A value just ended: store it in its container, closing every container that ends here.
            while True:
                if not stack:
                    pos = self.skip_whitespace(pos)
                    if pos < end:
                        raise self.fail(
                            f"unexpected {_describe_char(text, pos)} after the end of the JSON value", pos, ()
                        )
                    return value
                frame = stack[-1]
                if isinstance(frame.container, dict):
                    frame.container[frame.key] = value
                else:
                    frame.container.append(value)
                pos = self.skip_whitespace(pos)
                closer = "}" if frame.is_object else "]"
                if pos < end and text[pos] == ",":
                    comma = pos
                    pos = self.skip_whitespace(pos + 1)
                    if pos < end and text[pos] == closer:
                        raise self.fail(f"trailing comma before '{closer}' is not allowed in JSON", comma, frame.path)
                    pos, path = self.next_member(frame, pos)
                    break
                if pos < end and text[pos] == closer:
                    stack.pop()
                    value, pos = frame.container, pos + 1
                    continue
                raise self.fail(f"expected ',' or '{closer}', found {_describe_char(text, pos)}", pos, frame.path)

    def first_member(self, frame: _Frame, pos: int) -> tuple[int, JsonPath]:
        """Start the first member of a just-opened non-empty container; return where its value starts."""
        if frame.is_object:
            return self.member_key(frame, pos)
        return pos, (*frame.path, 0)

    def next_member(self, frame: _Frame, pos: int) -> tuple[int, JsonPath]:
        """Start the member after a comma; return where its value starts and its path."""
        if frame.is_object:
            return self.member_key(frame, pos)
        frame.index += 1
        return pos, (*frame.path, frame.index)

    def member_key(self, frame: _Frame, pos: int) -> tuple[int, JsonPath]:
        """Parse ``"key" :`` at ``pos``; check duplicates; return where the value starts and its path."""
        text = self.text
        if pos >= len(text) or text[pos] != '"':
            raise self.fail(f"expected a double-quoted key, found {_describe_char(text, pos)}", pos, frame.path)
        key, after = self.scalar(pos, frame.path)
        assert isinstance(key, str)
        path = (*frame.path, key)
        first = frame.key_offsets.get(key)
        if first is not None and self.strict(path):
            first_line, first_col = _line_col(text, first)
            line, col = _line_col(text, pos)
            raise self.fail(
                f"duplicate key {key!r}: first at {first_line}:{first_col}, again at {line}:{col} "
                "(JSON readers would silently keep only the last one)",
                pos,
                path,
            )
        if first is None:
            frame.key_offsets[key] = pos
        if self.on_prefix_line(path):
            self.key_offsets[path] = pos
        colon = self.skip_whitespace(after)
        if colon >= len(text) or text[colon] != ":":
            raise self.fail(f"expected ':' after the key, found {_describe_char(text, colon)}", colon, frame.path)
        frame.key = key
        return self.skip_whitespace(colon + 1), path

    def scalar(self, pos: int, path: JsonPath) -> tuple[Any, int]:
        """Decode the string, number or literal at ``pos`` exactly as :mod:`json` would."""
        text = self.text
        if text[pos] not in _SCALAR_START:
            raise self.fail(f"expected a value, found {_describe_token(text, pos)}", pos, path)
        if text.startswith(_NON_FINITE, pos) and self.strict(path):
            word = next(w for w in _NON_FINITE if text.startswith(w, pos))
            raise self.fail(f"{word} is not valid JSON; write the number out, or use a string or null", pos, path)
        try:
            return self.decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            message, offset = self.explain(exc)
            raise self.fail(message, offset, path) from None
        except ValueError as exc:  # int() refusing a number with thousands of digits
            raise self.fail(f"number cannot be read: {exc}", pos, path) from None

    def explain(self, exc: json.JSONDecodeError) -> tuple[str, int]:
        """Rephrase the decoder's terse messages (written to have a position appended) and say where to point."""
        text, pos = self.text, exc.pos
        if exc.msg.startswith("Unterminated string"):
            return "unterminated string", pos
        if exc.msg.startswith("Invalid control character"):
            return f"control character {_describe_char(text, pos)} must be escaped inside a JSON string", pos
        if exc.msg.startswith("Invalid \\escape"):
            return f'invalid escape "{text[pos : pos + 2]}" in string', pos
        if exc.msg.startswith("Invalid \\u"):  # the decoder points at the "u"; point at the backslash
            escape = text[pos - 1 : pos + 5].split('"')[0]
            return f'invalid escape "{escape}" in string: \\u must be followed by four hex digits', pos - 1
        if exc.msg.startswith("Expecting value"):
            return f"expected a value, found {_describe_token(text, pos)}", pos
        return exc.msg, pos

    def decode_lenient(self, pos: int, depth: int) -> tuple[Any, int] | None:
        """Decode a whole container outside the template with the C decoder, or None to parse it by hand.

        Parsing by hand is slow but precise, so it is used whenever the fast path cannot give a clean
        answer: malformed input (to produce a positioned error), a RecursionError, or nesting that
        exceeds :data:`MAX_NESTING_DEPTH` (so the limit means the same thing everywhere).
        """
        try:
            value, end = self.decoder.raw_decode(self.text, pos)
        except (ValueError, RecursionError):
            return None
        if depth + _nesting_depth(value, MAX_NESTING_DEPTH - depth) > MAX_NESTING_DEPTH:
            return None
        return value, end


def _nesting_depth(value: object, limit: int) -> int:
    """Container nesting depth of a decoded value (a scalar is 0, ``[]`` is 1); stops counting past ``limit``."""
    deepest = 0
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children: Iterable[object]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def parse_json_document(
    text: str, *, file: str | None = None, prefix: Iterable[str | int] = (), strict_outside_prefix: bool = True
) -> SourceDocument:
    """Parse JSON text into a :class:`SourceDocument` that can locate values under ``prefix``.

    A leading byte-order mark is skipped. Any JSON value is accepted at the top level; it is the
    caller's business to require an object. With ``strict_outside_prefix=False``, values that are
    neither under ``prefix`` nor on the way to it are read with plain :mod:`json` leniency.

    Raises:
        TemplateError: malformed JSON, duplicate keys, NaN/Infinity, or excessive nesting, located.
    """
    if text.startswith(codecs.BOM_UTF8.decode("utf-8")):
        text = text[1:]
    prefix_path = tuple(prefix)
    parser = _Parser(text, file, prefix_path, strict_outside_prefix)
    value = parser.parse()
    return SourceDocument(value, file, text, prefix_path, parser.value_offsets, parser.key_offsets)


@dataclass(frozen=True)
class TemplateText:
    """A template source that is not a file (standard input): its bytes, and the name messages give it."""

    data: bytes
    name: str = "<stdin>"


def resolve_template_path(source: str) -> str:
    """What a user-supplied template argument names: the path itself if it exists, else a bundled template.

    A path that exists always wins over a bundled template of the same name. Raises TemplateError for
    an argument that is neither, suggesting the bundled templates it most resembles.
    """
    if os.path.lexists(source):
        return source
    bundled = bundled_path(source)
    if bundled is not None:
        return str(bundled)
    suggestions = " or ".join(map(quote, closest_names(os.path.basename(source))))
    if looks_like_name(source):
        hint = f"; did you mean {suggestions}?" if suggestions else ""
        raise TemplateError(
            f"no such file, and no bundled template of that name{hint} (`rtcompile list` shows them all)", file=source
        )
    hint = f" (did you mean the bundled template {suggestions}?)" if suggestions else ""
    raise TemplateError(f"no such file{hint}", file=source)


def _resolve_file(source: str) -> tuple[str, bool]:
    """The JSON file to read for a user-supplied path, and whether it must be a tokenizer config."""
    source = resolve_template_path(source)
    if os.path.isdir(source):
        config = os.path.join(source, TOKENIZER_CONFIG_NAME)
        if not os.path.isfile(config):
            raise TemplateError(
                f"directory has no {TOKENIZER_CONFIG_NAME}; point rtcompile at a model directory, "
                f"a {TOKENIZER_CONFIG_NAME}, or a response template JSON file",
                file=source,
            )
        return config, True
    return source, os.path.basename(source) == TOKENIZER_CONFIG_NAME


def _read_bytes(file: str) -> bytes:
    """Read the file, turning every OS-level failure and oversized input into a TemplateError."""
    limit_mib = MAX_SOURCE_BYTES // (1024 * 1024)
    too_big = f"file is larger than {limit_mib} MiB; rtcompile does not read template sources that large"
    try:
        if os.stat(file).st_size > MAX_SOURCE_BYTES:
            raise TemplateError(too_big, file=file)
        with open(file, "rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES + 1)
    except FileNotFoundError:
        raise TemplateError("no such file", file=file) from None
    except IsADirectoryError:
        raise TemplateError("is a directory, not a JSON file", file=file) from None
    except PermissionError:
        raise TemplateError("permission denied", file=file) from None
    except OSError as exc:
        raise TemplateError(f"cannot read file: {exc.strerror or exc}", file=file) from None
    if len(data) > MAX_SOURCE_BYTES:  # the size changed under us, or stat lied (pipes, /proc)
        raise TemplateError(too_big, file=file)
    return data


def _decode(data: bytes, file: str) -> str:
    """Decode UTF-8 (no byte-order mark), pointing precisely at the first undecodable byte."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE)):  # UTF-32 LE starts like 16 LE
        raise TemplateError(
            "file starts with a UTF-16 or UTF-32 byte-order mark; JSON files must be UTF-8, please re-save it as UTF-8",
            file=file,
            line=1,
            col=1,
        )
    if data.startswith(codecs.BOM_UTF8):
        raise TemplateError(
            "file starts with a UTF-8 byte-order mark, which JSON forbids and transformers cannot load; "
            "re-save it as UTF-8 without BOM",
            file=file,
            line=1,
            col=1,
        )
    skipped = 0
    body = data
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = body[: exc.start].decode("utf-8")
        line, col = _line_col(good, len(good))
        raise TemplateError(
            f"not valid UTF-8: byte 0x{body[exc.start]:02x} at byte offset {exc.start + skipped} "
            f"({exc.reason}); JSON files must be UTF-8",
            file=file,
            line=line,
            col=col,
        ) from None


def read_text_file(file: str) -> str:
    """A UTF-8 text file (a chat template, say), with every failure a located TemplateError."""
    return _decode(_read_bytes(file), file)


def read_json_file(file: str) -> Any:
    """A JSON file read exactly as leniently as transformers' ``json.load`` reads its configs.

    Only the reading is stricter (size, UTF-8, no byte-order mark); syntax errors name line:col.
    """
    text = read_text_file(file)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TemplateError(f"not valid JSON: {exc.msg}", file=file, line=exc.lineno, col=exc.colno) from None
    except RecursionError:
        raise TemplateError("JSON nested deeper than Python can read", file=file) from None


def _json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _template_from_text(text: str, file: str, must_be_config: bool) -> tuple[dict[str, Any], SourceDocument]:
    """Parse a source file's decoded text (BOM already removed) and pull out the response template.

    Deciding between a tokenizer config and a bare template: an object with a ``"response_template"``
    key is a config; so is anything read as ``tokenizer_config.json``; any other object is a bare
    template if it has ``"fields"``.
    """
    if not text.strip(" \t\r\n"):
        raise TemplateError(
            "file is empty; expected a JSON object (a tokenizer config or a response template)",
            file=file,
            line=1,
            col=1,
        )
    # First read it as a tokenizer config: only the "response_template" subtree is parsed strictly,
    # so a large config with quirks elsewhere is read as fast and as leniently as transformers reads it.
    parser = _Parser(text, file, _CONFIG_PREFIX, strict_outside_prefix=False)
    try:
        root = parser.parse()
    except TemplateError:
        if must_be_config or parser.failed_inside_prefix:
            raise
        # Probably a bare template: parse again so the error carries a root-relative path.
        parse_json_document(text, file=file)
        raise
    document = SourceDocument(root, file, text, _CONFIG_PREFIX, parser.value_offsets, parser.key_offsets)
    if not isinstance(root, dict):
        line, col = _line_col(text, parser.value_offsets[()])
        raise TemplateError(
            f"expected a JSON object (a tokenizer config or a response template) at the top level, "
            f"found {_json_type(root)}",
            file=file,
            line=line,
            col=col,
        )
    if TEMPLATE_KEY in root:
        template = root[TEMPLATE_KEY]
        if template is None:
            raise document.error(
                f'"{TEMPLATE_KEY}" is null, so this model has no response template; '
                "write one, or pass a response template JSON file instead"
            )
        if not isinstance(template, dict):
            raise document.error(f'"{TEMPLATE_KEY}" must be a JSON object, found {_json_type(template)}')
        return template, document
    if must_be_config:
        raise TemplateError(
            f'{file} has no "{TEMPLATE_KEY}" key, so this model ships no response template; add a '
            f'"{TEMPLATE_KEY}" object to it, or pass a response template JSON file instead',
            file=file,
        )
    if "fields" not in root:
        raise TemplateError(
            f'{file} is neither a tokenizer config (no "{TEMPLATE_KEY}" key) nor a response template (no "fields" key)',
            file=file,
            line=1,
            col=1,
        )
    # A bare template: every value is ours, so parse strictly with positions for all of it.
    bare = parse_json_document(text, file=file)
    assert isinstance(bare.value, dict)
    return bare.value, bare


def read_template_source(
    source: str | os.PathLike[str] | Mapping[str, Any] | TemplateText,
) -> tuple[dict[str, Any], SourceDocument | None]:
    """Load a response template from wherever the user pointed, with positions for error messages.

    ``source`` may be:

    * a path to a ``tokenizer_config.json`` (the template is its ``"response_template"`` value),
    * a path to any JSON file: an object with a ``"response_template"`` key is read as a tokenizer
      config, any other object with ``"fields"`` as a bare response template,
    * a model directory containing ``tokenizer_config.json``,
    * the name of a bundled template (``"qwen3"``), when no file of that name exists,
    * :class:`TemplateText`: the bytes of either kind of JSON file (standard input, say),
    * an already-loaded mapping, returned as-is (a ``dict``) with no document.

    Returns:
        The response template dict and the :class:`SourceDocument` it came from, whose paths are
        relative to the template.

    Raises:
        TemplateError: the file is missing, unreadable, too large, not UTF-8, not valid JSON, breaks
            the strictness rules described in the module docstring, or holds no response template.
    """
    if isinstance(source, Mapping):
        return (source if isinstance(source, dict) else dict(source)), None
    if isinstance(source, TemplateText):
        if len(source.data) > MAX_SOURCE_BYTES:
            raise TemplateError(f"input is larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB", file=source.name)
        return _template_from_text(_decode(source.data, source.name), source.name, must_be_config=False)
    path = os.fspath(source)
    file, must_be_config = _resolve_file(path)
    text = _decode(_read_bytes(file), file)
    return _template_from_text(text, file, must_be_config)
