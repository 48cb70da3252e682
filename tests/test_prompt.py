"""`render_prompt` against transformers 5.24.0's own `apply_chat_template(..., tokenize=False)`.

The reference is a real tokenizer: a tiny word-level one saved with `save_pretrained` around each
bundled chat template (and around hand-written ones for the environment's corners), loaded back with
`AutoTokenizer.from_pretrained`. `render_prompt` reads the same directory. Both must render the same
string for conversations with tools (schemas and Python functions), reasoning, tool calls and results,
multi-turn history and template variables -- or raise the same exception with the same message.
"""

from __future__ import annotations

import datetime as datetime_module
import json
from pathlib import Path
from typing import Any

import jinja2
import pytest
import transformers.utils.chat_template_utils as reference_utils
from openai.types.chat import ChatCompletionMessage
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

import rtcompile.prompt
from rtcompile import TemplateError, load_template
from rtcompile.prompt import load_chat_templates, render_prompt
from rtcompile.tooling.lint import chat_template_checks

ROOT = Path(__file__).resolve().parent.parent
CHAT_TEMPLATE_MODELS = sorted(
    path.stem
    for path in (ROOT / "templates").glob("*.json")
    if "chat_template" in json.loads(path.read_text(encoding="utf-8"))
)


def chat_template_of(model: str) -> str:
    template: str = json.loads((ROOT / "templates" / f"{model}.json").read_text(encoding="utf-8"))["chat_template"]
    return template


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """`strftime_now` reads the clock in both renderers; pin it so a run across midnight cannot differ."""

    class FrozenDatetime(datetime_module.datetime):
        @classmethod
        def now(cls, tz: Any = None) -> FrozenDatetime:
            return cls(2026, 3, 14, 15, 9, 26)

    monkeypatch.setattr(reference_utils, "datetime", FrozenDatetime)
    monkeypatch.setattr(rtcompile.prompt, "datetime", FrozenDatetime)


def model_directory(path: Path, template: str | None, /, **config: Any) -> Path:
    """A tokenizer directory as `save_pretrained` writes it, with `config` merged into tokenizer_config.json."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    make_tokenizer: Any = PreTrainedTokenizerFast  # untyped in transformers
    tokenizer = make_tokenizer(
        tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>", chat_template=template
    )
    tokenizer.save_pretrained(path)
    if config:
        config_file = path / "tokenizer_config.json"
        merged = {**json.loads(config_file.read_text(encoding="utf-8")), **config}
        config_file.write_text(json.dumps(merged), encoding="utf-8")
    return path


def outcome(render: Any) -> Any:
    try:
        return render()
    except Exception as error:  # noqa: BLE001 - the exception is part of the behaviour compared
        return (type(error).__name__, str(error))


def both(directory: Path, messages: Any, *, reference: Any = None, **options: Any) -> tuple[Any, Any]:
    """(transformers, rtcompile) for the same call; `reference` is the directory's tokenizer, if loaded already."""
    reference = reference or AutoTokenizer.from_pretrained(directory)
    add_generation_prompt = options.pop("add_generation_prompt", True)
    expected = outcome(
        lambda: reference.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=add_generation_prompt, **options
        )
    )
    got = outcome(lambda: render_prompt(directory, messages, add_generation_prompt=add_generation_prompt, **options))
    return got, expected


# --------------------------------------------------------------------------- conversations


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Unit"},
            },
            "required": ["city"],
        },
    },
}


def search_web(query: str, limit: int = 5) -> list[str]:
    """Search the web.

    Args:
        query: What to look for.
        limit: How many results to return.

    Returns:
        The result URLs.
    """
    return []


CALL = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich", "unit": "celsius"}}}

CONVERSATIONS: dict[str, list[dict[str, Any]]] = {
    "single_turn": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is 17 * 3?"},
    ],
    "multi_turn_with_reasoning": [
        {"role": "user", "content": "Hi!"},
        {"role": "assistant", "content": "Hello! How can I help?", "reasoning_content": "Greet back."},
        {"role": "user", "content": 'Tell me a joke <b>now</b> & "quickly".'},
    ],
    "tool_round_trip": [
        {"role": "system", "content": "Use tools when needed."},
        {"role": "user", "content": "Weather in Zürich?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "content": '{"temperature": 21}', "name": "get_weather"},
        {"role": "assistant", "content": "It is 21 °C.", "thinking": "The tool said 21."},
        {"role": "user", "content": "And tomorrow?"},
    ],
    "assistant_last": [
        {"role": "user", "content": "Start a story."},
        {"role": "assistant", "content": "Once upon a time"},
    ],
}

