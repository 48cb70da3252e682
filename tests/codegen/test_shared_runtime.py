"""`--shared-runtime`: thin per-model modules beside one `rtcompile_runtime.py`, in a package.

A thin module behaves exactly like the standalone module of its template (every message, event and
exception, for every 2-way split of recorded outputs and for random templates), passes ruff and
`mypy --strict` as a package, gives a consumer exactly the standalone module's types, imports with the
standard library alone, carries nothing it never runs (the runtime is a library: not checked), and
`--check` / `--diff` know the runtime file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.backends.codegen.shared_runtime import RUNTIME_FILE
from rtcompile.tooling.cli import main
from rtcompile.tooling.observe import observe
from rtcompile.version import VERSION
from tests.support.bundled import template_of
from tests.support.cli import run_here
from tests.support.compiled import compiled_module, import_file
from tests.support.paths import ROOT
from tests.support.reachability import defined, unreached
from tests.support.shared_layout import import_from, shared_module, write_package
from tests.support.strategies import TOOLS, chunkings, prefixes, streams, templates

GENERATED = ROOT / "generated"
# Literal delimiters; patterns with captures; a pending run (the engine's `_commit_run`); XML-like
# content; a lookaround the `regex` module matches.
MODELS = ["qwen3", "gpt_oss", "magistral", "qwen3_coder", "llama3_2"]
SPLIT_MODELS = ["magistral", "llama3_2"]  # every 2-way split of every recorded output


def cases_of(model: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((ROOT / "tests" / "data" / model / "cases.json").read_text("utf-8"))
    return cases


@cache
def standalone(model: str) -> ModuleType:
    """The bundled standalone module (generated/ is kept fresh by test_generated)."""
    return import_file(GENERATED / f"{model}_parser.py", f"rtcompile_test_standalone_{model}")


@cache
def thin(model: str) -> ModuleType:
    return shared_module(template_of(model))


@cache
def _runtime() -> str:
    """The shared runtime's source (its engine calls hooks a thin module may override)."""
    return rtcompile.compile_shared_runtime()


def _engine(module: ModuleType, **extensions: bool) -> Any:
    return lambda prefix, tools: module.ResponseParser(prefix, tools=tools, **extensions)


def _one_shot(module: ModuleType, text: str, prefix: str) -> Any:
    try:
        return module.parse_response(text, prefix=prefix, tools=TOOLS)
    except Exception as error:  # noqa: BLE001 - which exception, and its message, is compared
        return type(error).__name__, str(error)


@pytest.mark.filterwarnings("ignore:the start anchor does not occur")  # a recorded prompt without it
@pytest.mark.parametrize("model", MODELS)
def test_a_thin_module_parses_recorded_outputs_as_the_standalone_one(model: str) -> None:
    ours, theirs = thin(model), standalone(model)
    for case in cases_of(model):
        text, prefix = case["text"], case["prefix"]
        assert _one_shot(ours, text, prefix) == _one_shot(theirs, text, prefix)
        chunkings_ = [
            *([[text[:i], text[i:]] for i in range(len(text) + 1)] if model in SPLIT_MODELS else []),
            list(text),
        ]
        for chunks in chunkings_:
            assert observe(_engine(ours), prefix, chunks, TOOLS) == observe(_engine(theirs), prefix, chunks, TOOLS)
        extensions = {"captures": True, "spans": True, "recover": True}
        assert observe(_engine(ours, **extensions), prefix, [text]) == observe(
            _engine(theirs, **extensions), prefix, [text]
        )


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:the start anchor does not occur")  # prompts without it are drawn too
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(templates(compilable=True), st.data())
def test_a_random_templates_thin_module_behaves_as_its_standalone_module(
    template: dict[str, Any], data: st.DataObject
) -> None:
    ours, theirs = shared_module(template), compiled_module(template)
    assert unreached(Path(ours.__file__ or "").read_text(encoding="utf-8"), library=_runtime()) == []
    text = data.draw(streams(template), label="text")
    prefix = data.draw(prefixes(template), label="prefix")
    random_chunks = [data.draw(chunkings(text), label="chunks") for _ in range(4)]
    for chunks in [*random_chunks, *([text[:i], text[i:]] for i in range(len(text) + 1))]:
        assert observe(_engine(ours), prefix, chunks, TOOLS) == observe(_engine(theirs), prefix, chunks, TOOLS)
    assert _one_shot(ours, text, prefix) == _one_shot(theirs, text, prefix)


@pytest.mark.parametrize("model", MODELS)
def test_a_thin_module_carries_nothing_it_never_runs(model: str) -> None:
    assert unreached(Path(thin(model).__file__ or "").read_text(encoding="utf-8"), library=_runtime()) == []


