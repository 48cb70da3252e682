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
    # Reasoning that opens only once its close is in sight: streaming waits at the open's literals.
    r"<r>(?=[\s\S]*?</r>)",
    r"(?:<t>|\[T\])(?=[\s\S]*?(?:</t>|\[/T\]))",
    r"\n\n(?=[\s\S]*?</think>)",  # a literal a leading-whitespace close's held-back run can take
    r"<n(?:a+)+>",  # a nested repeat, rewritten into one
    r"(?|<r1>|\[r\])",  # branch reset: regex fallback
    r"<l[^>]*?>",  # a lazy one-character repeat in a delimiter: regex fallback
    r"(?:<j>\s*|(?<=\})\s*,?\s*)\{",  # a branch that opens only right after a "}"
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
    r"(?<=</g>)\s*(?:</c>|(?=<g=))",  # a close that starts only right after "</g>"
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
    r"<r>(?=[\s\S]*?</r>)": ["<r>", "</r>", "</"],
    r"(?:<t>|\[T\])(?=[\s\S]*?(?:</t>|\[/T\]))": ["<t>", "[T]", "</t>", "[/T]", "[/"],
    r"\n\n(?=[\s\S]*?</think>)": ["\n\n", "\n", "</think>", "</th"],
    r"<n(?:a+)+>": ["<naa>", "<na", "<naab>"],
    r"(?|<r1>|\[r\])": ["<r1>", "[r]"],
    r"<l[^>]*?>": ["<l>", "<lab>", "<la"],
    r"\n(?=\n|$)": ["\n\n", "\n"],
    r"</q(?>\s*)>": ["</q>", "</q \n>"],
    r"(?:<j>\s*|(?<=\})\s*,?\s*)\{": ["<j>{", "<j> {", "}{", "} , {", "},"],
    r"(?<=</g>)\s*(?:</c>|(?=<g=))": ["</g></c>", "</g> \n</c>", "</g><g=", "</g> ", "</g"],
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


# --------------------------------------------------------------------------- templates with a grammar
#
# `templates()` draws every construct the language has, and the grammar builder refuses most of what it
# draws (a transform other than the OpenAI call shape, content other than text in a plain field, ...).
# `grammar_templates()` draws what real chat templates write and the builder follows: a tool-call field
# in one of the call styles below, an optional reasoning field, a content field, start anchors, literal
# and simple regex delimiters from pools shaped like the bundled templates'.

