"""The `rtcompile` command line.

    rtcompile IN... -o OUT [--check | --diff] [--stdlib-only] [--no-function-tools] [--no-openai]
                                                                                  (or `compile IN...`)
    rtcompile verify TEMPLATE [--module PARSER.py] [--cases N] [--seed S]
    rtcompile lint TEMPLATE [--chat-template FILE.jinja] [--strict]
    rtcompile grammar TEMPLATE --tools TOOLS.json [--tool-choice C] [--no-parallel] [--format F] [--prefix-file F]
    rtcompile list [--names]
    rtcompile help [COMMAND]

IN is a template file (a tokenizer_config.json or a bare template), a model directory holding a
tokenizer_config.json, a directory of template files, the name of a bundled template (`rtcompile
list`; a file of that name wins), or `-` for standard input. OUT is a file, `-` for stdout, or a
directory (required for several inputs), which receives one `<name>_parser.py` per template.

Compiling is the default command: when the first argument is not a command name, `compile` is
implied, so `rtcompile templates -o generated` keeps working. (A template file called `lint` can be
compiled as `./lint` or with `rtcompile compile lint ...`.)

Exit status: 0 ok; 1 `--check` found a missing or stale output, `verify` found a divergence or a
module compiled from another template, `lint` found errors (or warnings, with `--strict`); 2 bad
input or usage, or `--stdlib-only` and a pattern that needs the `regex` module (without it, one warning
line per such pattern); 130 interrupted (Ctrl-C), 128 + N on signal N (SIGTERM, SIGHUP). Every error is one
line on stderr; outputs are written all or nothing (see `rtcompile.tooling.outputs`).
"""

from __future__ import annotations

import argparse
import difflib
import io
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from rtcompile.api import REGEX_FALLBACK_NOTE, compile_module
from rtcompile.backends.codegen.options import DEFAULT_OPTIONS, ModuleOptions
from rtcompile.errors import TemplateError, printable
from rtcompile.frontend.catalog import bundled_directory, bundled_templates
from rtcompile.frontend.source import TOKENIZER_CONFIG_NAME, TemplateText, resolve_template_path
from rtcompile.tooling.outputs import OutputError, write_all, write_stdout
from rtcompile.tooling.signals import INTERRUPT_EXIT_STATUS, Terminated, termination_raises
from rtcompile.version import VERSION

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

COMMANDS = ("compile", "verify", "lint", "grammar", "list", "help")
_TOP_LEVEL_OPTIONS = ("-h", "--help", "-V", "--version")
STDIN = "-"


