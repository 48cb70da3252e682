"""Run the examples of a Markdown document as written, and check that they do what the text says.

A document's fenced blocks are read in order:

* ```` ```python ```` blocks run statement by statement. A statement followed by a comment
  ``# => VALUE`` (continued on further ``#`` lines) is an expression whose value must equal the Python
  literal VALUE; one followed by ``# raises NAME`` must raise an exception of type NAME.
* ```` ```json FILE ````, ```` ```jinja FILE ```` and ```` ```text FILE ```` blocks are files: written, under
  that name, to the directory the other blocks run in.
* ```` ```console ```` blocks are transcripts: each ``$ rtcompile ...`` line is run (as ``python -m
  rtcompile``, from that directory) and what it prints, standard output then standard error, must be
  the lines that follow it, progress lines left out (`verify` and `lint` print one every two seconds,
  so how many there are depends on the machine). It must exit with status 0, or with the status an HTML comment
  ``<!-- exit N -->`` right before the block gives.

Other blocks (```` ```json ```` without a file name, ```` ```txt ````, ...) are shown, not run.
"""

from __future__ import annotations

import ast
import io
import os
import re
import shlex
import subprocess
import sys
import tokenize
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import transformers.utils.chat_parsing as reference

from tests.support.cli import errors_in
from tests.support.paths import ROOT

FENCE = re.compile(r"^```(\w*)[ \t]*(\S*)[^\n]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
EXIT = re.compile(r"<!-- exit (\d+) -->\s*$")
RUNNABLE = ("python", "console")
PROGRESS = re.compile(r"  \d+/\d+ cases, ")  # a ProgressPrinter line (rtcompile.tooling.progress)
FILE_LANGUAGES = ("json", "jinja", "text")


@dataclass(frozen=True)
class Block:
    language: str
    name: str  # the file name of a file block, else ""
    code: str
    line: int  # where the block's code starts in the document, 1-based
    exit_status: int  # what a console block's commands must exit with

    @property
    def where(self) -> str:
        return f"line {self.line}"


def blocks(text: str) -> list[Block]:
    found = []
    previous_end = 0
    for match in FENCE.finditer(text):
        exit_status = EXIT.search(text[previous_end : match.start()])  # a comment right before the block
        status = 0 if exit_status is None else int(exit_status.group(1))
        line = text.count("\n", 0, match.start(3)) + 1
        found.append(Block(match.group(1), match.group(2), match.group(3), line, status))
        previous_end = match.end()
    return found


def runnable(text: str) -> list[Block]:
    return [b for b in blocks(text) if b.language in RUNNABLE or (b.language in FILE_LANGUAGES and b.name)]


# --------------------------------------------------------------------------- python blocks


@dataclass(frozen=True)
class Step:
    source: str  # one top-level statement
    expected: str | None  # the literal after `# =>`, or None
    raises: str | None  # the exception type name after `# raises`, or None
    line: int


def steps(code: str) -> list[Step]:
    """The block's top-level statements, each with what its comment says it gives."""
    tree = ast.parse(code)
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT and token.line.strip().startswith("#"):
            comments[token.start[0]] = token.string
    lines = code.splitlines()
    out = []
    for node in tree.body:
        assert node.end_lineno is not None
        source = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        expected = raises = None
        after = node.end_lineno + 1
        comment = comments.get(after, "")
        if comment.startswith("# =>"):
            parts = [comment[len("# =>") :]]
            while comments.get(after + 1, "").startswith("#  "):
                after += 1
                parts.append(comments[after][1:])
            expected = "\n".join(parts).strip()
        elif comment.startswith("# raises "):
            raises = comment[len("# raises ") :].strip()
        out.append(Step(source, expected, raises, node.lineno))
    return out


def run_python(block: Block, namespace: dict[str, Any]) -> None:
    for step in steps(block.code):
        where = f"{block.where} + {step.line - 1}: {step.source.splitlines()[0]}"
        if step.raises is not None:
            try:
                exec(compile(step.source, where, "exec"), namespace)  # noqa: S102 - the document's own example
            except Exception as error:  # noqa: BLE001 - compared by name below
                assert type(error).__name__ == step.raises, f"{where}: raised {error!r}, not {step.raises}"
            else:
                raise AssertionError(f"{where}: raised nothing, the document says {step.raises}")
        elif step.expected is not None:
            value = eval(compile(step.source, where, "eval"), namespace)  # noqa: S307
            assert value == ast.literal_eval(step.expected), f"{where}: gives {value!r}"
        else:
            exec(compile(step.source, where, "exec"), namespace)  # noqa: S102


def reference_module(calls: list[str]) -> types.ModuleType:
    """An `rtcompile` stand-in whose `parse_response` and `ResponseParser` are transformers' own, for
    running an example against the reference; each use is recorded in `calls`."""
    module = types.ModuleType("rtcompile")

    def parse_response(text: str, template: Any, *, prefix: str | None, tools: Any = None) -> Any:
        calls.append("parse_response")
        return reference.parse_response(text, template, prefix=prefix, tools=tools)

    def response_parser(template: Any, prefix: str | None = None, *, tools: Any = None) -> Any:
        calls.append("ResponseParser")
        return reference.ResponseParser(template, prefix=prefix, tools=tools)

    module.parse_response = parse_response  # type: ignore[attr-defined]
    module.ResponseParser = response_parser  # type: ignore[attr-defined]
    return module


REFERENCE_NAMES = frozenset({"parse_response", "ResponseParser"})


def uses_only_the_reference(code: str) -> bool:
    """Whether a block uses nothing of rtcompile but what transformers has too (so it can run on both)."""
    tree = ast.parse(code)
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "rtcompile"
    }
    imports = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    from_imports = any(isinstance(node, ast.ImportFrom) for node in ast.walk(tree))
    return "rtcompile" in imports and used <= REFERENCE_NAMES and not from_imports


# --------------------------------------------------------------------------- console blocks


def commands(code: str) -> Iterator[tuple[str, list[str]]]:
    """Each `$ ` command of a transcript, with the lines it prints."""
    command: str | None = None
    output: list[str] = []
    for line in code.splitlines():
        if line.startswith("$ "):
            if command is not None:
                yield command, output
            command, output = line[2:], []
        else:
            output.append(line)
    if command is not None:
        yield command, output


def run_console(block: Block, directory: Path) -> None:
    for command, expected in commands(block.code):
        argv = shlex.split(command)
        assert argv[0] == "rtcompile", f"{block.where}: only rtcompile commands are run: {command}"
        done = subprocess.run(
            [sys.executable, "-m", "rtcompile", *argv[1:]],
            capture_output=True,
            text=True,
            cwd=directory,
            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"},
        )
        printed = [line for line in done.stdout.splitlines() + errors_in(done.stderr) if not PROGRESS.match(line)]
        assert printed == expected, f"{block.where}: `{command}` prints:\n" + "\n".join(printed)
        assert done.returncode == block.exit_status, f"{block.where}: `{command}` exits {done.returncode}"
