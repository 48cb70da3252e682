"""Compile templates to real files and import them, as a user who vendors the module would."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import rtcompile

_DIRECTORY = Path(tempfile.mkdtemp(prefix="rtcompile-tests-"))
_MODULES: dict[str, ModuleType] = {}


def template_key(template: dict[str, Any]) -> str:
    """A key that tells templates apart (not sort_keys: key order is field order, which changes behaviour)."""
    return hashlib.sha256(json.dumps(template, default=repr).encode("utf-8", "surrogatepass")).hexdigest()


def compiled_module(template: dict[str, Any]) -> ModuleType:
    """The generated module for `template`, written to disk and imported (cached per template)."""
    key = template_key(template)
    if key not in _MODULES:
        code = rtcompile.compile_template(template)
        path = _DIRECTORY / f"parser_{key[:16]}.py"
        path.write_text(code, encoding="utf-8")
        _MODULES[key] = import_file(path, f"rtcompile_test_parser_{key[:16]}")
    return _MODULES[key]


def import_file(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def compiled_engine(template: dict[str, Any]) -> Any:
    module = compiled_module(template)
    return lambda prefix, tools: module.ResponseParser(prefix, tools=tools)
