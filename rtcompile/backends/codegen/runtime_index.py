"""What the lifter (`lift`) knows of a runtime module, and the on-disk cache that keeps it.

A runtime module is read once (`runtime_reader`, with libcst) into a `ModuleIndex`: its top-level
definitions in order, what each reads, its import bindings, each definition's source in the pieces a
lift joins (a class method by method), and the bodies of methods a generator may write inline. That
reading is most of the first compile in a process (libcst parses every runtime module: about 0.8 s),
and it depends on nothing but the module's source and the reader: so the index is kept on disk, keyed
by a hash of both, and a later process (the next `rtcompile` run) loads it instead (a few
milliseconds). A cached index is the reader's output as JSON, so a lift from it is the same text,
byte for byte.

Where: `$RTCOMPILE_CACHE_DIR` if set (set it empty for no cache), else `$XDG_CACHE_HOME/rtcompile`,
else `~/.cache/rtcompile`. A file that cannot be read or written is no error: the module is read
again. Files are written whole (a temporary file renamed), so a concurrent run never reads half of
one; writing one removes that module's older ones.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE_ENV = "RTCOMPILE_CACHE_DIR"
# The code that decides what an index holds: a change to either file is a new key.
_READERS = ("runtime_index.py", "runtime_reader.py")
FORMAT = 1  # of the JSON below


@dataclass(frozen=True)
class Method:
    """A method of a runtime class, lifted only where it is called (see `lift`)."""

    name: str
    uses: frozenset[str]  # names it reads
    attributes: frozenset[str]  # attribute names it reads (`self._x`: `_x`)

    @property
    def always(self) -> bool:
        """Public and dunder methods are part of the class's interface: always lifted."""
        return not self.name.startswith("_") or self.name.endswith("__")


# A definition's source in consecutive pieces, each the text of one class member (labelled with the
# method's name, or None for anything else) or of what surrounds them (None).
Pieces = tuple[tuple[str | None, str], ...]


@dataclass(frozen=True)
class Definition:
    module: str
    name: str
    pieces: Pieces  # its source (with its `@overload`s, leading comments and blank lines)
    uses: frozenset[str]  # names read outside its methods
    attributes: frozenset[str]  # attribute names read outside its methods
    methods: tuple[Method, ...]  # a class's methods; () for anything else

    def source(self, methods: frozenset[str] | None) -> str:
        """Its source; of a class, with only the methods in `methods` (all when None)."""
        kept = (text for label, text in self.pieces if label is None or methods is None or label in methods)
        return "".join(kept).strip("\n")


@dataclass(frozen=True)
class InlineBody:
    """A method's body as a generator writes it inline (see `lift.inlined_method`)."""

    annotated: tuple[str, ...]  # its statements, docstring and final `return NAME` left out
    plain: tuple[str, ...]  # the same, annotated assignments without their annotation
    returned: str  # the NAME


@dataclass(frozen=True)
class ModuleIndex:
    definitions: dict[str, Definition]  # in the order the module defines them
    imports: dict[str, str]  # bound name -> import line, or "@sibling:name" for a runtime module's
    inlined: dict[str, InlineBody | str]  # "Class.method" -> its body, or why it cannot be inlined


def module_index(name: str, source: str, read: Callable[[str, str], ModuleIndex]) -> ModuleIndex:
    """The index of runtime module `name` whose text is `source`: from the cache, else `read(name,
    source)` (then cached)."""
    path = _cache_file(name, source)
    if path is not None:
        cached = _load(path, name)
        if cached is not None:
            return cached
    index = read(name, source)
    if path is not None:
        _store(path, name, _to_json(index))
    return index


def cache_dir() -> Path | None:
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rtcompile"


def _cache_file(name: str, source: str) -> Path | None:
    directory = cache_dir()
    if directory is None:
        return None
    digest = hashlib.sha256(f"{FORMAT}\0{name}\0{source}\0{_readers_digest()}".encode())
    return directory / f"lift-{name}-{digest.hexdigest()[:32]}.json"


@functools.cache
def _readers_digest() -> str:
    """The hash of the code that decides what an index holds (read once per process, not per module)."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for reader in _READERS:
        digest.update((here / reader).read_bytes())
    return digest.hexdigest()


def _load(path: Path, name: str) -> ModuleIndex | None:
    try:
        return _from_json(json.loads(path.read_text(encoding="utf-8")), name)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None  # missing, unreadable or not of this shape: read the module again


def _store(path: Path, name: str, data: dict[str, Any]) -> None:
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, ensure_ascii=False)
        os.replace(temporary, path)
        temporary = None
        for older in path.parent.glob(f"lift-{name}-*.json"):
            if older != path:
                older.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only or full disk: the next process reads the module again
    finally:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)


def _to_json(index: ModuleIndex) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "definitions": [
            [
                d.name,
                [list(piece) for piece in d.pieces],
                sorted(d.uses),
                sorted(d.attributes),
                [[m.name, sorted(m.uses), sorted(m.attributes)] for m in d.methods],
            ]
            for d in index.definitions.values()
        ],
        "imports": index.imports,
        "inlined": {
            key: body if isinstance(body, str) else [list(body.annotated), list(body.plain), body.returned]
            for key, body in index.inlined.items()
        },
    }


def _from_json(data: dict[str, Any], module: str) -> ModuleIndex:
    if data["format"] != FORMAT:
        raise ValueError("another format")
    definitions = {}
    for name, pieces, uses, attributes, methods in data["definitions"]:
        definitions[str(name)] = Definition(
            module,
            str(name),
            tuple((label, str(text)) for label, text in pieces),
            frozenset(uses),
            frozenset(attributes),
            tuple(Method(m, frozenset(u), frozenset(a)) for m, u, a in methods),
        )
    inlined: dict[str, InlineBody | str] = {
        key: body if isinstance(body, str) else InlineBody(tuple(body[0]), tuple(body[1]), str(body[2]))
        for key, body in data["inlined"].items()
    }
    return ModuleIndex(definitions, {str(k): str(v) for k, v in data["imports"].items()}, inlined)
