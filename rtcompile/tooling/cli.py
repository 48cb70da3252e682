"""The `rtcompile` command line.

    rtcompile IN... -o OUT [--check | --diff]
    rtcompile verify TEMPLATE [--module PARSER.py] [--cases N] [--seed S]
    rtcompile lint TEMPLATE [--chat-template FILE.jinja]

IN is a template file (a tokenizer_config.json or a bare template), a model directory holding a
tokenizer_config.json, or a directory of template files. OUT is a file, `-` for stdout, or a
directory (required for several inputs), which receives one `<name>_parser.py` per template.

Exit status: 0 ok, 1 `--check` found a missing or stale output, 2 bad input or usage. Every
error is one line on stderr; outputs are written atomically, so a failed run never leaves a
half-written file or changes an existing one.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from rtcompile.api import compile_template
from rtcompile.frontend.errors import TemplateError
from rtcompile.frontend.source import TOKENIZER_CONFIG_NAME
from rtcompile.version import VERSION

EXIT_OK, EXIT_STALE, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input or usage: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse prints the whole usage block; we keep errors to one line.
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


@dataclass(frozen=True)
class Job:
    source: Path
    output: Path | None  # None: standard output
    make_directory: bool = False  # the output directory is created (once everything compiled)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rtcompile",
        description="Compile Hugging Face response templates into standalone, typed Python parser modules.",
        epilog="Exit status: 0 ok, 1 --check found stale or missing outputs, 2 bad input or usage.",
    )
    parser.add_argument(
        "inputs", nargs="+", metavar="IN", help="template file, model directory, or directory of templates"
    )
    parser.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="output file, '-' for stdout, or a directory"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if an output is missing or stale")
    mode.add_argument("--diff", action="store_true", help="write nothing; show what would change as a unified diff")
    parser.add_argument("--version", action="version", version=f"rtcompile {VERSION}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["verify"]:
        return verify_main(arguments[1:])
    if arguments[:1] == ["lint"]:
        return lint_main(arguments[1:])
    return compile_main(arguments)


def compile_main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        jobs = plan(args.inputs, args.output)
        results = [(job, compile_job(job)) for job in jobs]
        if args.check or args.diff:
            return report_changes(results, show_diff=args.diff)
        for job, code in results:
            write(job, code)
    except (TemplateError, UsageError) as error:
        print(f"rtcompile: error: {one_line(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


# --------------------------------------------------------------------------- verify and lint


def verify_main(argv: Sequence[str]) -> int:
    parser = _Parser(
        prog="rtcompile verify",
        description="Differential fuzzing: a compiled parser against the interpreter, and the interpreter "
        "against transformers when it is installed. Exit 1 on the first divergence, with a minimal reproducer.",
    )
    parser.add_argument("template", metavar="TEMPLATE")
    parser.add_argument(
        "--module", metavar="PARSER.py", help="compiled module to check (default: compile TEMPLATE now)"
    )
    parser.add_argument("--cases", type=int, default=500, metavar="N", help="random streams to try (default 500)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    args = parser.parse_args(argv)
    if args.cases < 1:
        parser.error("--cases must be at least 1")
    from rtcompile.tooling import verify

    try:
        summary = verify.run(
            args.template, module_path=args.module, cases=args.cases, seed=args.seed, progress=verify.print_progress
        )
    except (TemplateError, UsageError, ValueError, OSError) as error:
        print(f"rtcompile verify: error: {one_line(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    print(verify.report(args.template, summary))
    return EXIT_STALE if summary.divergence is not None else EXIT_OK


def lint_main(argv: Sequence[str]) -> int:
    parser = _Parser(
        prog="rtcompile lint",
        description="Report a template's errors and warnings (file:line:col: path: message), and defects found by "
        "exercising it. Exit 1 when there are errors or defects.",
    )
    parser.add_argument("template", metavar="TEMPLATE")
    parser.add_argument(
        "--chat-template", metavar="FILE.jinja", help="the model's chat template (default: the config's)"
    )
    parser.add_argument(
        "--cases", type=int, default=300, metavar="N", help="random streams for defect search (default 300)"
    )
    args = parser.parse_args(argv)
    from rtcompile.tooling import lint

    try:
        findings = lint.run(args.template, chat_template_path=args.chat_template, cases=args.cases)
    except (UsageError, OSError) as error:
        print(f"rtcompile lint: error: {one_line(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    for finding in findings:
        print(finding.render())
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    print(f"{args.template}: {errors} error(s), {warnings} warning(s)", file=sys.stderr)
    return EXIT_STALE if errors else EXIT_OK


# --------------------------------------------------------------------------- planning


def template_files(directory: Path) -> list[Path]:
    """The templates in a directory: its tokenizer config if it is a model directory, else every *.json."""
    config = directory / TOKENIZER_CONFIG_NAME
    if config.is_file():
        return [config]
    files = sorted(p for p in directory.glob("*.json") if p.is_file())
    if not files:
        raise UsageError(f"{directory}: no template files (*.json) or {TOKENIZER_CONFIG_NAME} in this directory")
    return files


def module_name(source: Path) -> str:
    """`<name>_parser.py` for a template: its file stem, or the model directory's name for a config."""
    stem = source.parent.resolve().name if source.name == TOKENIZER_CONFIG_NAME else source.stem
    identifier = re.sub(r"\W", "_", stem, flags=re.ASCII).strip("_") or "template"
    if identifier[0].isdigit():
        identifier = f"m_{identifier}"
    return f"{identifier.lower()}_parser.py"