# Opens and closes of a call region that carries no name (the body says which tool).
CALL_OPENS = ["<tool_call>", "[TOOL_CALLS]", "<|tool_call_start|>", "<function_calls>", "<｜tool▁call▁begin｜>"]
CALL_OPEN_PATTERNS = [r"<tool_call>\s*", r"\[TOOL_CALLS\]\s*", r"(?:<tool_call>|<\|tool_call\|>)", r"<calls>\n?"]
CALL_CLOSES = ["</tool_call>", "[/TOOL_CALLS]", "<|tool_call_end|>", "</function_calls>", "<｜tool▁call▁end｜>"]
CALL_CLOSE_PATTERNS = [r"\s*</tool_call>", r"</tool_call>\s*", r"</calls>|<\|im_end\|>", r"</tool_call>(?:\n|$)"]
# Opens whose `name` group is the tool's name; the body is its arguments.
NAMED_OPENS = [
    r'<tool_call name="(?P<name>[^"]+)">',
    r"<function=(?P<name>[\w.-]+)>",
    r"<\|tool_call_begin\|>(?P<name>[^\s<|]+)<\|tool_sep\|>",
    r'<invoke name="(?P<name>[^"]+)">\s*',
    r"(?:<tool_call>\s*)?<call:(?P<name>[^\s<>]+)>",
]
NAMED_CLOSES = ["</tool_call>", "</function>", "<|tool_call_end|>", "</invoke>", "</call>"]
NAMED_CLOSE_PATTERNS = [r"\s*</function>", r"</invoke>\s*", r"</call>(?:\n|$)"]
# key/value tags of xml-inline arguments (after glm4_5, minimax_m2, kimi_k3, minicpm5, deepseek_v3_2)
ARGUMENT_TAGS = [
    r"<arg_key>(?P<key>.*?)</arg_key>(?:\s|\\n)*<arg_value>(?P<value>.*?)</arg_value>",
    r'<parameter name="(?P<key>[^"]+)">(?P<value>.*?)</parameter>',
    r'<\|open\|>argument key="(?P<key>[^"]+)"<\|sep\|>(?P<value>.*?)<\|close\|>argument<\|sep\|>',
    r"<param\s*name=[\"'](?P<key>[^\"']+)[\"']\s*>(?P<value>.*?)</param>",
    r"<p=(?P<key>[^>]+)>\s*(?P<value>.*?)\s*</p>",
]
# key=value arguments of a call written `name(key=value, ...)` (after olmo3 and minicpm)
KEY_VALUE_TAG = r"""(?P<key>[A-Za-z_]\w*)\s*=\s*(?P<value>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^,\s)"'\[\]{}]+)"""
KEY_VALUE_OPENS = [r"<function_calls>\s*(?P<name>[A-Za-z_][\w.-]*)\(", r"<\|tool_call\|>(?P<name>[A-Za-z_][\w.-]*)\("]
KEY_VALUE_CLOSES = [r"\)(?:\n|</function_calls>)", r"\)<\|/tool_call\|>", r"\)\s*</call>"]
# (name key, arguments key) of a JSON call object
CALL_KEYS = [("name", "arguments"), ("name", "parameters"), ("tool_name", "parameters"), ("function", "args")]
REASONING_DELIMITERS = [
    ("<think>", "</think>"),
    ("<|channel|>analysis<|message|>", "<|end|>"),
    ("[THINK]", "[/THINK]"),
    ("<|thought_start|>", "<|thought_end|>"),
]
REASONING_PATTERNS = [(r"<think>\s*", r"\s*</think>"), (r"(?:<think>|<\|think\|>)", r"</think>\n*")]
END_TOKENS = ["<|im_end|>", "<|eot_id|>", "</s>", "<|end_of_text|>"]
# start anchors, each with a prompt that ends in it
ANCHORS = {
    "<|im_start|>assistant\n": "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    "<|assistant|>": "<|user|>Hi<|end|><|assistant|>",
    "<|start_header_id|>assistant<|end_header_id|>\n\n": "<|start_header_id|>assistant<|end_header_id|>\n\n",
}
ANCHOR_PATTERNS = {
    r"<\|im_start\|>assistant\s*": "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    r"<\|assistant\|>\n?": "<|user|>Hi<|end|><|assistant|>\n",
}
CALL_STYLES = ["json-object", "json-keys", "json-list", "python-call-list", "named-json", "named-xml", "key-value"]

FUNCTION: dict[str, Any] = {"name": "{name}", "arguments": "{content}"}


@st.composite
def _region(
    draw: st.DrawFn, opens: list[str], open_patterns: list[str], closes: list[str], patterns: list[str]
) -> dict[str, Any]:
    """An open and a close, each a literal (or a short list of them) or a pattern."""
    region = draw(delimiter("open", opens, open_patterns or opens))
    region.update(draw(delimiter("close", closes, patterns or closes)))
    return region


