"""What the generator collects while it walks a plan, before the module is assembled."""

from __future__ import annotations

from dataclasses import dataclass, field

from rtcompile.backends.codegen.layout import INDENT, LINE_LENGTH, comment_lines, lay_out, split_string, width
from rtcompile.backends.codegen.writer import Names, literal
from rtcompile.errors import JsonPath, format_path
from rtcompile.regex.backtracking import refuse_slow_backtracking
from rtcompile.regex.searched_prefix import searched_prefix
from rtcompile.regex.translate import UnsupportedRegex, translate, translate_complete

# How a module imports `regex` when one of its patterns needs it. The module ships no stubs; the
# second code keeps the comment valid where someone installed types-regex.
REGEX_IMPORT = "import regex  # type: ignore[import-untyped, unused-ignore]"

# The runtime helpers every module needs, as (runtime module, name).
ALWAYS_LIFTED = [("engine", "StreamingParser")]


def _global_statements(names: list[str]) -> list[str]:
    """`global` statements for `names`, as many names to a line as fit (a formatter would break one
    long `global` with backslashes)."""
    lines: list[str] = []
    for name in names:
        if lines and width(f"{lines[-1]}, {name}") <= LINE_LENGTH:
            lines[-1] += f", {name}"
        else:
            lines.append(f"{INDENT}global {name}")
    return lines


@dataclass(frozen=True)
class CompiledPattern:
    """A pattern the module compiles on first use: its name, engine (`re`, or `regex` for a pattern
    with no exact translation), source (or `source_code`, an expression building it), flags, and the
    comment saying where it comes from."""

    name: str
    engine: str
    source: str
    flags: str
    source_code: str | None
    origin: str | None

    def code(self) -> list[str]:
        """Its lines in `_compile_patterns`: the comment, then the statement, a source too long for a line
        written as consecutive string literals (each within the line length)."""
        lines = comment_lines(INDENT, self.origin) if self.origin else []
        statement = (
            f"{INDENT}{self.name} = {self.engine}.compile({self.source_code or literal(self.source)}, {self.flags})"
        )
        laid_out = lay_out(statement)
        if self.source_code or all(width(line) <= LINE_LENGTH for line in laid_out):
            return lines + laid_out
        inner = INDENT * 2
        pieces = split_string(self.source, LINE_LENGTH - width(inner))
        return [
            *lines,
            f"{INDENT}{self.name} = {self.engine}.compile(",
            *(f"{inner}{piece}" for piece in pieces[:-1]),
            f"{inner}{pieces[-1]},",
            f"{inner}{self.flags},",
            f"{INDENT})",
        ]


def _origin(where: JsonPath, pattern: str) -> str:
    """The comment above a translated pattern: where the template has it, and the pattern itself."""
    return f"{format_path(where)}: {literal(pattern)}"


@dataclass(frozen=True)
class RegexFallback:
    """A template pattern the module matches with the `regex` module, because no exact stdlib
    translation is known or stdlib `re` would backtrack on it: which construct, why (`summary`: the
    whole sentence), and where in the template."""

    construct: str
    reason: str
    where: JsonPath
    pattern: str
    summary: str


