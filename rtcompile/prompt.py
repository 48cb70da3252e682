"""Chat prompts rendered exactly as transformers 5.24.0's `apply_chat_template(..., tokenize=False)` renders them.

The client-side workflow (render the prompt, send it to a plain completions endpoint, parse the raw
output) only works if the prompt is the one the model was trained on, byte for byte. So the template
sees what transformers shows it: the same sandboxed Jinja environment (`trim_blocks`, `lstrip_blocks`,
`loopcontrols`, the `{% generation %}` tag, its `tojson`, `raise_exception`, `strftime_now`, `dict` and
`namespace`), messages with `None` values dropped and reasoning aliased under every name templates read,
tools given as JSON schemas or Python functions, and the tokenizer's special tokens (`bos_token`, ...)
as variables, read from the same files transformers reads them from.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, TypeAlias

import jinja2
import jinja2.exceptions
import jinja2.ext
import jinja2.nodes
import jinja2.parser
import jinja2.sandbox
import jinja2.utils

from rtcompile.errors import TemplateError
from rtcompile.frontend.source import TOKENIZER_CONFIG_NAME, read_json_file, read_text_file, resolve_template_path
from rtcompile.runtime.tool_schema import function_to_tool_schema

#: Files of a model directory that hold chat templates, as transformers names them.
CHAT_TEMPLATE_FILE = "chat_template.jinja"
CHAT_TEMPLATE_DIR = "additional_chat_templates"
SPECIAL_TOKENS_MAP_FILE = "special_tokens_map.json"

#: The tokenizer's named special tokens, which apply_chat_template passes to every template.
SPECIAL_TOKEN_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")

#: Names a message's reasoning is passed under; templates read the first, gpt-oss reads `thinking`.
REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")

_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "

Conversation: TypeAlias = "Sequence[Any]"


# --------------------------------------------------------------------------- where templates come from


@dataclass(frozen=True)
class ChatTemplates:
    """A model's chat template (or its named templates) and the special tokens it is rendered with."""

    template: str | Mapping[str, str] | None
    special_tokens: Mapping[str, str] = field(default_factory=dict)
    file: str | None = None
    #: The name of the bundled template these came from (`"qwen3"`), if they did.
    bundled_name: str | None = None

    def select(self, chat_template: str | None, tools: Any) -> str:
        """The template to render, chosen as `tokenizer.get_chat_template(chat_template, tools)` chooses it."""
        if isinstance(self.template, Mapping):
            if chat_template is not None and chat_template in self.template:
                return self.template[chat_template]
            if chat_template is None:
                if tools is not None and "tool_use" in self.template:
                    return self.template["tool_use"]
                if "default" in self.template:
                    return self.template["default"]
                raise TemplateError(
                    "the model has several chat templates and none is called 'default'; pass chat_template= with "
                    f"one of {sorted(self.template)}",
                    file=self.file,
                )
            return chat_template
        if chat_template is not None:
            return chat_template
        if self.template is None and self.bundled_name is not None:
            raise TemplateError(
                f"the bundled template {self.bundled_name!r} carries no chat template (templates/README.md says why, "
                "model by model); pass chat_template= with the model's Jinja source, or render from the model's "
                "directory or its tokenizer_config.json (`rtcompile list` shows which bundled templates have one)",
                file=self.file,
            )
        if self.template is None:
            raise TemplateError(
                f'no chat template here (no "chat_template" key, no {CHAT_TEMPLATE_FILE}); pass chat_template= '
                "with the Jinja source",
                file=self.file,
            )
        return self.template


ChatTemplateSource: TypeAlias = "ChatTemplates | Mapping[str, Any] | str | os.PathLike[str]"


def load_chat_templates(source: ChatTemplateSource) -> ChatTemplates:
    """Read the chat template(s) and special tokens from a model directory, a `tokenizer_config.json` (or
    any JSON file with a `"chat_template"` key, like the bundled templates), a `.jinja` file, a config dict,
    or the name of a bundled template (`"qwen3"`), resolved as `load_template` resolves it: a file or
    directory of that name wins, and an unknown name gets the closest names suggested.

    A directory is read as transformers' `from_pretrained` reads it: `chat_template.jinja` and
    `additional_chat_templates/*.jinja` take priority over the config's `"chat_template"`, and a legacy
    `special_tokens_map.json` adds to its special tokens.
    """
    if isinstance(source, ChatTemplates):
        return source
    if isinstance(source, Mapping):
        return _from_config(source, None)
    path = os.fspath(source)
    if path.endswith(".jinja"):  # Jinja source, never a bundled template's name
        return ChatTemplates(read_text_file(path), {}, path)
    given, path = path, resolve_template_path(path)
    if os.path.isdir(path):
        return _from_directory(path)
    config = read_json_file(path)
    if not isinstance(config, dict):
        raise TemplateError("expected a JSON object (a tokenizer config) at the top level", file=path)
    templates = _from_config(config, path)
    if path != given:  # a bundled template's name
        return dataclasses.replace(templates, bundled_name=given)
    return templates