OPTIONS: dict[str, dict[str, Any]] = {
    "plain": {},
    "tools": {"tools": [WEATHER_TOOL]},
    "python_tool": {"tools": [WEATHER_TOOL, search_web]},
    "no_generation_prompt": {"add_generation_prompt": False},
    "variables": {"enable_thinking": False, "reasoning_effort": "high", "tools": [WEATHER_TOOL]},
    "continue": {"add_generation_prompt": False, "continue_final_message": True},
}


def sdk_history() -> list[Any]:
    """History straight from the SDK (pydantic objects, `content=None`, arguments as JSON strings)."""
    sdk = ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        }
    )
    return [{"role": "user", "content": "Oslo?"}, sdk, {"role": "tool", "content": "cold", "tool_call_id": "call_1"}]


@pytest.mark.parametrize("model", CHAT_TEMPLATE_MODELS)
def test_bundled_chat_templates(tmp_path: Path, model: str) -> None:
    """Every conversation with every option, and SDK history, through one tokenizer per model."""
    directory = model_directory(tmp_path, chat_template_of(model))
    reference = AutoTokenizer.from_pretrained(directory)
    calls = [(CONVERSATIONS[c], OPTIONS[o]) for c in sorted(CONVERSATIONS) for o in sorted(OPTIONS)]
    calls.append((sdk_history(), {"tools": [WEATHER_TOOL]}))
    for messages, options in calls:
        got, expected = both(directory, messages, reference=reference, **dict(options))
        assert got == expected, (messages, options)


# Fields a bundled chat template never renders back, by its own design (templates/README.md says why):
# it drops reasoning from history, or reads it under another key (`thought`).
NOT_RENDERED_BACK = {
    **dict.fromkeys(
        ["deepseek_r1", "deepseek_v3_1", "granite3", "internlm2", "minicpm", "minimax_m1", "olmo3"],
        {"reasoning_content"},
    ),
    # It moves a final assistant turn to the generation prompt as plain text, calls dropped.
    "llama_nemotron_nano_v2": {"reasoning_content", "tool_calls"},
}


@pytest.mark.filterwarnings("ignore::rtcompile.frontend.errors.TemplateWarning")  # the template's own lint
@pytest.mark.parametrize("model", CHAT_TEMPLATE_MODELS)
def test_bundled_chat_templates_pass_the_lint(model: str) -> None:
    """What `rtcompile lint --chat-template` checks: the start anchor finds the generation prompt (with and
    without tools or thinking), and every parsed field renders back, except where the model's template says no."""
    findings = chat_template_checks(load_template(model), chat_template_of(model))
    assert [f.message for f in findings if f.severity == "error"] == []
    unrendered = {f.path[1] for f in findings if f.severity == "warning" and "never renders field" in f.message}
    assert unrendered == NOT_RENDERED_BACK.get(model, set())
    assert [f for f in findings if f.severity == "warning" and "never renders field" not in f.message] == []


def test_the_conversations_render_somewhere() -> None:
    """Guard against the comparison above passing only because everything raises."""
    rendered = render_prompt(
        ROOT / "templates" / "qwen3.json", CONVERSATIONS["tool_round_trip"], tools=[WEATHER_TOOL, search_web]
    )
    assert '"name": "search_web"' in rendered and "Zürich" in rendered and rendered.endswith("<|im_start|>assistant\n")
    assert render_prompt(
        ROOT / "templates" / "qwen3.json", CONVERSATIONS["single_turn"], enable_thinking=False
    ).endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")


# --------------------------------------------------------------------------- the environment's corners


