"""How a module is compiled beyond its template: what it leaves out, and how that is recorded in it.

Each option is recorded in the module as a constant (`FUNCTION_TOOLS: Final = False`), so that
`--check` can tell a module compiled with other options (the fix: give `--check` the same options)
from a stale one (the fix: recompile). An option that is off by default is recorded only where it is
on: a module compiled without it is then exactly what it was before the option existed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field


def _option(constant: str, flag: str, what: str, *, default: bool = True) -> bool:
    """An option: `constant` records it in the module, `flag` turns it from `default` to the other value."""
    return field(default=default, metadata={"constant": constant, "flag": flag, "what": what})


@dataclass(frozen=True)
class Option:
    """One option of a module, as the module records it."""

    constant: str
    flag: str
    what: str  # what the constant says, as its comment in the module
    value: bool
    default: bool

    @property
    def written(self) -> bool:
        """Whether the module records it: always, unless it is off by default and off."""
        return self.default or self.value


@dataclass(frozen=True)
class ModuleOptions:
    # Off: `tools` takes JSON schemas only; the conversion of Python functions (transformers'
    # `get_json_schema`, about 340 lines) is left out.
    function_tools: bool = _option("FUNCTION_TOOLS", "--no-function-tools", "whether `tools` takes Python functions")
    # Off: `to_openai`, `DeltaStream` and the rest of the OpenAI adapter are left out.
    openai: bool = _option("OPENAI", "--no-openai", "whether the OpenAI-compatible adapter is in")
    # Off: `grammar()` and its template skeleton (`GRAMMAR`) are left out, with the grammar builder.
    grammar: bool = _option("GRAMMAR_FUNCTION", "--no-grammar", "whether `grammar()` (constrained decoding) is in")
    # On: the runtime is imported from `rtcompile_runtime.py` beside the module, written once for all
    # the modules there (see `shared_runtime`), instead of being carried by each.
    shared_runtime: bool = _option(
        "SHARED_RUNTIME", "--shared-runtime", "whether the runtime is imported from beside this module", default=False
    )

    def recorded(self) -> Iterator[Option]:
        """Each option, with its value (`Option.written`: whether the module records it)."""
        for option in dataclasses.fields(self):
            meta = option.metadata
            value = getattr(self, option.name)
            yield Option(meta["constant"], meta["flag"], meta["what"], value, option.default)  # type: ignore[arg-type]


DEFAULT_OPTIONS = ModuleOptions()  # everything in, as the reference's behaviour asks
