"""Hypothesis strategies: response templates, streams built from their delimiters, chunkings.

Templates mix literal and regex delimiters, every content parser, repeats/join/optional,
transforms with captures and dotted paths. Streams are built mostly from the template's own
delimiters, truncated delimiters (near misses), content that parses, and Unicode traps, so that
the interesting parser states are reached often.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# Characters that behave differently in `regex` and stdlib `re`, or in str.strip / json.
UNICODE_TRAPS = [
    "\u0301",  # combining acute accent: \w in `regex`, not in `re`
    "\u00b2",  # superscript two: \d in `re`, not in `regex`
    "\u0663",  # Arabic-Indic digit three
    "\u001c",  # file separator: \s in `re`, not in `regex`
    "\u2028",  # line separator
    "\u3000",  # ideographic space
    "\u00a0",  # no-break space
    "é",
    "日本",
    "\U0001f600",
    "\x00",
]

PLAIN = st.sampled_from(
    ["hello", " ", "\n", "x", "42", "3.5", "true", "{", "}", '"', ":", ",", "a-b", "<", ">", "/", "|"]
)

# Literal delimiters: chosen so that some are prefixes of others and some share characters.
LITERAL_OPENS = ["<think>", "<tool_call>", "[TOOL_CALLS]", "<|channel|>", "<a>", "<", "<<", "<x"]
LITERAL_CLOSES = ["</think>", "</tool_call>", "<|end|>", "</a>", "\n\n", ">", "<|im_end|>"]
# Regex delimiters in the `regex` module's syntax, with the constructs real templates use.
REGEX_OPENS = [
    r"<b\s*>",
    r"<f=(?P<name>[\w.-]+)>",
    r"<\|c\|>(?P<name>\w+)",
    r"<\|c\|>to=(?P<name>\w+).*?<\|m\|>",
    r"\[C\]\s*",
    r"(?:<q>|<Q>)",
    # They look before the match or test for the start: the engine must keep enough committed text.
    r"(?<![a-z])<x>",
    r"^<s>",
    # Constructs the compiler used to refuse: now translated exactly, or matched with the regex module.
    r"<\|c\|>to=(?P<name>\w+)<\|m\|>|to=(?P<name>\w+)<\|c\|>",  # one name in both orders
    r"(?=[\s\S]*?</think>)",  # TRL's reasoning open: a lazy lookahead
    r"<n(?:a+)+>",  # a nested repeat, rewritten into one
    r"(?|<r1>|\[r\])",  # branch reset: regex fallback
    r"<l[^>]*?>",  # a lazy one-character repeat in a delimiter: regex fallback
]
REGEX_CLOSES = [
    r"</b\s*>",
    r"\s*</f>",
    r"</f>|$",
    r"<\|e\|>(?P<tail>\w*)",
    r"\n(?=\n)",
    r"(?:</q>)+",
    r"(?<=\w)</w>",
    r"\bend\b",
    r"\n(?=\n|$)",  # a variable-width lookahead close
    r"</q(?>\s*)>",  # an atomic group in a delimiter: regex fallback
]


@st.composite
def delimiter(draw: st.DrawFn, kind: str, literal_pool: list[str], regex_pool: list[str]) -> dict[str, Any]:
    if draw(st.booleans()):
        if draw(st.integers(0, 3)) == 0:
            return {kind: draw(st.lists(st.sampled_from(literal_pool), min_size=1, max_size=3))}
        return {kind: draw(st.sampled_from(literal_pool))}
    return {f"{kind}_pattern": draw(st.sampled_from(regex_pool))}


CONTENT = st.sampled_from(
    ["text", "text", "int", "float", "bool", "json", "xml-inline", "kv-lines", "python-call-list"]
)


# xml-inline tag patterns; the first uses a backreference (complete matching only, so the compiler
# translates it exactly: see `rtcompile.regex.translate.translate_complete`).
TAG_PATTERNS = [
    r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>",
    r"<p=(?P<key>[^>]+)>\s*(?P<value>.*?)\s*</p>",
    r"(?>(?P<key>[a-z]+))=(?P<value>[^;]*?);",  # atomic group and lazy repeat: complete matching only
    r"(?P<key>k)=(?P<value>\w)|(?P<key>j)=(?P<value>\d)",  # duplicate names: regex fallback here
]


@st.composite
def content_spec(draw: st.DrawFn, compilable: bool = False) -> dict[str, Any]:
    content = draw(CONTENT)
    spec: dict[str, Any] = {"content": content}
    args: dict[str, Any] = {}
    if content in ("text", "int", "float", "bool", "kv-lines") and draw(st.booleans()):
        args["strip"] = draw(st.booleans())
    if content == "json":
        if draw(st.booleans()):
            args["allow_non_json"] = True
        if draw(st.booleans()):
            args["unquoted_keys"] = True
        if draw(st.integers(0, 3)) == 0:
            args["string_delims"] = [["<<", ">>"]]
    if content == "xml-inline":
        args["tag_pattern"] = draw(st.sampled_from(TAG_PATTERNS))
        if draw(st.booleans()):
            args["value_parser"] = {
                "name": draw(st.sampled_from(["json", "int", "text"])),
                "args": {"allow_non_json": True},
            }
        if draw(st.booleans()):
            args["merge_duplicates"] = True
    if content == "kv-lines":
        if draw(st.booleans()):
            args["kv_sep"] = draw(st.sampled_from(["=", ": "]))
        if draw(st.booleans()):
            args["value_parser"] = {"name": "json", "args": {"allow_non_json": True}}
    if args:
        spec["content_args"] = args
    return spec


def _captures(field: dict[str, Any]) -> list[str]:
    import regex

    names: list[str] = []
    for key in ("open_pattern", "close_pattern"):
        if key in field:
            names += list(regex.compile(field[key]).groupindex)
    return names


@st.composite
def transform_spec(draw: st.DrawFn, captures: list[str]) -> Any:
    leaves = ["{content}", *[f"{{{c}}}" for c in captures], "function", 7, None, True]
    # A bare `None` transform means "no transform"; keep it inside containers only.
    if draw(st.integers(0, 3)) == 0:
        leaves.append("{content.name}")
    leaf = st.sampled_from(leaves)
    return draw(
        st.one_of(
            st.fixed_dictionaries({"type": st.just("function"), "function": leaf}),
            st.fixed_dictionaries({"name": leaf, "arguments": leaf}),
            st.lists(leaf, max_size=2),
            leaf.filter(lambda value: value is not None),
        )
    )


FIELD_NAMES = ["content", "reasoning_content", "tool_calls", "x", "thinking"]


@st.composite
def templates(draw: st.DrawFn, compilable: bool = False) -> dict[str, Any]:
    """A valid response template (the reference loads it); `compilable`: one rtcompile can compile too."""
    names = draw(st.lists(st.sampled_from(FIELD_NAMES), min_size=1, max_size=4, unique=True))
    implicit = draw(st.sampled_from([None, *names]))
    fields: dict[str, Any] = {}
    for name in names:
        field: dict[str, Any] = {}
        if name != implicit:
            field.update(draw(delimiter("open", LITERAL_OPENS, REGEX_OPENS)))
        if draw(st.integers(0, 4)) > 0:
            field.update(draw(delimiter("close", LITERAL_CLOSES, REGEX_CLOSES)))
        field.update(draw(content_spec(compilable)))
        if draw(st.booleans()):
            field["repeats"] = True
            if field["content"] == "text" and draw(st.booleans()):
                field["join"] = draw(st.sampled_from(["", "\n"]))
        if draw(st.integers(0, 5)) == 0:
            field["optional"] = False
        captures = _captures(field)
        if captures or draw(st.integers(0, 3)) == 0:
            field["transform"] = draw(transform_spec(captures))
        fields[name] = field
    template: dict[str, Any] = {"fields": fields}
    if draw(st.booleans()):
        template["start_anchor"] = draw(st.sampled_from(["<|im_start|>assistant\n", "<a>", "\n"]))
    else:
        template["start_anchor_pattern"] = draw(st.sampled_from([r"<\|im_start\|>assistant\s*", r"^", r"A+"]))
    if draw(st.booleans()):
        template["defaults"] = {"role": "assistant"}
    return template


def _delimiter_texts(template: dict[str, Any]) -> list[str]:
    """Concrete strings that match (or nearly match) the template's delimiters."""
    texts: list[str] = []
    for field in template["fields"].values():
        for key in ("open", "close"):
            value = field.get(key)
            if isinstance(value, str):
                texts.append(value)
            elif isinstance(value, list):
                texts.extend(value)
        for key in ("open_pattern", "close_pattern"):
            if key in field:
                texts.extend(EXAMPLES_FOR_PATTERN.get(field[key], []))
    return texts or ["<>"]