class UsageError(Exception):
    """Bad input or usage: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse prints the whole usage block; we keep errors to one line.
        self.exit(EXIT_USAGE, f"{self.prog}: error: {printable(message)} (see {self.prog} --help)\n")


def report_error(prog: str, error: BaseException | str) -> None:
    """One line on stderr: `prog: error: message`, with every unprintable character escaped."""
    message = printable(str(error))
    print(f"{prog}: error: {message}", file=sys.stderr)


# --------------------------------------------------------------------------- the argument parser


@dataclass(frozen=True)
class CommandLine:
    parser: argparse.ArgumentParser
    commands: dict[str, argparse.ArgumentParser]


def build_parser() -> CommandLine:
    parser = _Parser(
        prog="rtcompile",
        usage="rtcompile [compile] IN... -o OUT [--check | --diff]\n       rtcompile COMMAND ...",
        description="Compile Hugging Face response templates into standalone, typed Python parser modules.",
        epilog="IN: a template file, a model directory, a directory of templates, a bundled template's name "
        "(rtcompile list), or - for stdin. `rtcompile help COMMAND` describes a command. Exit status: 0 ok, "
        "1 check/verify/lint failed, 2 bad input or usage, 130 interrupted.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"rtcompile {VERSION}")
    subparsers = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND", parser_class=_Parser)
    commands: dict[str, argparse.ArgumentParser] = {}

    compile_ = subparsers.add_parser(
        "compile",
        prog="rtcompile",
        usage="rtcompile [compile] IN... -o OUT [--check | --diff]",
        help="compile templates into parser modules (the default command)",
        description="Compile response templates into standalone, typed Python parser modules. "
        "`compile` may be left out: `rtcompile IN... -o OUT`.",
        epilog="A pattern with no exact standard-library translation is matched with the regex module: the "
        "module imports regex for it and a warning names it (--stdlib-only makes that an error). "
        "Exit status: 0 ok, 1 --check found stale or missing outputs, 2 bad input or usage (or --stdlib-only "
        "and a pattern needs regex).",
    )
    compile_.add_argument(
        "inputs",
        nargs="+",
        metavar="IN",
        help="template file, model directory, directory of templates, bundled template name, or - for stdin",
    )
    compile_.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="output file, '-' for stdout, or a directory"
    )
    mode = compile_.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if an output is missing or stale")
    mode.add_argument("--diff", action="store_true", help="write nothing; show what would change as a unified diff")
    compile_.add_argument(
        "--stdlib-only",
        action="store_true",
        help="fail (exit 2) instead of warning when a pattern needs the regex module",
    )
    compile_.add_argument(
        "--no-function-tools",
        dest="function_tools",
        action="store_false",
        help="leave out the code that turns Python functions into tool schemas (~340 lines): the module's "
        "`tools` then takes JSON schemas only, a function raises TypeError (give this to --check too)",
    )
    compile_.add_argument(
        "--no-openai",
        dest="openai",
        action="store_false",
        help="leave out the OpenAI-compatible adapter (to_openai, DeltaStream, ~650 lines) (give this to --check too)",
    )
    compile_.set_defaults(run=run_compile)
    commands["compile"] = compile_

    verify = subparsers.add_parser(
        "verify",
        prog="rtcompile verify",
        help="fuzz a compiled parser against the interpreter (and transformers)",
        description="Differential fuzzing: a compiled parser against the interpreter, and the interpreter "
        "against transformers when it is installed. Exit 1 on the first divergence, with a minimal reproducer, "
        "or when --module was compiled from another template.",
    )
    verify.add_argument("template", metavar="TEMPLATE", help="template file, model directory, or bundled name")
    verify.add_argument(
        "--module", metavar="PARSER.py", help="compiled module to check (default: compile TEMPLATE now)"
    )
    verify.add_argument("--cases", type=int, default=500, metavar="N", help="random streams to try (default 500)")
    verify.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    verify.set_defaults(run=run_verify)
    commands["verify"] = verify

    lint = subparsers.add_parser(
        "lint",
        prog="rtcompile lint",
        help="report a template's errors, warnings and defects",
        description="Report a template's errors and warnings (file:line:col: path: message), and defects found by "
        "exercising it. Exit 1 when there are errors or defects (or warnings, with --strict).",
    )
    lint.add_argument("template", metavar="TEMPLATE", help="template file, model directory, or bundled name")
    lint.add_argument("--chat-template", metavar="FILE.jinja", help="the model's chat template (default: the config's)")
    lint.add_argument(
        "--cases", type=int, default=300, metavar="N", help="random streams for defect search (default 300)"
    )
    lint.add_argument("--strict", action="store_true", help="treat warnings as errors (exit 1)")
    lint.set_defaults(run=run_lint)
    commands["lint"] = lint

    grammar = subparsers.add_parser(
        "grammar",
        prog="rtcompile grammar",
        help="print a grammar for constrained decoding: the template's output, with these tools",
        description="Print a grammar every output of which parses, with the template's parser, into a message "
        "whose tool calls name the given tools with arguments valid for their schemas, and honour the tool "
        "choice and parallelism. Formats: llguidance Lark (vLLM, SGLang and llama.cpp with llguidance; "
        "argument schemas as %json), llama.cpp GBNF, xgrammar's structural tag (JSON).",
        epilog="A template construct with no grammar form (lookbehind, a backreference, ...) is an error naming "
        "its place in the template. Exit status: 0 ok, 2 bad input, usage, or no grammar.",
    )
    grammar.add_argument("template", metavar="TEMPLATE", help="template file, model directory, or bundled name")
    grammar.add_argument(
        "--tools", required=True, metavar="TOOLS.json", help='the tools: a JSON list, or an object with "tools"'
    )
    grammar.add_argument(
        "--tool-choice",
        default="auto",
        metavar="CHOICE",
        help="auto (default), required (at least one call), none (no call), or a tool's name (that tool only)",
    )
    grammar.add_argument(
        "--no-parallel", dest="parallel", action="store_false", help="at most one tool call (parallel_tool_calls=false)"
    )
    grammar.add_argument(
        "--format",
        default="lark",
        choices=("lark", "gbnf", "structural-tag"),
        help="lark (llguidance, the default), gbnf (llama.cpp), or structural-tag (xgrammar)",
    )
    grammar.add_argument(
        "--prefix-file",
        metavar="PROMPT",
        help="the prompt the model continues: the grammar starts where it leaves the parser (default: none)",
    )
    grammar.set_defaults(run=run_grammar)
    commands["grammar"] = grammar

    list_ = subparsers.add_parser(
        "list",
        prog="rtcompile list",
        help="show the bundled templates",
        description="The response templates bundled with rtcompile: use a name wherever a template path goes "
        "(rtcompile qwen3 -o qwen3_parser.py).",
    )
    list_.add_argument("--names", action="store_true", help="only the names, one per line")
    list_.set_defaults(run=run_list)
    commands["list"] = list_

    help_ = subparsers.add_parser(
        "help",
        prog="rtcompile help",
        help="show help for a command",
        description="Show help for rtcompile or a command.",
    )
    help_.add_argument("topic", nargs="?", metavar="COMMAND", help=f"one of {', '.join(COMMANDS)}")
    help_.set_defaults(run=None)
    commands["help"] = help_
    return CommandLine(parser, commands)


def with_command(arguments: list[str]) -> list[str]:
    """The arguments with `compile` made explicit when no command was named."""
    if arguments and arguments[0] not in COMMANDS and arguments[0] not in _TOP_LEVEL_OPTIONS:
        return ["compile", *arguments]
    return arguments


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    _tolerant_output_streams()
    try:
        with termination_raises():
            return dispatch(arguments)
    except KeyboardInterrupt:
        print("rtcompile: interrupted", file=sys.stderr)
        return INTERRUPT_EXIT_STATUS
    except Terminated as terminated:
        print(f"rtcompile: stopped by {terminated.signal_name}", file=sys.stderr)
        return terminated.exit_status
    except BrokenPipeError:
        # The reader went away (`rtcompile list | head`): stop quietly, and keep Python's flush at exit quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13


def dispatch(arguments: list[str]) -> int:
    command_line = build_parser()
    if not arguments:
        command_line.parser.error("nothing to do: give templates to compile (rtcompile IN... -o OUT) or a command")
    args = command_line.parser.parse_args(with_command(arguments))
    if args.command == "help":
        return run_help(command_line, args.topic)
    run: Callable[[argparse.Namespace], int] = args.run
    return run(args)


def _tolerant_output_streams() -> None:
    """Never crash on text the terminal's encoding cannot show (PYTHONIOENCODING=latin-1): escape it."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def run_help(command_line: CommandLine, topic: str | None) -> int:
    if topic is None:
        command_line.parser.print_help()
        return EXIT_OK
    parser = command_line.commands.get(topic)
    if parser is None:
        close = difflib.get_close_matches(topic, COMMANDS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        command_line.commands["help"].error(f"no command {topic!r}{hint} (commands: {', '.join(COMMANDS)})")
    parser.print_help()
    return EXIT_OK


# --------------------------------------------------------------------------- compile


def run_compile(args: argparse.Namespace) -> int:
    try:
        jobs = plan(args.inputs, args.output)
        options = ModuleOptions(function_tools=args.function_tools, openai=args.openai)
        results = [(job, compile_job(job, stdlib_only=args.stdlib_only, options=options)) for job in jobs]
        if args.check or args.diff:
            return report_changes(results, show_diff=args.diff, options=options)
        write(results)
    except (TemplateError, UsageError, OutputError) as error:
        report_error("rtcompile", error)
        return EXIT_USAGE
    return EXIT_OK


@dataclass(frozen=True)
class Job:
    source: Path | TemplateText  # a template file, or what standard input held
    output: Path | None  # None: standard output
    make_directory: bool = False  # the output directory is created (once everything compiled)
    bundled_name: str | None = None  # the input named a bundled template


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


@dataclass(frozen=True)
class _Input:
    source: Path | TemplateText
    bundled_name: str | None = None


def _inputs(raw_inputs: Sequence[str]) -> list[_Input]:
    found: list[_Input] = []
    if raw_inputs.count(STDIN) > 1:
        raise UsageError("standard input (-) can be read only once")
    for raw in raw_inputs:
        if raw == STDIN:
            found.append(_Input(TemplateText(sys.stdin.buffer.read())))
            continue
        path = Path(raw)
        if path.is_dir():
            found += [_Input(p) for p in template_files(path)]
            continue
        resolved = resolve_template_path(raw)  # the path itself when it exists, else a bundled template
        found.append(_Input(Path(resolved), bundled_name=None if resolved == raw else raw))
    return found


def plan(inputs: Sequence[str], output: str) -> list[Job]:
    sources = _inputs(inputs)
    if output == STDIN:
        if len(sources) != 1:
            raise UsageError(f"-o - writes one module to stdout, but {len(sources)} templates were given")
        return [Job(sources[0].source, None, bundled_name=sources[0].bundled_name)]
    out = Path(output)
    names_a_file = output.endswith(".py") and not out.is_dir()
    to_directory = out.is_dir() or output.endswith(("/", os.sep)) or len(sources) > 1
    to_directory = to_directory or (Path(inputs[0]).is_dir() and not names_a_file)
    if not to_directory:
        only = sources[0]
        return [_checked(Job(only.source, out, bundled_name=only.bundled_name))]
    if out.exists() and not out.is_dir():
        raise UsageError(f"{output}: is a file, but several templates need an output directory")
    if names_a_file:
        raise UsageError(
            f"{output}: names a file, but {len(sources)} templates were given; give a directory to receive "
            "one <name>_parser.py each"
        )
    jobs = []
    for item in sources:
        if isinstance(item.source, TemplateText):
            raise UsageError("a template read from standard input has no name: give -o a file name, or - for stdout")
        output_path = out / module_name(item.source)
        jobs.append(_checked(Job(item.source, output_path, make_directory=True, bundled_name=item.bundled_name)))
    targets = [job.output for job in jobs]
    clashes = sorted({str(t) for t in targets if targets.count(t) > 1})
    if clashes:
        raise UsageError(f"two templates would both be written to {clashes[0]}; rename one of them")
    return jobs


def _checked(job: Job) -> Job:
    assert job.output is not None
    if job.output.is_dir():
        raise UsageError(f"{job.output}: is a directory; give a file name, or several inputs to fill a directory")
    if isinstance(job.source, Path) and job.output.exists() and job.output.resolve() == job.source.resolve():
        raise UsageError(f"{job.output}: the output would overwrite the input template")
    return job


def compile_job(job: Job, *, stdlib_only: bool = False, options: ModuleOptions = DEFAULT_OPTIONS) -> str:
    """The module's code; one warning line per template warning (what `rtcompile lint` reports as
    warnings: backtracking patterns...), and per pattern that makes it import `regex` (an error with
    `stdlib_only`)."""
    compiled = compile_module(
        job.source, source_name=source_name(job), function_tools=options.function_tools, openai=options.openai
    )
    for warning in compiled.template_warnings:
        print(printable(f"rtcompile: warning: {warning}"), file=sys.stderr)
    for note in compiled.regex_fallbacks:
        if stdlib_only:
            message = note.message.removesuffix(REGEX_FALLBACK_NOTE) + ", and --stdlib-only forbids the regex module"
            raise TemplateError(message, note.path, file=note.file, line=note.line, col=note.col)
        print(printable(f"rtcompile: warning: {note}"), file=sys.stderr)
    return compiled.code


def source_name(job: Job) -> str:
    """How the module's header names its template: relative to the module, so that the output does
    not depend on the directory rtcompile was run from (and `--check` agrees from anywhere); a
    bundled template by its name, which is the same on every machine."""
    if isinstance(job.source, TemplateText):
        return job.source.name
    if job.bundled_name is not None:
        return f"bundled template {job.bundled_name}"
    if job.output is None:
        return job.source.as_posix()
    return Path(os.path.relpath(job.source.resolve(), job.output.resolve().parent)).as_posix()


def write(results: Sequence[tuple[Job, str]]) -> None:
    files = [(job.output, code) for job, code in results if job.output is not None]
    directories = sorted({job.output.parent for job, _ in results if job.output is not None and job.make_directory})
    write_all(files, create_directories=directories)
    for job, code in results:
        if job.output is None:
            write_stdout(code)


def report_changes(
    results: Sequence[tuple[Job, str]], *, show_diff: bool, options: ModuleOptions = DEFAULT_OPTIONS
) -> int:
    """For --check and --diff: list (or show) outputs that differ from what would be generated.

    A module compiled with other options (`--no-function-tools`, `--no-openai`) is stale too (its code
    differs); the message says so, since the fix is then the option, not a recompile."""
    stale = []
    for job, code in results:
        if job.output is None:
            continue
        current = _read_existing(job.output)
        if current == code:
            continue
        stale.append(job)
        origin = job.bundled_name if job.bundled_name is not None else job.source
        if isinstance(origin, TemplateText):
            origin = origin.name
        if show_diff:
            diff = difflib.unified_diff(
                (current or "").splitlines(keepends=True),
                code.splitlines(keepends=True),
                fromfile=f"{job.output} (current)" if current is not None else "/dev/null",
                tofile=f"{job.output} (from {origin})",
            )
            write_stdout(
                "".join(line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n" for line in diff)
            )
        else:
            state = "missing" if current is None else "stale"
            hint = _options_hint(current, options)
            print(printable(f"{job.output}: {state} (regenerate from {origin}{hint})"), file=sys.stderr)
    if show_diff:
        return EXIT_OK
    return EXIT_FAILED if stale else EXIT_OK


def _options_hint(current: str | None, options: ModuleOptions) -> str:
    """For a stale module whose recorded options are not this run's: which options it had."""
    hints = []
    for constant, flag, _, value in options.recorded():
        recorded = re.search(rf"^{constant}: Final = (True|False)\b", current or "", re.MULTILINE)
        if recorded is None or (recorded.group(1) == "True") == value:
            continue
        if value:
            hints.append(f"; it was compiled with {flag}: give --check that option too")
        else:
            hints.append(f"; it was compiled without {flag}")
    return "".join(hints)


def _read_existing(path: Path) -> str | None:
    """An output's current text: None if there is none; undecodable bytes shown as U+FFFD (so: stale)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise OutputError(f"{path}: cannot read ({error.strerror})") from None
    return data.decode("utf-8", errors="replace")


# --------------------------------------------------------------------------- verify and lint


def run_verify(args: argparse.Namespace) -> int:
    prog = "rtcompile verify"
    if args.cases < 1:
        report_error(prog, "--cases must be at least 1")
        return EXIT_USAGE
    from rtcompile.tooling import verify

    try:
        summary = verify.run(
            args.template,
            module_path=args.module,
            cases=args.cases,
            seed=args.seed,
            progress=verify.ProgressPrinter(args.cases),
        )
    except verify.TemplateMismatch as mismatch:
        report_error(prog, mismatch)
        return EXIT_FAILED
    except (TemplateError, UsageError, ValueError, OSError) as error:
        report_error(prog, error)
        return EXIT_USAGE
    print(verify.report(args.template, summary))
    return EXIT_FAILED if summary.divergence is not None else EXIT_OK


def run_lint(args: argparse.Namespace) -> int:
    prog = "rtcompile lint"
    from rtcompile.tooling import lint

    try:
        resolve_template_path(args.template)  # a missing input is a usage error, as for compile and verify
        findings = lint.run(args.template, chat_template_path=args.chat_template, cases=args.cases)
    except (TemplateError, UsageError, OSError) as error:
        report_error(prog, error)
        return EXIT_USAGE
    for finding in findings:
        print(finding.render())
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = sum(1 for f in findings if f.severity == "warning")
    verdict = " (--strict: warnings count as errors)" if args.strict and warnings else ""
    print(printable(f"{args.template}: {errors} error(s), {warnings} warning(s){verdict}"), file=sys.stderr)
    return EXIT_FAILED if errors or (args.strict and warnings) else EXIT_OK


# --------------------------------------------------------------------------- grammar


def run_grammar(args: argparse.Namespace) -> int:
    prog = "rtcompile grammar"
    from rtcompile.grammar.command import grammar_text

    try:
        resolve_template_path(args.template)  # a missing input is a usage error, as for the other commands
        text = grammar_text(
            args.template,
            args.tools,
            tool_choice=args.tool_choice,
            parallel=args.parallel,
            format=args.format,
            prefix_path=args.prefix_file,
        )
    except (TemplateError, UsageError, ValueError, OSError) as error:
        report_error(prog, error)
        return EXIT_USAGE
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK


# --------------------------------------------------------------------------- list


def run_list(args: argparse.Namespace) -> int:
    templates = bundled_templates()
    if not templates:
        where = bundled_directory()
        report_error("rtcompile list", f"no bundled templates found{f' in {where}' if where else ''}")
        return EXIT_USAGE
    if args.names:
        print("\n".join(t.name for t in templates))
        return EXIT_OK
    width = max(40, min(shutil.get_terminal_size().columns, 120))
    for template in templates:
        print(f"{template.name}  ({template.family})")
        prompt = "yes (render_prompt works by name)" if template.has_chat_template else "none bundled"
        for label, text in (("covers", template.covers), ("source", template.source), ("chat template", prompt)):
            if text:
                lines = textwrap.wrap(
                    text,
                    width,
                    initial_indent=f"    {label}: ",
                    subsequent_indent=" " * 12,
                    break_long_words=False,  # keep tokens such as <|START_THINKING|> whole
                    break_on_hyphens=False,
                )
                print("\n".join(lines))
    with_prompt = sum(t.has_chat_template for t in templates)
    print(
        f"\n{len(templates)} templates, {with_prompt} with their model's chat template; use a name wherever a "
        "template path goes: rtcompile NAME -o NAME_parser.py"
    )
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