def _from_directory(directory: str) -> ChatTemplates:
    config_file = os.path.join(directory, TOKENIZER_CONFIG_NAME)
    jinja_file = os.path.join(directory, CHAT_TEMPLATE_FILE)
    extra_dir = os.path.join(directory, CHAT_TEMPLATE_DIR)
    if not os.path.isfile(config_file) and not os.path.isfile(jinja_file):
        raise TemplateError(f"directory has neither {TOKENIZER_CONFIG_NAME} nor {CHAT_TEMPLATE_FILE}", file=directory)
    config = read_json_file(config_file) if os.path.isfile(config_file) else {}
    if not isinstance(config, dict):
        raise TemplateError("expected a JSON object at the top level", file=config_file)
    config = dict(config)
    special_map_file = os.path.join(directory, SPECIAL_TOKENS_MAP_FILE)
    if "added_tokens_decoder" not in config and os.path.isfile(special_map_file):
        # transformers merges this legacy file only into configs that predate `added_tokens_decoder`; its
        # objects are AddedTokens without the type tag.
        special_map = read_json_file(special_map_file)
        if isinstance(special_map, dict):
            config.update(
                {k: {**v, "__type": "AddedToken"} if isinstance(v, dict) else v for k, v in special_map.items()}
            )
    files: dict[str, str] = {}
    if os.path.isfile(jinja_file):
        files["default"] = read_text_file(jinja_file)
    if os.path.isdir(extra_dir):
        for name in sorted(os.listdir(extra_dir)):
            if name.endswith(".jinja"):
                files[name.removesuffix(".jinja")] = read_text_file(os.path.join(extra_dir, name))
    if files:
        config["chat_template"] = files["default"] if list(files) == ["default"] else files
    return _from_config(config, config_file if os.path.isfile(config_file) else jinja_file)


def _from_config(config: Mapping[str, Any], file: str | None) -> ChatTemplates:
    raw = config.get("chat_template")
    template: str | Mapping[str, str] | None
    if raw is None or isinstance(raw, str):
        template = raw
    elif isinstance(raw, Mapping) and all(isinstance(v, str) for v in raw.values()):
        template = dict(raw)
    elif isinstance(raw, list) and all(
        isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("template"), str)
        for entry in raw
    ):
        template = {entry["name"]: entry["template"] for entry in raw}
    else:
        raise TemplateError(
            '"chat_template" must be a string or a list of {"name", "template"} objects', ("chat_template",), file=file
        )
    return ChatTemplates(template, _special_tokens(config), file)


def _token_text(value: Any) -> str | None:
    """A special token's text: a string, or a serialised AddedToken's `content`."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and value.get("__type") == "AddedToken" and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def _special_tokens(config: Mapping[str, Any]) -> dict[str, str]:
    """What `tokenizer.special_tokens_map` holds for this config: the named tokens, then model-specific ones."""
    tokens: dict[str, str] = {}
    for name in SPECIAL_TOKEN_NAMES:
        text = _token_text(config.get(name))
        if text is not None:
            tokens[name] = text
    # Any other `*_token` string (image_token, ...) is a model-specific special token, as are the entries of
    # an `extra_special_tokens` object.
    for name, value in config.items():
        text = _token_text(value)
        if text is not None and isinstance(name, str) and name not in SPECIAL_TOKEN_NAMES and name.endswith("_token"):
            tokens[name] = text
    extra = config.get("extra_special_tokens")
    if isinstance(extra, dict):
        for name, value in extra.items():
            text = _token_text(value)
            if text is not None:
                tokens[str(name)] = text
    return tokens


# --------------------------------------------------------------------------- the Jinja environment


class _GenerationTag(jinja2.ext.Extension):
    """`{% generation %}...{% endgeneration %}` marks the assistant's tokens for training masks; rendering
    a prompt just renders its body."""

    tags = {"generation"}

    def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_render_body")
        return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _render_body(self, caller: Callable[[], str]) -> str:
        return caller()


class _TemplateDict:
    """`dict` inside templates: builds dicts, without exposing the class (and its attributes) to them."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