EXAMPLES_FOR_PATTERN = {
    r"<b\s*>": ["<b>", "<b \n>"],
    r"<f=(?P<name>[\w.-]+)>": ["<f=get_weather>", "<f=a.b-c>", "<f=é\u0301>"],
    r"<\|c\|>(?P<name>\w+)": ["<|c|>analysis ", "<|c|>x\u0301"],
    r"<\|c\|>to=(?P<name>\w+).*?<\|m\|>": ["<|c|>to=fn json<|m|>", "<|c|>to=f<|m|>"],
    r"\[C\]\s*": ["[C]", "[C] \n"],
    r"(?:<q>|<Q>)": ["<q>", "<Q>"],
    r"</b\s*>": ["</b>", "</b  >"],
    r"\s*</f>": [" </f>", "</f>"],
    r"</f>|$": ["</f>"],
    r"<\|e\|>(?P<tail>\w*)": ["<|e|>", "<|e|>end "],
    r"\n(?=\n)": ["\n\n"],
    r"(?:</q>)+": ["</q>", "</q></q>"],
    r"(?<![a-z])<x>": ["<x>", "a<x>", " <x>"],
    r"^<s>": ["<s>"],
    r"(?<=\w)</w>": ["a</w>", "</w>", " </w>"],
    r"\bend\b": ["end", " end ", "xend", "end."],
    r"<\|c\|>to=(?P<name>\w+)<\|m\|>|to=(?P<name>\w+)<\|c\|>": ["<|c|>to=f<|m|>", "to=g<|c|>", "to=h<|m|>"],
    r"(?=[\s\S]*?</think>)": ["</think>", "</thi"],
    r"<n(?:a+)+>": ["<naa>", "<na", "<naab>"],
    r"(?|<r1>|\[r\])": ["<r1>", "[r]"],
    r"<l[^>]*?>": ["<l>", "<lab>", "<la"],
    r"\n(?=\n|$)": ["\n\n", "\n"],
    r"</q(?>\s*)>": ["</q>", "</q \n>"],
}

