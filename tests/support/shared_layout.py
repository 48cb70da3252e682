"""Parser modules compiled with `--shared-runtime`, written as a user vendors them: a package holding
`rtcompile_runtime.py` and thin `<name>_parser.py` modules, imported as `package.name_parser`.

The package gets the empty `__init__.py` the README tells users to add (rtcompile never writes one).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import rtcompile
from rtcompile.backends.codegen.shared_runtime import RUNTIME_FILE

_ROOT = Path(tempfile.mkdtemp(prefix="rtcompile-shared-tests-"))
_PACKAGE = "rtcompile_test_shared_parsers"  # random templates' modules, cached for the session
_MODULES: dict[str, ModuleType] = {}


def write_package(directory: Path, modules: dict[str, str]) -> Path:
    """`directory` made a package holding the shared runtime and `modules` (file name -> code)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "__init__.py").write_text("", encoding="utf-8")
    (directory / RUNTIME_FILE).write_text(rtcompile.compile_shared_runtime(), encoding="utf-8")
    for name, code in modules.items():
        (directory / name).write_text(code, encoding="utf-8")
    return directory


def import_from(directory: Path, module: str) -> ModuleType:
    """`package.module`, where `directory` is the package (its parent goes on `sys.path`)."""
    parent = str(directory.parent)
    if parent not in sys.path:
        sys.path.insert(0, parent)
    return importlib.import_module(f"{directory.name}.{module}")


def shared_module(template: dict[str, Any]) -> ModuleType:
    """The `--shared-runtime` module of `template`, in a package beside the runtime, imported (cached)."""
    # Not sort_keys: key order is field order, which changes behaviour.
    key = hashlib.sha256(json.dumps(template, default=repr).encode("utf-8", "surrogatepass")).hexdigest()
    if key not in _MODULES:
        name = f"parser_{key[:16]}"
        code = rtcompile.compile_template(template, shared_runtime=True)
        package = write_package(_ROOT / _PACKAGE, {f"{name}.py": code})
        _MODULES[key] = import_from(package, name)
    return _MODULES[key]