def plan(inputs: Sequence[str], output: str) -> list[Job]:
    sources: list[Path] = []
    for raw in inputs:
        path = Path(raw)
        if path.is_dir():
            sources += template_files(path)
        elif path.exists():
            sources.append(path)
        else:
            raise UsageError(f"{raw}: no such file or directory")
    if output == "-":
        if len(sources) != 1:
            raise UsageError(f"-o - writes one module to stdout, but {len(sources)} templates were given")
        return [Job(sources[0], None)]
    out = Path(output)
    to_directory = out.is_dir() or output.endswith(("/", os.sep)) or len(sources) > 1 or Path(inputs[0]).is_dir()
    if not to_directory:
        return [_checked(Job(sources[0], out))]
    if out.exists() and not out.is_dir():
        raise UsageError(f"{output}: is a file, but several templates need an output directory")
    jobs = [_checked(Job(source, out / module_name(source), make_directory=True)) for source in sources]
    targets = [job.output for job in jobs]
    clashes = sorted({str(t) for t in targets if targets.count(t) > 1})
    if clashes:
        raise UsageError(f"two templates would both be written to {clashes[0]}; rename one of them")
    return jobs


def _checked(job: Job) -> Job:
    assert job.output is not None
    if job.output.is_dir():
        raise UsageError(f"{job.output}: is a directory; give a file name, or several inputs to fill a directory")
    if job.output.exists() and job.output.resolve() == job.source.resolve():
        raise UsageError(f"{job.output}: the output would overwrite the input template")
    return job


# --------------------------------------------------------------------------- compiling and writing


def compile_job(job: Job) -> str:
    return compile_template(job.source, source_name=source_name(job))


def source_name(job: Job) -> str:
    """How the module's header names its template: relative to the module, so that the output does
    not depend on the directory rtcompile was run from (and `--check` agrees from anywhere)."""
    if job.output is None:
        return job.source.as_posix()
    return Path(os.path.relpath(job.source.resolve(), job.output.resolve().parent)).as_posix()


def write(job: Job, code: str) -> None:
    if job.output is None:
        sys.stdout.write(code)
        return
    if job.make_directory:
        try:
            job.output.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UsageError(f"{job.output.parent}: cannot create the output directory ({error.strerror})") from None
    write_atomically(job.output, code)


def write_atomically(target: Path, text: str) -> None:
    """Write via a temporary file in the same directory and a rename: all or nothing."""
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise UsageError(f"{target}: directory {directory} does not exist")
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as error:
        raise UsageError(f"{target}: cannot write here ({error.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(temporary, target)
    except OSError as error:
        os.unlink(temporary)
        raise UsageError(f"{target}: cannot write ({error.strerror})") from None
    except BaseException:
        os.unlink(temporary)
        raise


def report_changes(results: Sequence[tuple[Job, str]], *, show_diff: bool) -> int:
    """For --check and --diff: list (or show) outputs that differ from what would be generated."""
    stale = []
    for job, code in results:
        if job.output is None:
            continue
        current = job.output.read_text(encoding="utf-8") if job.output.is_file() else None
        if current == code:
            continue
        stale.append(job)
        if show_diff:
            sys.stdout.writelines(
                difflib.unified_diff(
                    (current or "").splitlines(keepends=True),
                    code.splitlines(keepends=True),
                    fromfile=f"{job.output} (current)" if current is not None else "/dev/null",
                    tofile=f"{job.output} (from {job.source})",
                )
            )
        else:
            state = "missing" if current is None else "stale"
            print(f"{job.output}: {state} (regenerate from {job.source})", file=sys.stderr)
    if show_diff:
        return EXIT_OK
    return EXIT_STALE if stale else EXIT_OK


def one_line(message: str) -> str:
    return " ".join(message.split("\n"))


if __name__ == "__main__":
    raise SystemExit(main())
