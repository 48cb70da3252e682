"""The committed parsers in generated/: fresh, standard-library only, strictly typed, deterministic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.compiled import bundled_code, import_file
from tests.support.paths import GOLDEN, ROOT

GENERATED = ROOT / "generated"
MODELS = sorted(p.stem for p in (ROOT / "templates").glob("*.json"))


@pytest.mark.parametrize("model", MODELS)
def test_generated_is_up_to_date(model: str) -> None:
    """generated/ holds what `rtcompile templates -o generated` writes (each template compiled once per
    test run, for this and for every test of a bundled template's module: tests/support/compiled.py)."""
    committed = (GENERATED / f"{model}_parser.py").read_text(encoding="utf-8")
    assert committed == bundled_code(model), "generated/ is stale: run `rtcompile templates -o generated`"


def test_every_template_has_its_parser() -> None:
    assert sorted(p.name for p in GENERATED.glob("*_parser.py")) == sorted(f"{m}_parser.py" for m in MODELS)


def test_generated_modules_import_with_the_standard_library_alone() -> None:
    # -I -S: no site-packages, no environment; then we remove rtcompile and regex from reach entirely.
    probe = (
        "import sys, importlib; sys.path.insert(0, sys.argv[1]); "
        "sys.modules['regex'] = None; sys.modules['rtcompile'] = None; "
        "names = sys.argv[2:]; "
        "[importlib.import_module(n).parse_response('x', prefix='') for n in names]; "
        "print(len(names))"
    )
    names = [f"{m}_parser" for m in MODELS]
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe, str(GENERATED), *names], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(len(names))


@pytest.mark.slow  # mypy in a subprocess
def test_a_consumer_of_a_generated_module_passes_mypy_strict(tmp_path: Path) -> None:
    # mypy follows the import into qwen3_parser and checks it too. Every committed module is checked by
    # CI's own `mypy ... generated` step (.ci/run), which this test repeated at ~8 s of CPU.
    consumer = tmp_path / "consumer.py"
    consumer.write_text(
        "from qwen3_parser import ResponseParser, parse_response\n"
        "message = parse_response('<tool_call>{}</tool_call>', prefix='')\n"
        "function = message['tool_calls'][0]['function']\n"
        "role: str = message['role']\n"
        "parser = ResponseParser(prefix='', tools=None)\n"
        "for event in parser.feed('x'):\n"
        "    if event['type'] == 'region_chunk':\n"
        "        text: str = event['text']\n"
        "final, events = parser.finalize()\n"
        "batch: list[object] = list(parse_response(['a', 'b'], prefix=''))\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(consumer)],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(GENERATED)},
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # rtcompile in subprocesses
@pytest.mark.parametrize("model", ["smollm3", "gpt_oss", "qwen3_coder"])
def test_output_is_identical_under_different_hash_seeds(model: str) -> None:
    outputs = set()
    for seed in ("1", "2"):
        result = subprocess.run(
            [sys.executable, "-m", "rtcompile.tooling.cli", f"templates/{model}.json", "-o", "-"],
            capture_output=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert result.returncode == 0, result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1


GOLDEN_TEMPLATES = {
    "literal_delimiters": {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>"},
            "content": {"close": ["<|im_end|>", "<|endoftext|>"]},
        },
    },
    "regex_captures": {
        "start_anchor_pattern": r"<\|start\|>assistant",
        "fields": {
            "tool_calls": {
                "open_pattern": r"<call name=(?P<name>[^\s>]+)>",
                "close": "</call>",
                "repeats": True,
                "content": "json",
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "content": {"repeats": True, "join": ""},
        },
    },
}


@pytest.mark.parametrize("name", sorted(GOLDEN_TEMPLATES))
def test_golden_output(name: str, tmp_path: Path) -> None:
    """Reviewers see generated code change in these files' diffs; regenerate with RTCOMPILE_UPDATE_GOLDEN=1."""
    source = tmp_path / f"{name}.json"
    source.write_text(json.dumps(GOLDEN_TEMPLATES[name], indent=2), encoding="utf-8")
    import rtcompile

    code = rtcompile.compile_template(source, source_name=f"tests/golden/{name}.json")
    golden = GOLDEN / f"{name}_parser.py"
    if os.environ.get("RTCOMPILE_UPDATE_GOLDEN"):
        golden.write_text(code, encoding="utf-8")
    assert golden.read_text(encoding="utf-8") == code
    module = import_file(golden, f"golden_{name}")
    assert module.TEMPLATE == GOLDEN_TEMPLATES[name]
