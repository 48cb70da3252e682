#!/usr/bin/env python
"""Benchmark: rtcompile's compiled parser modules vs transformers 5.24.0 vs the rtcompile interpreter.

    python benchmarks/run.py                 # full run (about an hour on 2 cores), writes benchmarks/RESULTS.md
    python benchmarks/run.py --targets-only  # only what the targets table needs (compiled, transformers, floor)
    python benchmarks/run.py --quick         # a few minutes, smaller sizes and fewer repetitions, into a temp dir
    python benchmarks/run.py --out DIR       # where RESULTS.md, results.json and per_chunk_cost.png go
    python benchmarks/run.py --models qwen3 gpt_oss   # only these templates (and, of the unseen set, their rewrites)
    python benchmarks/run.py --unseen-only   # only the unseen set (with --quick: a sample of it, smaller sizes)

One run measures every target side by side and reports each as met / not met, with the figure and how
far it is from its goal (RESULTS.md opens with that table; `benchmarks.targets` says what each target is).
What is measured (all in one process, engines interleaved run by run: A, B, C, then A, B, C ...,
so that a noisy machine shifts all engines alike; every number is a median over repetitions):

* streaming: a realistic output per bundled template (templates/*.json), built from the template's own
  recorded cases (tests/data/<model>/cases.json) by inflating reasoning, content and tool-call argument
  text to a target size (1 KB to 4 MB), fed in token-like chunks (random 1-6 characters); cost per chunk
  (all `feed` calls plus `finalize`, divided by the number of chunks), against the "floor" (a loop that
  only appends each chunk to a list and builds one event dict per chunk) and the "bound" (the same through
  a parser's `feed` that handles no delimiter: the least any parser can cost); 4 MB for compiled and the floor;
* growth of the per-chunk cost from 4 KB to 4 MB ("flat");
* 1,000 concurrent parsers fed round-robin against sequentially, and their memory mid-stream;
* retained memory (tracemalloc) after streaming 10 MB of content into an open region;
* one-shot `parse_response` at 4 KB, 40 KB, 400 KB and 4 MB;
* import time of a generated module in a fresh interpreter, bytecode cached (vs `transformers.utils.chat_parsing`);
* adversarial streams fed one character at a time;
* uncached translation of every regex of the bundled templates to stdlib `re` (`rtcompile.regex.translate`);
* where the time goes: the share of chunks taking the slow path per template, cProfile, component costs;
* compile time against template size: 1 to 10,000 literal delimiters, growing `defaults` lists;
* nested unbounded repeats (`<(a+)+>`) on growing near misses (`benchmarks.nested_repeats`);
* the unseen set, templates nobody tuned rtcompile for (120 random realistic ones and the rewrites of every
  bundled template), against issue 19's targets: streaming 4 KB against the bound and transformers, the
  per-chunk cost at 1 MB and 4 MB against 4 KB, one-shot at 4 KB, 400 KB and 4 MB (`benchmarks.unseen`).

The rtcompile measured is the one of this checkout (the directory above benchmarks/), not whichever
one the environment has installed. The package `benchmarks` says where each part lives.

This is a measurement, never a test: nothing here asserts a timing.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, Python puts benchmarks/ itself first on the path, where its modules would shadow top-level
# ones of the same name: put the checkout there instead, so that `benchmarks` is a package and `rtcompile`
# is this checkout's.
_CHECKOUT = str(Path(__file__).resolve().parent.parent)
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [
    _CHECKOUT,
    *(p for p in sys.path if p not in (_CHECKOUT, _HERE) and Path(p or ".").resolve() != Path(_HERE)),
]

import argparse  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any, TypeVar  # noqa: E402

import transformers  # noqa: E402

import rtcompile  # noqa: E402
from benchmarks import (  # noqa: E402
    compile_time,
    delimiters,
    import_time,
    many_parsers,
    measurement,
    nested_repeats,
    profiling,
    report,
    unseen,
)
from benchmarks.config import TEMPLATES, Config, log  # noqa: E402
from benchmarks.engines import Engines, compile_modules  # noqa: E402
from benchmarks.workloads import Workload, check_workloads  # noqa: E402

T = TypeVar("T")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--quick",
        action="store_true",
        help="a run of a few minutes (smaller sizes, fewer repetitions); written to a temporary directory "
        "unless --out is given, so it never replaces the committed results",
    )
    mode.add_argument(
        "--targets-only",
        action="store_true",
        help="only the stages the targets need, at the full run's sizes (compiled, transformers and the floor; no "
        "interpreter, adversarial streams, regex translation or profile); written to a temporary directory "
        "unless --out is given",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for RESULTS.md, results.json and the plot (default: benchmarks/ for a full run, else a new "
        "temporary directory)",
    )
    parser.add_argument(
        "--models",
        nargs="*",
        help="only these templates (default: all bundled templates); of the unseen set, only these names "
        "(random-007, qwen3~regex) and the rewrites of these bundled templates",
    )
    parser.add_argument(
        "--unseen-only",
        action="store_true",
        help="only the unseen set (templates nobody tuned rtcompile for), at the sizes of the mode; written to a "
        "temporary directory unless --out is given",
    )
    args = parser.parse_args()
    cfg = Config("quick" if args.quick else "targets" if args.targets_only else "full")
    out: Path = args.out or (
        Path(tempfile.mkdtemp(prefix=f"rtcompile-bench-{cfg.mode}-"))
        if cfg.mode != "full" or args.unseen_only
        else Path(__file__).resolve().parent
    )
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "transformers": transformers.__version__,
        "rtcompile": rtcompile.__version__,
        "cpu": report.cpu_model(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "load_start": os.getloadavg(),
        "rtcompile_sources": report.sources_digest(),
        "flags": " --unseen-only" if args.unseen_only else "",
    }
    bundled = sorted(p.stem for p in TEMPLATES.glob("*.json"))
    models: list[str] = [] if args.unseen_only else [m for m in bundled if m in args.models] if args.models else bundled
    stages: dict[str, float] = {}

    def stage(name: str, run: Callable[[], T]) -> T:
        log(f"{name} ...")
        t0 = time.perf_counter()
        result = run()
        stages[name] = time.perf_counter() - t0
        log(f"{name}: {stages[name]:.0f} s")
        return result

    with tempfile.TemporaryDirectory(prefix="rtcompile-bench-") as tmp:
        directory = Path(tmp)
        if models:
            workloads, templates, results = bench_bundled(cfg, models, directory, stage)
        else:
            workloads, templates = [], report.Templates(kinds={}, literal=[], concurrent=[], concurrent_rule="")
            results = report.Results(streaming={}, oneshot={}, memory=[], concurrent=[], imports={}, slow_paths={})
        unseen_set = unseen.unseen_workloads(cfg, args.models)
        if unseen_set:
            checkpoint = out / "unseen_rows.json"
            results.unseen = stage(
                "unseen templates", lambda: unseen.bench_unseen(cfg, unseen_set, directory, checkpoint)
            )
    env["elapsed"] = time.time() - started
    env["stages"] = stages
    env["load_end"] = os.getloadavg()
    report.write(out, cfg, env, workloads, templates, results)


def bench_bundled(
    cfg: Config, models: list[str], directory: Path, stage: Callable[[str, Callable[[], Any]], Any]
) -> tuple[list[Workload], report.Templates, report.Results]:
    """Every stage on the bundled templates `models`; compiled modules go into `directory`."""
    kinds = {m: delimiters.delimiter_kind(delimiters.response_template(m)) for m in models}
    literal = [m for m in models if delimiters.is_literal_delimited(delimiters.response_template(m))]
    log(f"compiling {len(models)} templates ...")
    engines = Engines(models, directory)
    workloads = [Workload(m) for m in models]
    by_model = {w.model: w for w in workloads}
    for needed in ("qwen3", "gpt_oss"):  # the memory, adversarial and component runs use these two
        if needed not in by_model:
            by_model[needed] = Workload(needed)
            engines.modules.update(compile_modules([needed], directory))
            engines.loaded[needed] = rtcompile.load_template(TEMPLATES / f"{needed}.json")
    # Everything built so far (modules, templates, transformers) lives to the end: move it out of the
    # collector's sight, so the gc.collect() before each timed run is cheap (~60 ms -> ~3 us).
    gc.collect()
    gc.freeze()
    sizes = sorted({*cfg.sizes, *cfg.oneshot_sizes})
    stage("checking workloads", lambda: check_workloads(engines, workloads, sizes))
    streaming = stage("streaming", lambda: measurement.bench_streaming(cfg, engines, workloads))
    # The concurrent stage runs on one template per delimiter kind: the slowest of its kind here (and qwen3).
    cost = {m: r["compiled"] for m, r in streaming["per_chunk"][cfg.headline].items()}
    chosen = delimiters.one_per_kind(kinds, cost, always=("qwen3",))
    rule = "one per delimiter kind, the one with the highest compiled us/chunk at 4 KB in this run, and qwen3"
    if cfg.concurrent_max_models is not None and len(chosen) > cfg.concurrent_max_models:
        chosen = sorted(chosen, key=lambda m: -cost[m])[: cfg.concurrent_max_models]
        rule += f"; cut to the {cfg.concurrent_max_models} slowest of those"
    concurrent_rows = stage(
        "concurrent", lambda: many_parsers.bench_concurrent(cfg, engines, [by_model[m] for m in chosen])
    )
    oneshot = stage("one-shot", lambda: measurement.bench_oneshot(cfg, engines, workloads))
    memory = stage("memory", lambda: measurement.bench_memory(cfg, engines, by_model))
    imports = stage("imports", lambda: import_time.bench_imports(cfg, models, directory))
    slow_paths = stage("slow-path shares", lambda: profiling.slow_path_shares(cfg, engines, workloads))
    results = report.Results(
        streaming=streaming,
        oneshot=oneshot,
        memory=memory,
        concurrent=concurrent_rows,
        imports=imports,
        slow_paths=slow_paths,
    )
    if cfg.mode != "targets":
        results.adversarial = stage("adversarial", lambda: measurement.bench_adversarial(cfg, engines, by_model))
        results.translation = stage("regex translation", lambda: measurement.bench_regex_translation(cfg, models))
        results.compile_time = stage("compile time", lambda: compile_time.bench_compile_time(cfg))
        results.nested_repeats = stage("nested repeats", lambda: nested_repeats.bench_nested_repeats(cfg, directory))
        results.profile = stage("profiling", lambda: profiling.profile_engines(cfg, engines, workloads))
        results.profile["components"] = stage(
            "components", lambda: profiling.component_costs(engines, by_model["qwen3"])
        )
        results.profile["oneshot"] = stage(
            "one-shot profile",
            lambda: profiling.profile_oneshot_worst(cfg, engines, workloads, oneshot["ms"]),
        )
    templates = report.Templates(kinds=kinds, literal=literal, concurrent=chosen, concurrent_rule=rule)
    return workloads, templates, results


if __name__ == "__main__":
    main()
