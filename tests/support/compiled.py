"""Compile templates to real files and import them, as a user who vendors the module would."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib.util
import json
import pickle
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import regex

import rtcompile
from rtcompile.api import CompiledModule
from tests.support.bundled import MODELS, template_file, template_of

_DIRECTORY = Path(tempfile.mkdtemp(prefix="rtcompile-tests-"))
# A directory the pytest-xdist workers of this run share, to compile each bundled template once per run
# rather than once per worker (about 9 CPU-s each); set by tests/conftest.py, None without workers.
SHARED: Path | None = None
_MODULES: dict[str, ModuleType] = {}
_SOURCES: dict[str, str] = {}


def template_key(template: dict[str, Any]) -> str:
    """A key that tells templates apart (not sort_keys: key order is field order, which changes behaviour)."""
    return hashlib.sha256(json.dumps(template, default=repr).encode("utf-8", "surrogatepass")).hexdigest()


def compiled_source(template: dict[str, Any]) -> str:
    """The generated module's source for `template` (cached per template: tests that load it their own way,
    as the work meter does, share the compile)."""
    key = template_key(template)
    if key not in _SOURCES:
        _SOURCES[key] = rtcompile.compile_template(template)
    return _SOURCES[key]


def compiled_module(template: dict[str, Any]) -> ModuleType:
    """The generated module for `template`, written to disk and imported (cached per template). A bundled
    template's module is `bundled_module`'s: each template is compiled once per test run."""
    key = template_key(template)
    model = _bundled_keys().get(key)
    if model is not None:
        return bundled_module(model)
    if key not in _MODULES:
        path = _DIRECTORY / f"parser_{key[:16]}.py"
        path.write_text(compiled_source(template), encoding="utf-8")
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


@functools.cache
def bundled_compiled(model: str) -> CompiledModule:
    """A bundled template compiled as `rtcompile templates -o generated` compiles it (the module's header
    names `../templates/<model>.json`), once per test run: its code is what generated/ must hold, and
    which patterns need `regex` comes with it. The workers of a run share it: the first to need it compiles
    it (under a lock, which the others wait for) and stores it in `SHARED`, the others read it there."""
    if SHARED is None:
        return _compile_bundled(model)
    with open(SHARED / f"{model}.lock", "wb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        stored = SHARED / f"{model}.pickle"
        if stored.exists():
            compiled: CompiledModule = pickle.loads(stored.read_bytes())  # noqa: S301 - this run's own file
            return compiled
        compiled = _compile_bundled(model)
        stored.write_bytes(pickle.dumps(compiled))
        return compiled


def _compile_bundled(model: str) -> CompiledModule:
    return rtcompile.compile_module(template_file(model), source_name=f"../templates/{model}.json")


def bundled_code(model: str) -> str:
    """The module of a bundled template as generated/ must hold it (`bundled_compiled`)."""
    return bundled_compiled(model).code


@functools.cache
def bundled_module(model: str) -> ModuleType:
    """`bundled_code(model)`, written to disk and imported."""
    path = _DIRECTORY / f"{model}_parser.py"
    path.write_text(bundled_code(model), encoding="utf-8")
    return import_file(path, f"rtcompile_test_bundled_{model}")


@functools.cache
def _bundled_keys() -> dict[str, str]:
    """Which bundled template a template dict is, by `template_key`."""
    return {template_key(template_of(model)): model for model in MODELS}


def scanned_chunks(template: dict[str, Any], chunks: list[str]) -> int:
    """How many of `chunks`, fed to `template`'s compiled module, reach the engine's scan
    (`StreamingParser.feed`, which a module's own `feed` calls for what its fast paths do not take,
    directly or through the engine that waits, `WaitingParser`, whose `feed` scans only through it)."""
    module = compiled_module(template)
    engine = next(c for c in module.ResponseParser.__mro__ if c.__name__ == "StreamingParser")
    scans = 0
    original = engine.feed

    def counted(self: Any, text: str) -> Any:
        nonlocal scans
        scans += 1
        return original(self, text)

    engine.feed = counted
    try:
        parser = module.ResponseParser("")
        for chunk in chunks:
            parser.feed(chunk)
    finally:
        engine.feed = original
    return scans


def regex_partial_searches(template: dict[str, Any], chunks: list[str]) -> int:
    """How many partial searches with the `regex` module (`search(..., partial=True)`, microseconds each:
    what a module does where a delimiter has no exact stdlib translation) feeding `chunks` to `template`'s
    compiled module makes, in its scanners and its `_holds_partial` alike."""
    module = compiled_module(template)
    parser = module.ResponseParser("")  # (compiles the module's patterns, which the count then wraps)
    searches = 0

    class Counted:
        def __init__(self, pattern: Any) -> None:
            self._pattern = pattern

        def search(self, *args: Any, **kwargs: Any) -> Any:
            nonlocal searches
            searches += bool(kwargs.get("partial"))
            return self._pattern.search(*args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._pattern, name)

    originals = {name: value for name, value in vars(module).items() if isinstance(value, regex.Pattern)}
    assert originals, "the module has no `regex` pattern"
    vars(module).update({name: Counted(pattern) for name, pattern in originals.items()})
    try:
        for chunk in chunks:
            parser.feed(chunk)
    finally:
        vars(module).update(originals)
    return searches