CORNERS = {
    "tojson_options": "{{ messages[0] | tojson(indent=2, sort_keys=True) }}|{{ '<&>' | tojson }}",
    "raise_exception": "{{ raise_exception('no ' + messages[0].role) }}",
    "strftime_now": "{{ strftime_now('%Y-%m-%d %H:%M') }}",
    "namespace_and_dict": "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}"
    "{{ ns.n }}{{ dict(a=1) }}{{ dict.fromkeys(['x']) }}",
    "namespace_underscore": "{% set ns = namespace(_x=1) %}",
    "loopcontrols": "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}{{ m.role }}{% endfor %}",
    "generation_tag": "{% for m in messages %}{% generation %}[{{ m.content }}]{% endgeneration %}{% endfor %}",
    "trim_and_lstrip": "  {% if true %}\n  x\n  {% endif %}\n{{ bos_token }}{{ eos_token }}{{ pad_token }}",
    "special_tokens_overridden": "{{ bos_token }}|{{ eos_token }}",
    "none_dropped_and_aliases": "{% for m in messages %}{{ m.keys() | list }}{{ m.thinking }}{{ m.reasoning_content }}"
    "{% endfor %}",
    "sandbox": "{{ messages.__class__ }}",
    "tools_and_documents": "{{ tools | tojson }}{{ documents | tojson }}",
    "syntax_error": "{% if %}",
}
CORNER_MESSAGES = [
    {"role": "user", "content": "a", "name": None},
    {"role": "assistant", "content": "b", "reasoning": "r"},
]


@pytest.mark.parametrize("corner", sorted(CORNERS))
def test_environment_corners(tmp_path: Path, corner: str) -> None:
    directory = model_directory(tmp_path, CORNERS[corner], pad_token="<pad>")
    options: dict[str, Any] = {}
    if corner == "special_tokens_overridden":
        options["bos_token"] = "[BOS]"
    if corner == "tools_and_documents":
        options.update(tools=[search_web], documents=[{"title": "T", "text": "body"}])
    got, expected = both(directory, CORNER_MESSAGES, **options)
    assert got == expected


# --------------------------------------------------------------------------- where templates come from


def test_named_templates_in_the_directory(tmp_path: Path) -> None:
    directory = model_directory(tmp_path, "default:{{ messages[0].content }}")
    (directory / "additional_chat_templates").mkdir()
    (directory / "additional_chat_templates" / "tool_use.jinja").write_text("tools:{{ tools | length }}")
    messages = [{"role": "user", "content": "x"}]
    for options in ({}, {"tools": [WEATHER_TOOL]}, {"chat_template": "tool_use"}, {"chat_template": "inline {{ 1 }}"}):
        got, expected = both(directory, messages, **dict(options))
        assert got == expected


def test_legacy_list_of_named_templates(tmp_path: Path) -> None:
    named = [{"name": "default", "template": "D"}, {"name": "rag", "template": "R{{ documents | length }}"}]
    directory = model_directory(tmp_path, None, chat_template=named)
    messages = [{"role": "user", "content": "x"}]
    for options in ({}, {"chat_template": "rag", "documents": [{"title": "t", "text": "x"}]}):
        got, expected = both(directory, messages, **dict(options))
        assert got == expected


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"pad_token": {"__type": "AddedToken", "content": "<pad>", "lstrip": False, "rstrip": False,
                       "normalized": False, "single_word": False, "special": True}},
        {"image_token": "<image>", "extra_special_tokens": {"video_token": "<video>"}},
        {"audio_token": {"__type": "AddedToken", "content": "<audio>", "lstrip": False, "rstrip": False,
                         "normalized": False, "single_word": False, "special": True}},
    ],
)  # fmt: skip
def test_special_tokens_are_the_tokenizers(tmp_path: Path, config: dict[str, Any]) -> None:
    directory = model_directory(tmp_path, "x", **config)
    reference = AutoTokenizer.from_pretrained(directory)
    assert dict(load_chat_templates(directory).special_tokens) == reference.special_tokens_map


def test_legacy_special_tokens_map(tmp_path: Path) -> None:
    directory = model_directory(tmp_path, "{{ bos_token }}{{ sep_token }}")
    (directory / "special_tokens_map.json").write_text(
        json.dumps({"sep_token": {"content": "<pad>", "lstrip": False, "rstrip": False, "normalized": False}})
    )
    reference = AutoTokenizer.from_pretrained(directory)
    assert dict(load_chat_templates(directory).special_tokens) == reference.special_tokens_map
    got, expected = both(directory, [{"role": "user", "content": "x"}])
    assert got == expected == "<s><pad>"


