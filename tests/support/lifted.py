"""Runtime helpers as generated modules carry them: lifted (`rtcompile.backends.codegen.lift`) into a
module with the generated modules' own header, where `typing` is imported for the type checker only.

`lifted_module("tool_schema")` holds every top-level definition of `rtcompile.runtime.tool_schema`
plus whatever they use, exactly as a compiled module would hold them; `rerun_tests` executes a test
file again with the runtime modules it imports swapped for such lifted copies.
"""

from __future__ import annotations

import ast
import functools
import importlib
import sys
import types
from pathlib import Path
from typing import Any

import rtcompile.runtime
from rtcompile.backends.codegen.generate import FIXED_IMPORTS, _merge_imports
from rtcompile.backends.codegen.layout import INDENT, import_lines
from rtcompile.backends.codegen.lift import RUNTIME_DIR, lift
from tests.support import lanes

# The header every generated module starts with (tests/codegen/test_lifted_runtime.py checks that the skeleton
# still spells it this way): typing names exist for the type checker only, `cast` and `overload` at
# run time as no-op stand-ins.
PREAMBLE = """from __future__ import annotations

{imports}

# typing is slow to import: the runtime defines the two names it calls, and only type
# checkers read the import (last, so that linters, too, know `overload` for typing's).
TYPE_CHECKING = False
if not TYPE_CHECKING:

    def cast(_type: object, value: object) -> object:
        return value

    def overload(function: object) -> object:
        return function

else:
{typing_import}
"""


def top_level_names(runtime_module: str) -> list[str]:
    """The names a runtime module defines at top level (functions, classes, constants)."""
    tree = ast.parse((RUNTIME_DIR / f"{runtime_module}.py").read_text(encoding="utf-8"))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names


@functools.cache
def lifted_module(runtime_module: str) -> types.ModuleType:
    """A module holding the lifted copy of every definition of `rtcompile.runtime.<runtime_module>`."""
    lifted = lift((runtime_module, name) for name in top_level_names(runtime_module))
    imports, typing_names = _merge_imports([*FIXED_IMPORTS, *lifted.imports])
    typing_import = "\n".join(import_lines(INDENT, "typing", typing_names))
    code = PREAMBLE.format(imports=imports, typing_import=typing_import) + "\n\n" + "\n\n\n".join(lifted.definitions)
    name = f"rtcompile_lifted_{runtime_module}"
    module = types.ModuleType(name)
    module.__file__ = f"<lifted {runtime_module}>"
    sys.modules[name] = module
    exec(compile(code, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own generated code
    return module


def rerun_tests(
    test_file: Path, runtime_modules: list[str], into: dict[str, Any], prefix: str, *, source_tests: frozenset[str]
) -> None:
    """Execute `test_file` with each of `runtime_modules` replaced by its lifted copy, and put its test
    functions into `into` (a test module's globals) as ``test_<prefix>_<name>``; `source_tests` are
    the ones that read the runtime module's source file rather than run it (left out: a lifted copy
    has no file).

    The tests run with the fast lane's sizes (`tests.support.lanes`), in every run: the lifted copy is
    the runtime's own text, so what can go wrong in lifting (a name the lifter did not follow, a typing
    name used at run time) fails on the first example that reaches the code, not on a rare input. The
    original tests draw every example against the runtime itself."""
    saved = {}
    full, lanes.FULL = lanes.FULL, False  # a fast lane's share of examples: see the docstring
    for runtime in runtime_modules:
        key = f"rtcompile.runtime.{runtime}"
        saved[runtime] = sys.modules.get(key) or importlib.import_module(key)
        sys.modules[key] = lifted_module(runtime)
        setattr(rtcompile.runtime, runtime, lifted_module(runtime))
    try:
        namespace: dict[str, Any] = {"__name__": f"tests.lifted_{test_file.stem}", "__file__": str(test_file)}
        exec(compile(test_file.read_text(encoding="utf-8"), str(test_file), "exec"), namespace)  # noqa: S102
    finally:
        lanes.FULL = full
        for runtime, module in saved.items():
            sys.modules[f"rtcompile.runtime.{runtime}"] = module
            setattr(rtcompile.runtime, runtime, module)
    for name, value in namespace.items():
        if name.startswith("test_") and callable(value) and name not in source_tests:
            into[f"test_{prefix}_{name[5:]}"] = value
