"""How a module is compiled beyond its template: what it leaves out, and how that is recorded in it.

Each option is recorded in the module as a constant (`FUNCTION_TOOLS: Final = False`), so that
`--check` can tell a module compiled with other options (the fix: give `--check` the same options)
from a stale one (the fix: recompile).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field


def _option(constant: str, flag: str, what: str) -> bool:
    """An option that is on by default: `constant` records it in the module, `flag` turns it off."""
    return field(default=True, metadata={"constant": constant, "flag": flag, "what": what})


@dataclass(frozen=True)
class ModuleOptions:
    # Off: `tools` takes JSON schemas only; the conversion of Python functions (transformers'
    # `get_json_schema`, about 340 lines) is left out.
    function_tools: bool = _option("FUNCTION_TOOLS", "--no-function-tools", "whether `tools` takes Python functions")
    # Off: `to_openai`, `DeltaStream` and the rest of the OpenAI adapter are left out.
    openai: bool = _option("OPENAI", "--no-openai", "whether the OpenAI-compatible adapter is in")

    def recorded(self) -> Iterator[tuple[str, str, str, bool]]:
        """(constant, flag, what it records, value) of each option."""
        for option in dataclasses.fields(self):
            meta = option.metadata
            yield meta["constant"], meta["flag"], meta["what"], getattr(self, option.name)


DEFAULT_OPTIONS = ModuleOptions()  # everything in, as the reference's behaviour asks
