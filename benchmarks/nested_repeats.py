"""Nested unbounded repeats on growing near misses: the compiled module against the interpreter,
transformers, and the plain stdlib translation the compiler used to emit (`re` on the pattern as written).

A template opens its reasoning with such a pattern; the stream is ``<`` followed by n letters the
repeat accepts and then one it does not, parsed one shot. `re` on ``<(a+)+>`` doubles its work with
every letter; the compiled module rewrites it to ``<(a+)>`` (`rtcompile.regex.nested_repeats`) or,
for forms with no exact rewrite, matches with `regex`, whose repeat guards keep the work linear.

    python -m benchmarks.nested_repeats            # print the table (seconds, not minutes)
"""

from __future__ import annotations

import functools
import gc
import importlib.util
import re
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers.utils.chat_parsing import parse_response as tf_parse_response

import rtcompile
from benchmarks.config import Config, log
from rtcompile.errors import TemplateWarning

warnings.simplefilter("ignore", TemplateWarning)


def cell(text: str) -> str:
    """Text for a Markdown table cell (as `benchmarks.report.cell`, which imports this module)."""
    return text.replace("|", "\\|")


# (pattern, letter the repeat accepts): one with an exact rewrite, one left to the regex module.
PATTERNS = [("<(a+)+>", "a"), ("<(?:a+|b)+>", "a")]
SIZES = [10, 14, 18, 20, 22]
NAIVE_LIMIT = 22  # `re` on the pattern as written takes about a second here; longer would take minutes
REPS = 3


def _template(pattern: str) -> dict[str, Any]:
    return {
        "start_anchor": "<A>",
        "fields": {"reasoning_content": {"open_pattern": pattern, "close": "</r>"}, "content": {}},
    }


def _best_ms(call: Callable[[], Any], reps: int) -> float:
    times = []
    for _ in range(reps):
        gc.collect()
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def bench_nested_repeats(cfg: Config, directory: Path) -> list[dict[str, Any]]:
    """ms per one-shot parse (fastest of a few) of ``<`` + n letters + ``x``, per engine and n."""
    rows: list[dict[str, Any]] = []
    reps = 2 if cfg.quick else REPS
    for pattern, letter in PATTERNS:
        template = _template(pattern)
        compiled = rtcompile.compile_module(template)
        path = directory / f"nested_{len(rows)}_parser.py"
        path.write_text(compiled.code, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(f"bench_nested_{len(rows)}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        naive = re.compile(pattern, re.DOTALL)
        for n in SIZES:
            text = "<" + letter * n + "x"
            row: dict[str, Any] = {"pattern": pattern, "n": n, "requires": ",".join(compiled.requires) or "-"}
            engines: dict[str, Callable[[], Any]] = {
                "compiled": functools.partial(module.parse_response, text, prefix=""),
                "interpreter": functools.partial(rtcompile.parse_response, text, template, prefix=""),
                "transformers": functools.partial(tf_parse_response, text, template, prefix=""),
            }
            for engine, call in engines.items():
                row[engine] = _best_ms(call, reps)
            row["naive re"] = _best_ms(functools.partial(naive.search, text), 1) if n <= NAIVE_LIMIT else None
            rows.append(row)
            log(f"  nested repeats {pattern} n={n}: " + ", ".join(f"{k} {v}" for k, v in row.items() if k != "pattern"))
    return rows


def growth(rows: list[dict[str, Any]], engine: str, pattern: str) -> float | None:
    """How many times longer the largest near miss took than the smallest, for one engine."""
    times = [r[engine] for r in rows if r["pattern"] == pattern and r[engine] is not None]
    return None if len(times) < 2 or times[0] <= 0 else times[-1] / times[0]


def section(rows: list[dict[str, Any]]) -> list[str]:
    """The report's table: ms per parse by n, and the growth from the smallest to the largest n."""
    lines = ["## Nested repeats on growing near misses\n"]
    lines.append(
        "ms per one-shot `parse_response` (fastest of a few) of `<` + n letters + `x` for a template whose "
        "reasoning opens with the pattern; `naive re` is `re.search` on the pattern as written (what the "
        "compiler emitted before the rewrite), only up to n = 22. `requires` is what the compiled module "
        "imports beyond the standard library. Growth = time at the largest n / time at the smallest.\n"
    )
    lines.append("| pattern | requires | n | compiled | interpreter | transformers | naive re |")
    lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        naive = "-" if r["naive re"] is None else f"{r['naive re']:.3f}"
        lines.append(
            f"| `{cell(r['pattern'])}` | {r['requires']} | {r['n']} | {r['compiled']:.3f} | {r['interpreter']:.3f} | "
            f"{r['transformers']:.3f} | {naive} |"
        )
    lines.append("")
    lines.append("| pattern | compiled growth | interpreter growth | transformers growth | naive re growth |")
    lines.append("| --- | ---: | ---: | ---: | ---: |")
    for pattern, _ in PATTERNS:
        cells = []
        for engine in ("compiled", "interpreter", "transformers", "naive re"):
            value = growth(rows, engine, pattern)
            cells.append("-" if value is None else f"{value:.1f}x")
        lines.append(f"| `{cell(pattern)}` | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="rtcompile-bench-nested-") as tmp:
        rows = bench_nested_repeats(Config("quick" if "--quick" in sys.argv else "full"), Path(tmp))
    print("\n".join(section(rows)))
    print(f"(median compiled ms over all rows: {statistics.median(r['compiled'] for r in rows):.3f})")


if __name__ == "__main__":
    main()
