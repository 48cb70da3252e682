"""A freshly imported generated module is safe to start using from many threads at once.

Generated modules compile their regexes on first use (so that importing one stays cheap). When a
server starts, many request threads may create their first `ResponseParser` together: every one of
them must get a working parser, and the patterns must be compiled exactly once, not once per thread.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import rtcompile
from tests.support.compiled import import_file
from tests.support.paths import ROOT

THREADS = 32
TEMPLATE = json.loads((ROOT / "templates" / "qwen3_coder.json").read_text(encoding="utf-8"))["response_template"]
TEXT = (
    "<think>plan</think>Calling.<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "</function>\n</tool_call><|im_end|>"
)
_FRESH = itertools.count()


class _SlowCountingRe:
    """Stands in for `re` in the module under test: counts compilations and makes each take a while,
    so that threads racing into first use really do overlap."""

    def __init__(self) -> None:
        self.compiled: list[str] = []
        self._lock = threading.Lock()

    def compile(self, pattern: str, flags: int = 0) -> re.Pattern[str]:
        with self._lock:
            self.compiled.append(pattern)
        time.sleep(0.002)  # lets the other threads run while this one is still compiling
        return re.compile(pattern, flags)

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


def _fresh_module(tmp_path: Path) -> ModuleType:
    path = tmp_path / "concurrent_parser.py"
    path.write_text(rtcompile.compile_template(TEMPLATE), encoding="utf-8")
    return import_file(path, f"rtcompile_test_concurrent_parser_{next(_FRESH)}")


def test_threads_creating_their_first_parsers_together_all_work_and_compile_once(tmp_path: Path) -> None:
    module = _fresh_module(tmp_path)
    expected = rtcompile.parse_response(TEXT, TEMPLATE, prefix="")
    counting = _SlowCountingRe()
    module.re = counting  # type: ignore[attr-defined]  # the module's own `re` global
    barrier = threading.Barrier(THREADS)
    results: list[Any] = [None] * THREADS

    def first_use(index: int) -> None:
        barrier.wait()
        try:
            parser = module.ResponseParser(prefix="")
            events = [event for chunk in TEXT for event in parser.feed(chunk)]
            message, final_events = parser.finalize()
            results[index] = (message, len(events) + len(final_events) > 0)
        except Exception as exc:  # noqa: BLE001 - recorded and asserted on below
            results[index] = exc

    threads = [threading.Thread(target=first_use, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [(expected, True)] * THREADS
    # One compilation per pattern the module holds (some sources are built from the module's data at run time).
    patterns = [value.pattern for name, value in vars(module).items() if name.startswith("_RE_")]
    assert sorted(counting.compiled) == sorted(patterns), "each pattern compiled exactly once"