@dataclass
class ModuleParts:
    """Code accumulated while walking the plan: helpers to lift, constants, patterns, functions, types."""

    names: Names = field(default_factory=Names)
    wanted: list[tuple[str, str]] = field(default_factory=lambda: list(ALWAYS_LIFTED))
    constants: list[str] = field(default_factory=list)
    patterns: list[CompiledPattern] = field(default_factory=list)
    scanners: list[str] = field(default_factory=list)  # scanner and fast-path functions
    functions: list[str] = field(default_factory=list)  # handlers and what they call
    # (role, signature, body) -> name
    shared_functions: dict[tuple[str, str, str], str] = field(default_factory=dict)
    shapes: list[str] = field(default_factory=list)  # TypedDicts of transform results
    fallbacks: list[RegexFallback] = field(default_factory=list)  # patterns matched with `regex`
    regex_patterns: set[str] = field(default_factory=set)  # their names (compiled by `regex`)
    duplicates: dict[str, str] = field(default_factory=dict)  # pattern -> constant naming its renamed groups
    match_only: set[str] = field(default_factory=set)  # patterns whose search is one match at `pos`
    # By streamed pattern (a delimiter's): the names of its stdlib translation and of its partial
    # matches' pattern, or of the `regex` pattern and None, as its scanner searches them (the feed may
    # test them too)
    streamed: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    memo_slots: int = 0  # entries of the scanners' end-of-stream memo (see `ParserProgram.memo_slots`)

    def memo_slot(self) -> int:
        """A fresh entry of the scanners' end-of-stream memo, for one search to remember."""
        self.memo_slots += 1
        return self.memo_slots - 1

    def need(self, module: str, name: str) -> None:
        """Lift `name` from `rtcompile.runtime.<module>` into the generated module."""
        if (module, name) not in self.wanted:
            self.wanted.append((module, name))

    def constant(self, hint: str, code: str) -> str:
        name = self.names.new("_", hint, constant=True)
        self.constants.append("\n".join(lay_out(f"{name}: Final = {code}")))
        return name

    def pattern(
        self,
        hint: str,
        source: str,
        flags: str = "re.DOTALL",
        *,
        source_code: str | None = None,
        origin: str | None = None,
        engine: str = "re",
    ) -> str:
        """A compiled regex, compiled on first use (see `_compile_patterns` in the generated module).

        `source_code` is an expression that builds the source at run time, for patterns made of data the
        module holds anyway (an alternation of its literals); else the source is written as a literal.
        `origin` says where the pattern comes from (the template's own pattern, for a translation): the
        comment above it."""
        name = self.names.new("_RE", hint, constant=True)
        self.patterns.append(CompiledPattern(name, engine, source, flags, source_code, origin))
        return name

    def pattern_once(self, hint: str, source: str, flags: str = "re.DOTALL") -> str:
        """`pattern(hint, source, flags)`, or the name of the pattern of that source and flags made before:
        one compiled pattern for a search written in several places."""
        for made in self.patterns:
            if (made.source, made.flags, made.engine, made.source_code) == (source, flags, "re", None):
                return made.name
        return self.pattern(hint, source, flags)

    def patterns_code(self) -> str:
        """Declarations plus the function that compiles them: translated Unicode classes make some
        patterns slow to compile, and doing it at import would make every import pay for it."""
        if not self.patterns:
            return "def _compile_patterns() -> None:\n    pass"
        lines = [f"{p.name}: {'Any' if p.engine == 'regex' else 're.Pattern[str]'}" for p in self.patterns]
        lines += ["", "", "def _compile_patterns() -> None:"]
        lines += _global_statements([p.name for p in self.patterns])
        for compiled in self.patterns:
            lines += compiled.code()
        return "\n".join(lines)

    def stdlib_regex(
        self, pattern: str, hint: str, where: JsonPath, *, streamed: bool = True, captures: bool = True
    ) -> tuple[str, str | None]:
        """Pattern names for a template regex: its exact stdlib translation and, for delimiters matched
        in the stream (`streamed`), the pattern that decides partial matches at the buffer's end.

        A pattern with no exact stdlib translation, or one stdlib `re` would backtrack on longer than
        `regex` (`refuse_slow_backtracking`), is compiled with `regex` itself, exactly as the
        reference compiles it (`uses_regex` tells which), and recorded in `fallbacks`; its partial
        matches come from `regex`'s own ``partial=True``, so there is no prefix pattern. Without
        `captures` (only spans are read), a complete-match pattern's duplicate group names are renamed
        freely; a streamed pattern's are merged back by `groups_code`.
        """
        try:
            if not streamed:  # matched against complete text only: no partial matching to reproduce
                full = translate_complete(pattern, captures=captures)
                refuse_slow_backtracking(pattern, (full,))
                return self.pattern(hint, full, origin=_origin(where, pattern)), None
            translated = translate(pattern)
            # (the partial matches' pattern as the module searches it: `rtcompile.regex.searched_prefix`)
            searched = searched_prefix(translated.prefix)
            refuse_slow_backtracking(pattern, (translated.full, translated.prefix, searched))
        except UnsupportedRegex as error:
            self.fallbacks.append(RegexFallback(error.construct, error.reason, where, pattern, error.summary))
            origin = f"{format_path(where)}, matched with the regex module"
            name = self.pattern(hint, pattern, "regex.DOTALL", origin=origin, engine="regex")
            self.regex_patterns.add(name)
            if streamed:
                self.streamed[pattern] = name, None
            return name, None
        full = self.pattern(hint, translated.full, origin=_origin(where, pattern))
        if translated.match_only:
            self.match_only.add(full)
        if translated.duplicates:
            self.duplicates[full] = self.constant(f"{hint} duplicates", literal(translated.duplicates))
        origin = f"where {format_path(where)} may still match, as the regex module's partial=True finds"
        self.streamed[pattern] = full, self.pattern(f"{hint} partial", searched, origin=origin)
        return self.streamed[pattern]

    def groups_code(self, name: str, match: str = "m") -> str:
        """The expression for a match's named groups as the reference reports them."""
        duplicates = self.duplicates.get(name)
        if duplicates is None:
            return f"{match}.groupdict()"
        self.need("partial", "merged_groupdict")
        return f"merged_groupdict({match}, {duplicates})"

    def uses_regex(self, name: str) -> bool:
        """Whether the pattern called `name` is compiled by the `regex` module (a fallback)."""
        return name in self.regex_patterns

    @property
    def requires(self) -> tuple[str, ...]:
        """Third-party modules the generated module imports."""
        return ("regex",) if self.fallbacks else ()