class _TemplateNamespace(jinja2.utils.Namespace):
    """`namespace` that refuses underscore-prefixed attributes, which lead to CPython internals."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 - Jinja's signature, so namespace(self=1) works
        self, args = args[0], args[1:]
        for name in dict(*args, **kwargs):
            _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, dict(*args, **kwargs))

    def __setitem__(self, name: str, value: Any) -> None:
        _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(
                f"Chat templates cannot store underscore-prefixed attributes on a namespace, but got {name!r}. "
                "Please rename the attribute."
            )


def _raise_exception(message: str) -> None:
    raise jinja2.exceptions.TemplateError(message)


def _tojson(
    value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
) -> str:
    # Jinja's own tojson escapes HTML characters, which no chat template wants.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format: str) -> str:  # noqa: A002 - the name templates call it with
    return datetime.now().strftime(format)


@lru_cache(maxsize=64)
def compile_chat_template(source: str) -> jinja2.Template:
    """The chat template compiled in transformers' sandboxed environment (cached, as transformers caches it)."""
    environment = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, jinja2.ext.loopcontrols]
    )
    environment.filters["tojson"] = _tojson
    environment.globals["raise_exception"] = _raise_exception
    environment.globals["strftime_now"] = _strftime_now
    environment.globals["dict"] = _TemplateDict()
    environment.globals["namespace"] = _TemplateNamespace
    return environment.from_string(source)


# --------------------------------------------------------------------------- what the template sees