def test_a_thin_module_keeps_what_is_its_templates_and_imports_the_rest() -> None:
    module, full = thin("qwen3"), standalone("qwen3")
    assert module.SHARED_RUNTIME is True and not hasattr(full, "SHARED_RUNTIME")
    assert (module.__all__, module.TEMPLATE) == (full.__all__, full.TEMPLATE)
    assert repr(module.OPENAI_ROLES) == repr(full.OPENAI_ROLES)  # by their fields: two modules' classes
    runtime = sys.modules[f"{module.__package__}.rtcompile_runtime"]
    assert (module.ResponseParser.__module__, module.parse_response.__module__) == (module.__name__,) * 2
    assert module.StreamingParser is runtime.StreamingParser and module.DeltaStream is runtime.DeltaStream
    assert "--shared-runtime" in (module.__doc__ or "")
    # Of the names the runtime defines, it defines only its own: the preamble's, the version it records,
    # its template's types (the runtime's are Any) and `to_openai` with its template's roles.
    carried = defined(Path(module.__file__ or "").read_text("utf-8")) & defined(rtcompile.compile_shared_runtime())
    types = {"FieldName", "Message", "Event", "RegionOpen", "RegionChunk", "RegionClose", "RegionMalformed"}
    assert carried == {"TYPE_CHECKING", "RTCOMPILE_VERSION", *types, "to_openai"}


def test_warnings_point_at_the_callers_line() -> None:
    module = thin("qwen3")
    calls: list[Callable[[], object]] = [
        lambda: module.ResponseParser("garbage"),
        lambda: module.parse_response("x", prefix="garbage"),
    ]
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert [Path(w.filename).name for w in caught] == [Path(__file__).name]


