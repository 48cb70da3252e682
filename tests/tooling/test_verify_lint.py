"""`rtcompile verify` and `rtcompile lint` as template authors run them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rtcompile.tooling.cli import main
from tests.support.paths import ROOT


def test_verify_passes_on_a_bundled_template(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(ROOT / "templates" / "qwen3.json"), "--cases", "30", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "30 cases" in out and "comparisons agree" in out


def test_verify_finds_and_shrinks_a_divergence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A compiled module edited by hand (here: it drops reasoning) is caught, with a small reproducer."""
    template = ROOT / "templates" / "smollm3.json"
    module = tmp_path / "smollm3_parser.py"
    assert main([str(template), "-o", str(module)]) == 0
    code = module.read_text(encoding="utf-8")
    module.write_text(code.replace('"<think>"', '"<thinq>"'), encoding="utf-8")
    assert main(["verify", str(template), "--module", str(module), "--cases", "200"]) == 1
    out = capsys.readouterr().out
    assert "DIVERGENCE (compiled module vs interpreter)" in out
    text = re.search(r"  text:     (.*)", out)
    # The reproducer involves the edited delimiter (held back, or matched, differently) and is short.
    assert text is not None and "<think" in text.group(1) and len(text.group(1)) < 40, out


def write_template(tmp_path: Path, template: dict[str, object], **extra: object) -> Path:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"response_template": template, **extra}, indent=2), encoding="utf-8")
    return path


def test_lint_reports_each_defect_with_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_template(
        tmp_path,
        {
            "start_anchor": "<|im_start|>assistant\n",
            "fields": {
                "tool_calls": {
                    "open_pattern": r"<function=(?P<name>\w+)(?P<id> id=\d+)?>",
                    "close": "</function>",
                    "content": "xml-inline",
                    "content_args": {"tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>"},
                    "transform": {"name": "{name}", "id": "{id}", "arguments": "{content}"},
                },
                "content": {},
            },
        },
    )
    assert main(["lint", str(path), "--cases", "150"]) == 0  # warnings only
    out = capsys.readouterr().out
    assert r"(?P<name>\w+) rejects real tool names" in out
    assert "strips leading indentation" in out
    assert "group 'id' may not take part" in out
    assert "does not repeat, so text between regions re-opens it" in out
    assert f"{path}:" in out and "input:" in out


def test_lint_errors_on_a_template_that_does_not_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_template(tmp_path, {"start_anchor": "a", "fields": {"x": {"join": 1, "repeats": True}}})
    assert main(["lint", str(path)]) == 1
    assert "fields.x.join" in capsys.readouterr().out


CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.thoughts %}<think>{{ m.thoughts }}</think>{% endif %}{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_lint_with_the_chat_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = json.loads((ROOT / "templates" / "smollm3.json").read_text(encoding="utf-8"))["response_template"]
    path = write_template(tmp_path, template, chat_template=CHAT_TEMPLATE)
    main(["lint", str(path), "--cases", "20"])
    out = capsys.readouterr().out
    # Everything after the user's text, and what is left after the anchor (nothing: a clean cut).
    assert "generation prompt (no tools) is '<|im_end|>\\n<|im_start|>assistant\\n'; after the anchor: ''" in out
    # The chat template reads `thoughts`, so parsed `reasoning_content` would be lost on the next turn.
    assert "never renders field 'reasoning_content'" in out
    # `thinking` is fine: transformers passes reasoning under that name too (gpt-oss reads it).
    path = write_template(tmp_path, template, chat_template=CHAT_TEMPLATE.replace("thoughts", "thinking"))
    main(["lint", str(path), "--cases", "20"])
    assert "never renders field 'reasoning_content'" not in capsys.readouterr().out
    template["start_anchor"] = "<|assistant|>"
    path = write_template(tmp_path, template, chat_template=CHAT_TEMPLATE)
    assert main(["lint", str(path), "--cases", "20"]) == 1
    assert "start anchor not found in the rendered prompt" in capsys.readouterr().out
