"""Compile time against template size: it must grow about linearly.

Two shapes of big template, each at growing sizes: a field with n literal opens and n literal closes
(`["<t0>", "<t1>", ...]`), and a `defaults` list of n strings. Each point is the median wall time of
`rtcompile.compile_template` on the template dict (validating, planning, generating and laying out the
module; the once-per-process parse of the runtime helpers is not timed); the cost of each literal beyond
the first stays flat when growth is linear. (Quadratic steps found this way: the loader compared every
pair of literals, and black, which formatted modules then, took minutes on big literals; generated code
is now laid out by `rtcompile.backends.codegen.layout` as it is written.)

    python -m benchmarks.compile_time [--quick]   # just this stage, printed as a table
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import rtcompile
from benchmarks.config import KB, Config, log


def literal_delimiters(n: int) -> dict[str, Any]:
    return {
        "start_anchor": "<|assistant|>",
        "fields": {
            "content": {},
            "tagged": {"open": [f"<t{i}>" for i in range(n)], "close": [f"</t{i}>" for i in range(n)]},
        },
    }


def defaults_list(n: int) -> dict[str, Any]:
    return {
        "start_anchor": "<|assistant|>",
        "defaults": {"role": "assistant", "notes": [f"default note number {i}" for i in range(n)]},
        "fields": {"content": {}},
    }


SHAPES = {"literal delimiters": literal_delimiters, "defaults list": defaults_list}


def bench_compile_time(cfg: Config) -> dict[str, Any]:
    """Per shape, per size: the template's JSON size and the median compile time."""
    rtcompile.compile_template(literal_delimiters(2))  # imports libcst, parses the runtime helpers
    out: dict[str, Any] = {"reps": cfg.compile_reps, "shapes": {}}
    for shape, make in SHAPES.items():
        rows = []
        for n in cfg.compile_sizes[shape]:
            template = make(n)
            reps = cfg.compile_reps if n <= 1000 else max(1, cfg.compile_reps // 2)
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                rtcompile.compile_template(template)
                times.append(time.perf_counter() - t0)
            seconds = statistics.median(times)
            rows.append({"n": n, "kb": len(json.dumps(template)) / KB, "s": seconds})
            log(f"  compile {shape} n={n}: {seconds:.2f} s")
        out["shapes"][shape] = rows
    return out


def compile_time_section(result: dict[str, Any]) -> list[str]:
    """The RESULTS.md section: a table per shape, and the growth from the smallest to the largest size."""
    lines = ["## Compile time against template size (`rtcompile.compile_template`)\n"]
    lines.append(
        f"Median of {result['reps']} compiles per size (fewer for the largest). With linear growth the cost of "
        "each literal beyond the first stays flat.\n"
    )
    for shape, rows in result["shapes"].items():
        lines.append(f"**{shape}**\n")
        lines.append("| literals | template | compile time | each literal beyond the first |")
        lines.append("|---:|---:|---:|---:|")
        first = rows[0]
        for row in rows:
            # below a thousand literals the difference is within the noise of the fixed cost (~0.5 s)
            each = f"{(row['s'] - first['s']) / (row['n'] - first['n']) * 1e6:.0f} µs" if row["n"] >= 1000 else ""
            lines.append(f"| {row['n']:,} | {row['kb']:.0f} KB | {row['s']:.2f} s | {each} |")
        last = rows[-1]
        lines.append(f"\n{last['n'] // first['n']:,}x the literals cost {last['s'] / first['s']:.1f}x the time.\n")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repetitions")
    result = bench_compile_time(Config(parser.parse_args().quick))
    print("\n".join(compile_time_section(result)))


if __name__ == "__main__":
    main()