def test_the_runtime_is_the_same_for_every_template_set(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    assert main(["qwen3", "-o", str(one / "mine_parser.py"), "--shared-runtime"]) == 0  # beside a file
    assert main(["gpt_oss", "magistral", "-o", str(two), "--shared-runtime", "--no-openai"]) == 0
    runtime = rtcompile.compile_shared_runtime()
    assert (one / RUNTIME_FILE).read_text("utf-8") == (two / RUNTIME_FILE).read_text("utf-8") == runtime
    assert sorted(p.name for p in two.iterdir()) == ["gpt_oss_parser.py", "magistral_parser.py", RUNTIME_FILE]
    assert runtime.startswith(f"# @generated by rtcompile {VERSION} as {RUNTIME_FILE},")
    # whole classes and every helper: the engine's pending-run path and both tool-schema converters
    assert all(f"def {name}(" in runtime for name in ("_commit_run", "function_to_tool_schema", "refuse_function_tool"))


def test_a_generated_package_passes_ruff_with_its_defaults(tmp_path: Path) -> None:
    modules = {
        "qwen3_parser.py": rtcompile.compile_template("qwen3", shared_runtime=True),
        "bare_parser.py": rtcompile.compile_template(
            "gpt_oss", shared_runtime=True, openai=False, function_tools=False
        ),
        "llama3_2_parser.py": rtcompile.compile_template("llama3_2", shared_runtime=True),  # imports regex
    }
    package = write_package(tmp_path / "parsers", modules)
    for command in (["check", "--isolated", str(package)], ["format", "--isolated", "--check", str(package)]):
        done = subprocess.run([sys.executable, "-m", "ruff", *command], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def test_a_generated_package_imports_with_the_standard_library_alone(tmp_path: Path) -> None:
    models = ["qwen3", "gpt_oss"]
    write_package(
        tmp_path / "parsers", {f"{m}_parser.py": rtcompile.compile_template(m, shared_runtime=True) for m in models}
    )
    probe = (
        "import sys, importlib; sys.path.insert(0, sys.argv[1]); sys.modules['rtcompile'] = None; "
        "modules = [importlib.import_module(f'parsers.{m}_parser') for m in sys.argv[2:]]; "
        "print([module.parse_response('x', prefix='') for module in modules])"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe, str(tmp_path), *models], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{[standalone(m).parse_response('x', prefix='') for m in models]}\n"


def test_a_runtime_of_another_version_is_a_clear_import_error(tmp_path: Path) -> None:
    package = write_package(
        tmp_path / "old_parsers", {"qwen3_parser.py": rtcompile.compile_template("qwen3", shared_runtime=True)}
    )
    runtime = package / RUNTIME_FILE
    code = runtime.read_text(encoding="utf-8")
    runtime.write_text(
        code.replace(f'RTCOMPILE_VERSION: Final = "{VERSION}"', 'RTCOMPILE_VERSION: Final = "0.0.1"'), "utf-8"
    )
    with pytest.raises(ImportError) as raised:
        import_from(package, "qwen3_parser")
    assert str(raised.value) == (
        f"old_parsers.qwen3_parser was compiled by rtcompile {VERSION}, but the {RUNTIME_FILE} beside it by "
        "rtcompile 0.0.1: compile them again together (rtcompile ... --shared-runtime)"
    )


def test_the_readme_example_imports_a_thin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("### Many parsers, one runtime\n", 1)[1]
    (block,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.DOTALL)
    write_package(tmp_path / "parsers", {"qwen3_parser.py": rtcompile.compile_template("qwen3", shared_runtime=True)})
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "parsers", raising=False)
    output, prompt = "<think>\nhm\n</think>\n\nHi!<|im_end|>", "<|im_start|>assistant\n"
    namespace: dict[str, Any] = {"model_output": output, "prompt": prompt}
    try:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own documentation
    finally:  # (another test's package may be called `parsers` too)
        for name in [name for name in sys.modules if name.split(".")[0] == "parsers"]:
            del sys.modules[name]
    assert namespace["message"] == standalone("qwen3").parse_response(output, prefix=prompt)
    assert namespace["qwen3_parser"].SHARED_RUNTIME is True


# ---------------------------------------------------------------------------- typing

CONSUMER = """\
{import_line}

message = parser.parse_response("x", prefix="")
reveal_type(message)
reveal_type(parser.parse_response(["x"], prefix=""))
stream = parser.ResponseParser(prefix="", tools=None)
reveal_type(stream.initial_events)
reveal_type(stream.feed("x"))
reveal_type(stream.finalize())
reveal_type(stream.parse_complete("x"))
reveal_type(stream.malformed)
reveal_type(message["tool_calls"][0]["function"])
reveal_type(parser.to_openai(message))
reveal_type(parser.DeltaStream(parser.OPENAI_ROLES).feed(stream.initial_events))
for event in stream.feed("x"):
    if event["type"] == "region_chunk":
        reveal_type(event["field"])
        event["value"]
message["reasoning"]
stream.feed(1)
calls: list[str] = message["tool_calls"]


def show(event: parser.Event) -> None: ...


show(message)
"""


def _mypy_report(output: str, consumer: str) -> list[str]:
    """The consumer's lines of mypy's report, with its file name and the package prefix taken out (a
    standalone module's `Message` is `qwen3_parser.Message`, a thin one's `parsers.qwen3_parser.Message`)."""
    lines = [line.removeprefix(f"{consumer}:") for line in output.splitlines() if line.startswith(f"{consumer}:")]
    return [line.replace("parsers.qwen3_parser.", "qwen3_parser.") for line in lines]


@pytest.mark.slow
def test_a_consumer_sees_the_standalone_types_and_the_package_passes_mypy_strict(tmp_path: Path) -> None:
    shutil.copy(GENERATED / "qwen3_parser.py", tmp_path / "qwen3_parser.py")
    models = ["qwen3", "gpt_oss", "magistral"]
    modules = {f"{m}_parser.py": rtcompile.compile_template(m, shared_runtime=True) for m in models}
    modules["bare_parser.py"] = rtcompile.compile_template("qwen3_coder", shared_runtime=True, openai=False)
    write_package(tmp_path / "parsers", modules)
    for name, import_line in (
        ("standalone", "import qwen3_parser as parser"),
        ("thin", "from parsers import qwen3_parser as parser"),
    ):
        (tmp_path / f"{name}.py").write_text(CONSUMER.format(import_line=import_line), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--no-error-summary",
            "standalone.py",
            "thin.py",
            "parsers",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(tmp_path)},
    )
    standalone_report, thin_report = _mypy_report(done.stdout, "standalone.py"), _mypy_report(done.stdout, "thin.py")
    # nothing but the consumers' lines: the package (runtime and modules) is clean
    assert len(done.stdout.splitlines()) == len(standalone_report) + len(thin_report), done.stdout
    assert thin_report == standalone_report
    errors = [re.sub(r"^\d+: error: ", "", line) for line in thin_report if ": error: " in line]
    assert errors == [
        'TypedDict "RegionChunk" has no key "value"  [typeddict-item]',
        'TypedDict "Message" has no key "reasoning"  [typeddict-item]',
        'Argument 1 to "feed" of "ResponseParser" has incompatible type "int"; expected "str"  [arg-type]',
        'Incompatible types in assignment (expression has type "list[Shape_tool_calls]", variable has type '
        '"list[str]")  [assignment]',
        'Argument 1 to "show" has incompatible type "Message"; expected "RegionOpen | RegionChunk | RegionClose | '
        'RegionMalformed"  [arg-type]',
    ]
    # and the types are the template's own (the comparison would also pass if both were Any)
    revealed = [line.split("Revealed type is ", 1)[1] for line in thin_report if "Revealed type is" in line]
    assert all("TypedDict(qwen3_parser." in kind for kind in revealed[:7]), revealed  # message ... malformed
    assert revealed[-1] == "\"Literal['reasoning_content'] | Literal['tool_calls'] | Literal['content']\""


