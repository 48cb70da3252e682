"""What the generator collects while it walks a plan, before the module is assembled."""

from __future__ import annotations

from dataclasses import dataclass, field

from rtcompile.backends.codegen.writer import Names, literal
from rtcompile.frontend.errors import JsonPath, TemplateError
from rtcompile.regex.translate import UnsupportedRegex, translate

# The runtime helpers every module needs, as (runtime module, name).
ALWAYS_LIFTED = [
    ("engine", "StreamingParser"),
    ("engine", "parse_texts"),
]


@dataclass
class ModuleParts:
    """Code accumulated while walking the plan: helpers to lift, constants, patterns, functions, types."""

    names: Names = field(default_factory=Names)
    wanted: list[tuple[str, str]] = field(default_factory=lambda: list(ALWAYS_LIFTED))
    constants: list[str] = field(default_factory=list)
    patterns: list[tuple[str, str]] = field(default_factory=list)  # (name, re.compile(...) source)
    scanners: list[str] = field(default_factory=list)  # scanner and fast-path functions
    functions: list[str] = field(default_factory=list)  # handlers and what they call
    shapes: list[str] = field(default_factory=list)  # TypedDicts of transform results

    def need(self, module: str, name: str) -> None:
        """Lift `name` from `rtcompile.runtime.<module>` into the generated module."""
        if (module, name) not in self.wanted:
            self.wanted.append((module, name))

    def constant(self, hint: str, code: str) -> str:
        name = self.names.new("_", hint, constant=True)
        self.constants.append(f"{name}: Final = {code}")
        return name

    def pattern(self, hint: str, source: str, flags: str = "re.DOTALL", *, source_code: str | None = None) -> str:
        """A compiled regex, compiled on first use (see `_compile_patterns` in the generated module).

        `source_code` is an expression that builds the source at run time, for patterns made of data the
        module holds anyway (an alternation of its literals); else the source is written as a literal."""
        name = self.names.new("_RE", hint, constant=True)
        self.patterns.append((name, f"re.compile({source_code or literal(source)}, {flags})"))
        return name

    def patterns_code(self) -> str:
        """Declarations plus the function that compiles them: translated Unicode classes make some
        patterns slow to compile, and doing it at import would make every import pay for it."""
        if not self.patterns:
            return "def _compile_patterns() -> None:\n    pass"
        names = ", ".join(name for name, _ in self.patterns)
        lines = [f"{name}: re.Pattern[str]" for name, _ in self.patterns]
        lines += ["", "", "def _compile_patterns() -> None:", f"    global {names}"]
        lines += [f"    {name} = {code}" for name, code in self.patterns]
        return "\n".join(lines)

    def stdlib_regex(
        self, pattern: str, hint: str, where: JsonPath, *, streamed: bool = True
    ) -> tuple[str, str | None]:
        """Pattern names for a template regex: its exact stdlib translation and, for delimiters matched
        in the stream (`streamed`), the pattern that decides partial matches at the buffer's end."""
        try:
            translated = translate(pattern)
        except UnsupportedRegex as error:
            raise TemplateError(
                f"{error}; the generated module must run on the standard library alone", where
            ) from None
        full = self.pattern(hint, translated.full)
        if not streamed:
            return full, None
        return full, self.pattern(f"{hint} partial", translated.prefix)
