"""What the lifter reads of each runtime module, and the cache that keeps it between runs
(`rtcompile/backends/codegen/runtime_index.py`): a module lifted from a cached index is the same text,
byte for byte, whatever state the cache is in."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from rtcompile.backends.codegen import lift, runtime_index, runtime_reader
from tests.support.paths import ROOT, TEMPLATES

RUNTIME_MODULES = sorted(path.stem for path in lift.RUNTIME_DIR.glob("*.py"))


def _source(module: str) -> str:
    return (lift.RUNTIME_DIR / f"{module}.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("module", RUNTIME_MODULES)
def test_an_index_read_back_from_its_json_is_the_index(module: str) -> None:
    index = runtime_reader.read_module(module, _source(module))
    again = runtime_index._from_json(runtime_index._to_json(index), module)
    assert again == index
    assert list(again.definitions) == list(index.definitions)  # the order a lift follows


@pytest.mark.parametrize("module", RUNTIME_MODULES)
def test_a_class_with_some_of_its_methods_is_what_libcst_writes(module: str) -> None:
    """A class's pieces joined without some methods are libcst's text of the class without them: each
    method left out alone, all of them, and every other one."""
    source = _source(module)
    tree, statements, _ = runtime_reader.parse(module, source)
    index = runtime_reader.read_module(module, source)
    checked = 0
    for definition in index.definitions.values():
        node = statements[definition.name][-1][0]
        if not isinstance(node, cst.ClassDef) or not definition.methods:
            continue
        names = [m.name for m in definition.methods]
        subsets = [set(names) - {name} for name in names] + [set(), set(names[::2])]
        for kept in subsets:
            assert isinstance(node.body, cst.IndentedBlock)
            members = [m for m in node.body.body if not isinstance(m, cst.FunctionDef) or m.name.value in kept]
            written = tree.code_for_node(node.with_changes(body=node.body.with_changes(body=members)))
            assert definition.source(frozenset(kept)) == written.strip("\n"), (definition.name, sorted(kept))
            checked += 1
    assert checked > 0 or module not in {"engine", "waiting", "openai_stream"}


def _compile_in_a_new_process(cache: str, out: Path) -> tuple[bytes, bool, str]:
    """qwen3 compiled by a fresh interpreter with `cache` as its cache directory: the module, whether libcst
    was imported, and what went to stderr."""
    template = str(TEMPLATES / "qwen3.json")
    script = (
        "import sys, warnings, rtcompile\n"
        "warnings.simplefilter('ignore')\n"
        f"code = rtcompile.compile_template({template!r})\n"
        f"open({str(out)!r}, 'w', encoding='utf-8').write(code)\n"
        "print('libcst' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), runtime_index.CACHE_ENV: cache}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    return out.read_bytes(), done.stdout.strip() == "True", done.stderr


def test_a_module_compiled_from_a_cold_a_warm_a_corrupt_or_no_cache_is_the_same(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold, read_with_libcst, _ = _compile_in_a_new_process(str(cache), tmp_path / "cold.py")
    assert read_with_libcst
    files = sorted(cache.glob("lift-*.json"))
    assert {f.name.split("-")[1] for f in files} >= {"engine", "content", "scanning"}

    warm, read_with_libcst, _ = _compile_in_a_new_process(str(cache), tmp_path / "warm.py")
    assert (warm, read_with_libcst) == (cold, False)  # the index came from the cache
    assert sorted(cache.glob("lift-*.json")) == files

    for damaged, text in zip(files, itertools.cycle(["{", "", '{"format": 1}', "[]", "null"]), strict=False):
        damaged.write_text(text, encoding="utf-8")
    repaired, read_with_libcst, _ = _compile_in_a_new_process(str(cache), tmp_path / "repaired.py")
    assert (repaired, read_with_libcst) == (cold, True)
    warm_again, read_with_libcst, _ = _compile_in_a_new_process(str(cache), tmp_path / "again.py")
    assert (warm_again, read_with_libcst) == (cold, False)  # the damaged files were written again

    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")
    for unusable in [str(blocked), str(blocked / "below"), ""]:  # "" turns the cache off
        module, _, stderr = _compile_in_a_new_process(unusable, tmp_path / "no-cache.py")
        assert (module, stderr) == (cold, "")
    assert blocked.read_text(encoding="utf-8") == "not a directory"


def test_an_older_index_of_a_module_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(runtime_index.CACHE_ENV, str(tmp_path))
    reads: list[str] = []

    def read(name: str, source: str) -> runtime_index.ModuleIndex:
        reads.append(source)
        return runtime_reader.read_module(name, source)

    first = runtime_index.module_index("shapes", "X = 1\n", read)
    assert runtime_index.module_index("shapes", "X = 1\n", read) == first and len(reads) == 1
    changed = runtime_index.module_index("shapes", "X = 2\n", read)
    assert len(reads) == 2 and changed.definitions["X"].source(None) == "X = 2"
    assert len(list(tmp_path.glob("lift-shapes-*.json"))) == 1
    assert list(tmp_path.glob("*.tmp")) == []