def test_other_sources(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "hi"}]
    jinja = tmp_path / "chat.jinja"
    jinja.write_text("{{ bos_token }}{{ messages[0].content }}{% if add_generation_prompt %}>{% endif %}")
    assert render_prompt(jinja, messages) == "hi>"
    assert render_prompt(jinja, messages, bos_token="<s>", add_generation_prompt=False) == "<s>hi"
    assert render_prompt({"chat_template": "{{ eos_token }}", "eos_token": "</s>"}, messages) == "</s>"
    bundled = ROOT / "templates" / "llama3_1.json"
    rendered: Any = reference_utils.render_jinja_template(  # annotated as str, returns (texts, indices)
        [messages], chat_template=chat_template_of("llama3_1"), add_generation_prompt=True
    )
    assert render_prompt(bundled, messages) == rendered[0][0]


@pytest.mark.parametrize("model", CHAT_TEMPLATE_MODELS)
def test_bundled_names_render_like_their_files(model: str) -> None:
    """`render_prompt("qwen3", ...)` reads the bundled template's chat template, as `load_template("qwen3")`
    reads its response template; the reference renders the same string from the same Jinja source."""
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    rendered: Any = reference_utils.render_jinja_template(  # annotated as str, returns (texts, indices)
        [messages], chat_template=chat_template_of(model), add_generation_prompt=True
    )
    assert render_prompt(model, messages) == render_prompt(ROOT / "templates" / f"{model}.json", messages)
    assert render_prompt(model, messages) == rendered[0][0]


def test_bundled_names_lose_to_files_and_unknown_names_get_suggestions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = [{"role": "user", "content": "x"}]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TemplateError) as error:
        render_prompt("qwen", messages)
    assert str(error.value) == (
        "qwen: no such file, and no bundled template of that name; did you mean 'qwen3'? "
        "(`rtcompile list` shows them all)"
    )
    with pytest.raises(TemplateError) as error:  # bundled, but without a chat template
        render_prompt("smollm3", messages)
    assert str(error.value).endswith(
        "smollm3.json: the bundled template 'smollm3' carries no chat template (templates/README.md says why, model "
        "by model); pass chat_template= with the model's Jinja source, or render from the model's directory or its "
        "tokenizer_config.json (`rtcompile list` shows which bundled templates have one)"
    )
    assert render_prompt("smollm3", messages, chat_template="{{ messages[0].content }}!") == "x!"
    (tmp_path / "qwen3").write_text('{"chat_template": "local {{ messages[0].content }}"}')
    assert render_prompt("qwen3", messages) == "local x"  # a file of that name wins
    with pytest.raises(TemplateError) as error:
        render_prompt("qwen3.jinja", messages)  # a .jinja path is never a name
    assert str(error.value) == "qwen3.jinja: no such file"


def test_bad_sources_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="neither tokenizer_config.json nor chat_template.jinja"):
        render_prompt(tmp_path, [{"role": "user", "content": "x"}])
    (tmp_path / "tokenizer_config.json").write_text('{"bos_token": "<s>"}')
    with pytest.raises(TemplateError, match="no chat template here"):
        render_prompt(tmp_path, [{"role": "user", "content": "x"}])
    broken = tmp_path / "broken.json"
    broken.write_text('{"chat_template": "x",\n "bos_token": }')
    with pytest.raises(TemplateError) as error:
        render_prompt(broken, [{"role": "user", "content": "x"}])
    assert str(error.value).startswith(f"{broken}:2:15: ") and "\n" not in str(error.value)
    with pytest.raises(TemplateError, match="must be a string or a list"):
        render_prompt({"chat_template": 3}, [])
    with pytest.raises(ValueError, match="empty conversation"):
        render_prompt({"chat_template": "x"}, [])
    with pytest.raises(jinja2.TemplateError, match="boom"):
        render_prompt({"chat_template": "{{ raise_exception('boom') }}"}, [{"role": "user", "content": "x"}])