@st.composite
def call_field(draw: st.DrawFn, style: str) -> dict[str, Any]:
    """A tool-call field in `style`, with the OpenAI call-shaped transform the grammar follows."""
    field: dict[str, Any]
    if style in ("json-object", "json-keys", "json-list", "python-call-list"):
        field = draw(_region(CALL_OPENS, CALL_OPEN_PATTERNS, CALL_CLOSES, CALL_CLOSE_PATTERNS))
        name, arguments = draw(st.sampled_from(CALL_KEYS))
        if style == "json-object":  # {"name": ..., "arguments": ...}, the function itself
            field.update(content="json", transform={"type": "function", "function": "{content}"})
        elif style == "json-keys":  # an object whose keys the transform names
            function = {"name": f"{{content.{name}}}", "arguments": f"{{content.{arguments}}}"}
            field.update(content="json", transform={"type": "function", "function": function})
        else:  # a list of calls, each made by the transform
            keys = ("name", "arguments") if style == "python-call-list" else (name, arguments)
            function = {"name": f"{{{keys[0]}}}", "arguments": f"{{{keys[1]}}}"}
            field.update(content=style if style == "python-call-list" else "json", transform_each=True)
            field["transform"] = {"type": "function", "function": function}
        if style in ("json-object", "json-keys") and draw(st.booleans()):
            field["repeats"] = True
        return field
    if style == "key-value":
        field = {"open_pattern": draw(st.sampled_from(KEY_VALUE_OPENS))}
        field["close_pattern"] = draw(st.sampled_from(KEY_VALUE_CLOSES))
        args: dict[str, Any] = {"tag_pattern": KEY_VALUE_TAG}
    else:
        field = {"open_pattern": draw(st.sampled_from(NAMED_OPENS))}
        field.update(draw(delimiter("close", NAMED_CLOSES, NAMED_CLOSE_PATTERNS)))
        args = {"tag_pattern": draw(st.sampled_from(ARGUMENT_TAGS))}
    if style == "named-json":
        field["content"] = "json"
    else:
        field["content"] = "xml-inline"
        if style == "key-value" or draw(st.booleans()):
            args["value_parser"] = {"name": "json", "args": {"allow_non_json": True}}
        field["content_args"] = args
    field["transform"] = {"type": "function", "function": dict(FUNCTION)}
    if draw(st.integers(0, 3)) > 0:
        field["repeats"] = True
    return field


@st.composite
def grammar_templates(draw: st.DrawFn) -> dict[str, Any]:
    """A realistic template the grammar builder can follow (see above): most draws have a grammar."""
    style = draw(st.sampled_from(CALL_STYLES))
    fields: dict[str, Any] = {}
    if draw(st.booleans()):
        name = draw(st.sampled_from(["reasoning_content", "thinking"]))
        reasoning: dict[str, Any] = {"content": "text"}
        if draw(st.integers(0, 3)) > 0:
            opens, closes = draw(st.sampled_from(REASONING_DELIMITERS))
            # (gigachat3, minimax_m1: an end token also ends unclosed reasoning)
            ends = draw(st.lists(st.sampled_from(END_TOKENS), max_size=1))
            reasoning.update(open=opens, close=[closes, *ends] if ends else closes)
        else:
            opens, closes = draw(st.sampled_from(REASONING_PATTERNS))
            reasoning.update(open_pattern=opens, close_pattern=closes)
        if draw(st.booleans()):
            reasoning["content_args"] = {"strip": True}
        fields[name] = reasoning
    fields[draw(st.sampled_from(["tool_calls", "calls"]))] = draw(call_field(style))
    content: dict[str, Any] = {"content": "text", "repeats": True, "join": ""}
    if draw(st.booleans()):
        content["close"] = draw(st.lists(st.sampled_from(END_TOKENS), min_size=1, max_size=2, unique=True))
    fields["content"] = content
    template: dict[str, Any] = {"fields": fields, "defaults": {"role": "assistant"}}
    if draw(st.booleans()):
        template["start_anchor"] = draw(st.sampled_from(sorted(ANCHORS)))
    else:
        template["start_anchor_pattern"] = draw(st.sampled_from(sorted(ANCHOR_PATTERNS)))
    return template


def grammar_prompts(template: dict[str, Any]) -> st.SearchStrategy[str]:
    """Prompts for a `grammar_templates()` template: none, a turn ending in the start anchor, and one that
    also opens the reasoning (the grammar then starts inside it)."""
    anchor = template.get("start_anchor")
    prompt = ANCHORS[anchor] if anchor is not None else ANCHOR_PATTERNS[template["start_anchor_pattern"]]
    prompts = ["", prompt]
    for name in ("reasoning_content", "thinking"):
        opens = template["fields"].get(name, {}).get("open")
        if isinstance(opens, str):
            prompts.append(prompt + opens)
    return st.sampled_from(prompts)