# ---------------------------------------------------------------------------- the command line


def _reports(stderr: str) -> list[str]:
    """What --check reports, without the templates' own warnings."""
    return [line for line in stderr.splitlines() if not re.match(r"\S+:\d+:\d+: warning\[", line)]


def test_check_and_diff_know_the_runtime(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, hint = tmp_path / "parsers", "it was compiled with --shared-runtime: give --check that option too"
    assert main(["qwen3", "gpt_oss", "-o", str(out), "--shared-runtime"]) == 0
    assert main(["qwen3", "gpt_oss", "-o", str(out), "--shared-runtime", "--check"]) == 0
    capsys.readouterr()
    assert main(["qwen3", "gpt_oss", "-o", str(out), "--check"]) == 1
    assert _reports(capsys.readouterr().err) == [
        f"{out / 'qwen3_parser.py'}: stale (regenerate from qwen3; {hint})",
        f"{out / 'gpt_oss_parser.py'}: stale (regenerate from gpt_oss; {hint})",
    ]
    runtime = out / RUNTIME_FILE
    old_header = runtime.read_text("utf-8").replace(f"rtcompile {VERSION} as", "rtcompile 0.0.1 as", 1)
    runtime.write_text(old_header, "utf-8")
    assert main(["qwen3", "-o", str(out / "qwen3_parser.py"), "--shared-runtime", "--check"]) == 1
    assert _reports(capsys.readouterr().err) == [
        f"{runtime}: stale (written by rtcompile 0.0.1; regenerate with --shared-runtime)"
    ]
    assert main(["qwen3", "-o", str(out / "qwen3_parser.py"), "--shared-runtime", "--diff"]) == 0
    assert capsys.readouterr().out.splitlines()[:5] == [
        f"--- {runtime} (current)",
        f"+++ {runtime} (from rtcompile {VERSION})",
        "@@ -1,4 +1,4 @@",
        f"-{old_header.splitlines()[0]}",
        f"+{rtcompile.compile_shared_runtime().splitlines()[0]}",
    ]
    standalone = tmp_path / "standalone_parser.py"
    assert main(["qwen3", "-o", str(standalone)]) == 0
    capsys.readouterr()
    assert main(["qwen3", "-o", str(standalone), "--shared-runtime", "--check"]) == 1
    assert _reports(capsys.readouterr().err) == [
        f"{standalone}: stale (regenerate from qwen3; it was compiled without --shared-runtime)",
        f"{tmp_path / RUNTIME_FILE}: missing (regenerate with --shared-runtime)",
    ]


def test_verify_takes_a_thin_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "qwen3_parser.py"
    assert main(["qwen3", "-o", str(module), "--shared-runtime"]) == 0
    assert main(["verify", "qwen3", "--module", str(module), "--cases", "1"]) == 0
    (module.parent / RUNTIME_FILE).unlink()
    capsys.readouterr()
    assert main(["verify", "qwen3", "--module", str(module), "--cases", "1"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"rtcompile verify: error: {module}: compiled with --shared-runtime, but no {RUNTIME_FILE} is beside it"
    ]


def test_the_command_line_checks_a_package_and_refuses_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["qwen3", "-o", f"{tmp_path / 'parsers'}/", "--shared-runtime"]) == 0
    (tmp_path / "parsers" / RUNTIME_FILE).unlink()
    monkeypatch.chdir(tmp_path)  # the paths as a user in that directory gives them
    missing = run_here(capsys, "qwen3", "-o", "parsers/", "--shared-runtime", "--check")
    assert (missing.returncode, missing.stderr) == (
        1,
        f"parsers/{RUNTIME_FILE}: missing (regenerate with --shared-runtime)\n",
    )
    to_stdout = run_here(capsys, "qwen3", "-o", "-", "--shared-runtime")
    assert (to_stdout.returncode, to_stdout.stdout) == (2, "")
    assert to_stdout.stderr.splitlines() == [
        f"rtcompile: error: --shared-runtime writes {RUNTIME_FILE} beside the modules: -o names a file or directory, "
        "not -"
    ]