def _plain(value: Any) -> Any:
    """`value` rebuilt from plain JSON types, anything else an inert `<TypeName>` placeholder.

    Templates from the Hub are untrusted code, and rich objects (arrays, images) carry methods the
    sandbox does not know are dangerous; transformers shows templates only plain data, and so do we.
    """
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    numpy = sys.modules.get("numpy")  # only an already-imported numpy can have made the value
    if numpy is not None and isinstance(value, numpy.generic):
        return _plain(value.item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return _plain(value.model_dump())
    return f"<{type(value).__name__}>"


def _objects_to_dicts(value: Any) -> Any:
    """Message objects (dataclasses, pydantic models such as the OpenAI SDK's) as dicts; media untouched."""
    if isinstance(value, Mapping):
        return {key: _objects_to_dicts(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_objects_to_dicts(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_objects_to_dicts(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _objects_to_dicts(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return _objects_to_dicts(value.model_dump())
    return value


def normalize_messages(conversation: Any) -> list[dict[str, Any]]:
    """Messages as dicts without the keys whose value is None (`content: None` beside tool calls, say),
    which many templates would render as "None"."""
    messages = _objects_to_dicts(getattr(conversation, "messages", conversation))
    normalized = []
    for message in messages:
        if not isinstance(message, dict):
            raise TypeError(f"Chat messages should be dicts, dataclasses or pydantic models, but got {message!r}.")
        normalized.append({key: value for key, value in message.items() if value is not None})
    return normalized


def _alias_reasoning(messages: list[Any]) -> list[Any]:
    """Reasoning under every name templates read it by: `reasoning_content`, and `thinking` for gpt-oss."""
    aliased = []
    for message in messages:
        if isinstance(message, dict):
            reasoning = next((message[key] for key in REASONING_KEYS if message.get(key) is not None), None)
            if reasoning is not None:
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        aliased.append(message)
    return aliased


def tool_schemas(tools: Sequence[Any] | None) -> list[Any] | None:
    """Tools as JSON schemas: dicts as they are, Python functions and methods through their docstrings."""
    if tools is None:
        return None
    schemas = []
    for tool in tools:
        if isinstance(tool, dict):
            schemas.append(tool)
        elif inspect.isfunction(tool) or inspect.ismethod(tool):
            schemas.append(function_to_tool_schema(tool))
        else:
            raise ValueError(
                "Tools should either be a JSON schema, or a callable function with type hints "
                "and a docstring suitable for auto-conversion to a schema."
            )
    return schemas


def render_chat_template(
    chat_template: str,
    messages: Conversation,
    *,
    tools: Sequence[Any] | None = None,
    documents: Sequence[Any] | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    **kwargs: Any,
) -> str:
    """Render one conversation with a chat template's source, as `render_jinja_template` does.

    `messages` should already be normalised (`normalize_messages`); `kwargs` are the template's variables
    (special tokens included). `render_prompt` is the entry point that does all of that.
    """
    compiled = compile_chat_template(chat_template)
    schemas = _plain(tool_schemas(tools))
    if documents is not None:
        for document in documents:
            if not isinstance(document, dict):
                raise TypeError("Documents should be a list of dicts with 'title' and 'text' keys!")
    plain_documents = _plain(documents)
    variables = _plain(kwargs)
    chat = _plain(messages.messages if hasattr(messages, "messages") else messages)
    for message in chat:
        if not isinstance(message, dict):
            raise TypeError(f"Chat messages should be dicts, dataclasses or pydantic models, but got {message!r}.")
    chat = _alias_reasoning(chat)
    final_text: Any = None
    if continue_final_message:
        final_text = _tag_final_message(chat, chat_template, continue_final_message)
    rendered: str = compiled.render(
        messages=chat,
        tools=schemas,
        documents=plain_documents,
        add_generation_prompt=add_generation_prompt,
        **variables,
    )
    if continue_final_message:
        rendered = _cut_at_tag(rendered, final_text)
    return rendered


def _tag_final_message(chat: list[dict[str, Any]], chat_template: str, key: bool | str) -> Any:
    """Append the continue tag to the final message's text (every reasoning alias of it); return that text."""
    if not chat:
        raise ValueError("continue_final_message is set but the conversation is empty!")
    key = key if isinstance(key, str) else "content"
    final = chat[-1].get(key)
    if final is None:
        raise ValueError(f'continue_final_message is set but the final message has no "{key}" to continue!')
    keys = [key]
    if key in REASONING_KEYS:
        keys = [k for k in REASONING_KEYS if chat[-1].get(k) == final]
    if not any(k in chat_template for k in keys):
        raise ValueError(
            f'continue_final_message is set to "{key}" but this is not an accepted field in the chat_template'
        )
    if isinstance(final, (list, tuple)):
        for block in reversed(final):
            if "text" in block:
                text = block["text"]
                block["text"] = block["text"] + _CONTINUE_TAG
                return text
        raise ValueError(
            "continue_final_message is set but we could not find any text to continue in the final message!"
        )
    for k in keys:
        chat[-1][k] = chat[-1][k] + _CONTINUE_TAG
    return final


def _cut_at_tag(rendered: str, final_text: Any) -> str:
    if final_text.strip() not in rendered or _CONTINUE_TAG.strip() not in rendered:
        raise ValueError(
            "continue_final_message is set but the final message does not appear in the chat after "
            "applying the chat template! This can happen if the chat template deletes portions of "
            "the final message. Please verify the chat template and final message in your chat to "
            "ensure they are compatible."
            f"Final message to continue: {final_text.strip()}\nRendered chat:\n{rendered}"
        )
    at = rendered.rindex(_CONTINUE_TAG.strip())
    if rendered[at : at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return rendered[:at]  # the template kept the spacing
    return rendered[:at].rstrip()  # it trimmed the message's trailing spacing, so trim ours too


# --------------------------------------------------------------------------- the entry point


def render_prompt(
    source: ChatTemplateSource,
    messages: Conversation,
    *,
    tools: Sequence[Any] | None = None,
    add_generation_prompt: bool | None = None,
    documents: Sequence[Any] | None = None,
    continue_final_message: bool | str = False,
    chat_template: str | None = None,
    **kwargs: Any,
) -> str:
    """The prompt string for `messages`, exactly as `tokenizer.apply_chat_template(messages, tools=tools,
    add_generation_prompt=..., tokenize=False, **kwargs)` returns it.

    `source` is a model directory, a `tokenizer_config.json` (or any JSON file with a `"chat_template"`
    key), a `.jinja` file, a config dict, a `ChatTemplates`, or the name of a bundled template that
    carries its model's chat template (`"qwen3"`). `tools` are JSON schemas or Python
    functions with Google-style docstrings. `add_generation_prompt` defaults to True (the point is to
    have the model answer), or False with `continue_final_message`. `chat_template` picks one of a
    model's named templates, or is the Jinja source itself. `kwargs` are template variables
    (`enable_thinking=False`, `reasoning_effort="high"`, ...); they override the special tokens.

    Raises:
        TemplateError: the source cannot be read or has no chat template.
        jinja2.TemplateError: the template fails (its `raise_exception`, a syntax error).
        ValueError, TypeError: what transformers raises for the same input.
    """
    templates = load_chat_templates(source)
    template = templates.select(chat_template, tools)
    if add_generation_prompt is None:
        add_generation_prompt = not continue_final_message
    if isinstance(messages, (list, tuple)) and not messages:
        raise ValueError("Cannot apply chat template to an empty conversation. Provide at least one message.")
    if continue_final_message and add_generation_prompt:
        raise ValueError(
            "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when "
            "you want the model to continue the final message, and add_generation_prompt when you want to add a "
            "header that will prompt it to start a new assistant message instead."
        )
    return render_chat_template(
        template,
        normalize_messages(messages),
        tools=tools,
        documents=documents,
        add_generation_prompt=add_generation_prompt,
        continue_final_message=continue_final_message,
        **{**templates.special_tokens, **kwargs},
    )