BODIES = [
    '{"name": "f", "arguments": {"a": 1}}',
    "[1, 2]",
    "[get(a=1, b='x')]",
    "[f()]",
    "k: v\nn: 2",
    "<p=k>1</p><p=k>[2]</p>",
    "<a>x</a>",
    "k=v;j=1;",
    "{name: 'v'}",
    "<<str>>",
    " 12 ",
    "-0.5",
    "True",
]


@st.composite
def streams(draw: st.DrawFn, template: dict[str, Any]) -> str:
    """Model output for `template`: delimiters, near-delimiters, parseable bodies, traps, text."""
    delims = _delimiter_texts(template)
    piece = st.one_of(
        st.sampled_from(delims),
        st.sampled_from(delims).flatmap(lambda d: st.integers(1, max(1, len(d) - 1)).map(lambda n: d[:n])),
        st.sampled_from(BODIES),
        st.sampled_from(UNICODE_TRAPS),
        PLAIN,
    )
    return "".join(draw(st.lists(piece, max_size=14)))


@st.composite
def chunkings(draw: st.DrawFn, text: str) -> list[str]:
    """A random cut of `text` into chunks (empty chunks included), like token streams and speculative bursts."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


# Tool schemas for coercion: wrapped and bare, integer/number/boolean/string/object parameters.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": ["number", "null"]}, "k": {"type": "boolean"}},
            },
        },
    },
    {"name": "get", "parameters": {"properties": {"a": {"type": "string"}, "b": {"anyOf": [{"type": "object"}]}}}},
]


def prefixes(template: dict[str, Any]) -> st.SearchStrategy[str]:
    """Prompts: none, the anchor alone, a multi-turn history, and ones that open a region."""
    anchor = template.get("start_anchor", "<|im_start|>assistant\n")
    return st.sampled_from(["", anchor, f"user turn{anchor}old{anchor}", f"{anchor}<think>", "<think>\n"])
