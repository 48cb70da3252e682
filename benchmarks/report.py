"""The report of a run: benchmarks/RESULTS.md (the targets table first, then every table), results.json
(the raw figures), per_chunk_cost.png (`benchmarks.plot`) and a console summary."""

# ruff: noqa: E501 - report tables are built from long f-strings

from __future__ import annotations

import hashlib
import json
import platform
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import nested_repeats
from benchmarks.compile_time import compile_time_section
from benchmarks.config import MB, ROOT, Config, size_label
from benchmarks.plot import plot
from benchmarks.targets import ISSUE, OTHER, Target, fmt, judge
from benchmarks.unseen_report import ISSUE19, unseen_section, unseen_targets
from benchmarks.workloads import Workload


@dataclass
class Results:
    """What the stages of one run measured (each as its `bench_*` / `profile_*` function returned it; empty
    when the run left the stage out)."""

    streaming: dict[str, Any]
    oneshot: dict[str, Any]
    memory: list[dict[str, Any]]
    concurrent: list[dict[str, Any]]
    imports: dict[str, Any]
    slow_paths: dict[str, Any]
    adversarial: list[dict[str, Any]] = field(default_factory=list)
    translation: dict[str, Any] = field(default_factory=dict)
    compile_time: dict[str, Any] = field(default_factory=dict)
    nested_repeats: list[dict[str, Any]] = field(default_factory=list)
    profile: dict[str, Any] = field(default_factory=dict)
    unseen: dict[str, Any] = field(default_factory=dict)  # `benchmarks.unseen.bench_unseen`


@dataclass
class Templates:
    """What the report says about the templates: their delimiter kinds and the subsets some stages ran on."""

    kinds: dict[str, str]  # model -> delimiter kind (`benchmarks.delimiters`)
    literal: list[str]  # the literal-delimited ones
    concurrent: list[str]  # the templates of the concurrent-parsers stage
    concurrent_rule: str  # how they were chosen


# =============================================================================================== environment


def sources_digest() -> str:
    """sha256 over rtcompile/**/*.py (the package is being edited while benchmarks run: this says which state ran)."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "rtcompile").rglob("*")):
        if path.is_file() and path.suffix in (".py", ".jinja"):
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


# =============================================================================================== formatting


def cell(text: str) -> str:
    """Text for a Markdown table cell (a `|` inside, as in `<|channel|>`, would split the cell)."""
    return text.replace("|", "\\|")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio(a: dict[str, float], e1: str, e2: str) -> float:
    """a[e1] / a[e2], NaN where one of them was not measured."""
    return a[e1] / a[e2] if e1 in a and e2 in a else float("nan")


def times(x: float) -> str:
    """A ratio cell: `2.50x`, or `-` where it was not measured."""
    return f"{fmt(x)}x" if x == x else "-"


def get(a: dict[str, float], e: str, digits: int = 2) -> str:
    return fmt(a[e], digits) if e in a else "-"


# =============================================================================================== RESULTS.md


def build_report(
    cfg: Config, env: dict[str, Any], workloads: list[Workload], templates: Templates, results: Results
) -> tuple[str, list[Target]]:
    """The text of RESULTS.md, and the targets it opens with."""
    models = [w.model for w in workloads]
    targets = judge(cfg, models, templates.literal, results) if models else []
    if results.unseen:
        targets += unseen_targets(results.unseen)
    L: list[str] = []
    L += _header(cfg, env)
    L += _targets_section(cfg, targets, models, templates, results)
    if results.streaming:
        L += _streaming_section(cfg, workloads, templates, results.streaming)
    if results.concurrent:
        L += _concurrent_section(cfg, templates, results.concurrent)
    if results.memory:
        L += _memory_section(results.memory)
    if results.oneshot:
        L += _oneshot_section(cfg, models, results.oneshot)
    if results.imports:
        L += _imports_section(cfg, results.imports)
    if results.adversarial:
        L += _adversarial_section(results.adversarial)
    if results.translation:
        L += _translation_section(results.translation)
    if results.compile_time:
        L += compile_time_section(results.compile_time)
    if results.nested_repeats:
        L += nested_repeats.section(results.nested_repeats)
    if results.unseen:
        L += unseen_section(results.unseen)
    L += _profile_section(cfg, templates, results)
    if workloads:
        L += _workloads_section(workloads, templates)
    return "\n".join(L), targets


def _header(cfg: Config, env: dict[str, Any]) -> list[str]:
    flags = {"full": "", "quick": " --quick", "targets": " --targets-only"}[cfg.mode] + env.get("flags", "")
    return [
        "# rtcompile benchmark results\n",
        f"- Python {env['python']} ({env['implementation']}), transformers {env['transformers']}, rtcompile "
        f"{env['rtcompile']} (sources sha256 {env['rtcompile_sources']}…, over rtcompile/**/*.py and *.jinja)",
        f"- CPU: {env['cpu']} ({env['cores']} cores visible), {env['platform']}",
        f"- Mode: {cfg.mode}; run took {env['elapsed']:.0f} s; started {env['started']}; load average "
        f"{env['load_start'][0]:.2f} at the start, {env['load_end'][0]:.2f} at the end (other work on the machine "
        "shifts all engines alike: they are interleaved run by run)",
        f"- Command: `python benchmarks/run.py{flags}`; stages: "
        + ", ".join(f"{k} {v:.0f} s" for k, v in env["stages"].items()),
        "",
    ]


def _targets_section(
    cfg: Config, targets: list[Target], models: list[str], templates: Templates, results: Results
) -> list[str]:
    L = ["## Targets\n"]
    if cfg.quick:
        L.append(
            "**Quick run**: smaller sizes and fewer repetitions than the targets are defined for (the big size is "
            f"{size_label(cfg.flat_big)}, not 4 MB; memory after {size_label(cfg.memory_size)}, not 10 MB; "
            f"{cfg.concurrent_parsers} concurrent parsers, not 1,000): for checking the benchmark, not for judging.\n"
        )
    L.append(
        "All figures from this one run, compiled side by side with transformers 5.24.0 (engines interleaved "
        "run by run, medians over repetitions). `missed by` says how far a figure is from its goal.\n"
    )
    headings = {
        ISSUE: "Targets of the issue “Performance and shape of generated code”",
        ISSUE19: "Targets of issue 19 “Speed on every template”, on the unseen set",
        OTHER: "Other checks",
    }
    for group, heading in headings.items():
        chosen = [t for t in targets if t.group == group]
        if not chosen:
            continue
        L.append(f"### {heading}\n")
        L.append("| target | goal | met? | measured | missed by |")
        L.append("| --- | --- | --- | --- | --- |")
        for t in chosen:
            L.append(
                f"| {cell(t.name)} | {cell(t.goal)} | {'met' if t.met else '**NOT MET**'} | {cell(t.measured)} | {cell(t.missed_by)} |"
            )
        L.append("")
    if not models:
        return L
    literal = ", ".join(templates.literal) or "none"
    L.append(
        f"- **Literal-delimited templates** ({len(templates.literal)} of {len(models)}), decided from the template "
        "JSON: no key ending in `_pattern` anywhere under `fields` (no `open_pattern`, `close_pattern`, or "
        "xml-inline `tag_pattern`); the start anchor does not count, since it only cuts the prompt. "
        f"They are: {literal}."
    )
    per_chunk = results.streaming.get("per_chunk", {}) if results.streaming else {}
    if cfg.flat_big in per_chunk:
        streamed = sorted(per_chunk[cfg.flat_big])
        L.append(
            f"- **{size_label(cfg.flat_big)} streaming** ran on "
            + (
                "every template"
                if len(streamed) == len(models)
                else f"{len(streamed)} templates: {', '.join(streamed)}"
            )
            + ", compiled and the floor only (transformers' per-chunk cost grows with its untrimmed buffer: one "
            "400 KB stream already takes it seconds)."
        )
    if results.oneshot:
        L.append(
            "- **One-shot** ran every engine on every template at "
            + ", ".join(size_label(s) for s in cfg.oneshot_sizes)
            + "."
        )
    if results.concurrent:
        L.append(
            f"- **Concurrent parsers** ran on {len(templates.concurrent)} templates ({templates.concurrent_rule}): {', '.join(templates.concurrent)}."
        )
    L.append("")
    return L


def _streaming_section(cfg: Config, workloads: list[Workload], templates: Templates, s: dict[str, Any]) -> list[str]:
    per_chunk = s["per_chunk"]
    models = [w.model for w in workloads]
    L = ["## Streaming, token-like chunks (1-6 characters)\n"]
    L.append(
        "us per chunk: all `feed` calls + `finalize`, divided by the number of chunks (parser construction not "
        f"timed). Median of {cfg.reps} interleaved repetitions"
        + "".join(f" ({r} for transformers at {size_label(sz)})" for sz, r in cfg.tf_reps.items() if sz in cfg.sizes)
        + "; each repetition times every engine on every size of a template, one after the other. A timed sample "
        "of a small output streams it through `batch` fresh parsers back to back ("
        + ", ".join(
            f"about {n} chunks at {size_label(sz)}"
            for sz, n in cfg.chunks_per_sample.items()
            if sz in cfg.sizes and n > 1
        )
        + "); larger outputs are one parser per sample. `floor` = append each chunk to a list + build one event "
        "dict per chunk. `bound` = the same through a parser's `feed`, the least any parser can do and still give "
        "the contract's event (one call, one test for `<`, the text kept, one event dict in a list; no delimiter "
        "handled: `benchmarks.measurement.BoundParser`). Ratios are transformers/compiled, transformers/bound, "
        "interpreter/compiled and compiled/floor; `L` marks the "
        "literal-delimited templates. Engines streamed per size: "
        + "; ".join(f"{size_label(sz)}: {', '.join(cfg.engines_for(sz))}" for sz in cfg.sizes)
        + ". Everything alive before the measurements (modules, templates, transformers) is moved out of the "
        "collector's sight with `gc.freeze()`; the collector stays enabled during the runs.\n"
    )
    for size in cfg.sizes:
        rows = per_chunk[size]
        L.append(f"### {size_label(size)} of output\n")
        L.append(
            "| template | output shape | chunks x batch | compiled | interpreter | transformers | floor | bound | tf / compiled | tf / bound | interp / compiled | compiled / floor |"
        )
        L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for w in workloads:
            if w.model not in rows:
                continue
            r = rows[w.model]
            mark = " (L)" if w.model in templates.literal else ""
            L.append(
                f"| {w.model}{mark} | {cell(w.shape)} | {r['chunks']} x {r['batch']} | {get(r, 'compiled')} | "
                f"{get(r, 'interpreter')} | {get(r, 'transformers')} | {get(r, 'floor', 3)} | {get(r, 'bound', 3)} | "
                f"{times(ratio(r, 'transformers', 'compiled'))} | {times(ratio(r, 'transformers', 'bound'))} | "
                f"{times(ratio(r, 'interpreter', 'compiled'))} | {times(ratio(r, 'compiled', 'floor'))} |"
            )
        present = [m for m in models if m in rows]
        med = {
            e: median([rows[m][e] for m in present if e in rows[m]])
            for e in ("compiled", "interpreter", "transformers", "floor", "bound")
        }

        def ratio_median(e1: str, e2: str, rows: dict[str, Any] = rows, present: list[str] = present) -> float:
            return median([v for m in present if (v := ratio(rows[m], e1, e2)) == v])

        L.append(
            f"| **median** | | | **{fmt(med['compiled'])}** | **{fmt(med['interpreter'])}** | **{fmt(med['transformers'])}** | "
            f"**{fmt(med['floor'], 3)}** | **{fmt(med['bound'], 3)}** | **{times(ratio_median('transformers', 'compiled'))}** | "
            f"**{times(ratio_median('transformers', 'bound'))}** | "
            f"**{times(ratio_median('interpreter', 'compiled'))}** | **{times(ratio_median('compiled', 'floor'))}** |"
        )
        L.append("")
    if s["mismatches"]:
        L.append("**Streamed-message mismatches**: " + "; ".join(s["mismatches"]) + "\n")
    else:
        L.append(
            "Every streamed message equalled transformers' (its streamed message where it streams that size, else "
            "its one-shot `parse_response`), checked once per template, size and engine.\n"
        )
    small = cfg.flat_small
    bigger = [sz for sz in cfg.sizes if sz > small]
    if bigger:
        L.append(f"### Growth of the per-chunk cost from {size_label(small)}\n")
        columns = [
            (sz, e)
            for sz in bigger
            for e in ("compiled", "interpreter", "transformers", "floor")
            if any(e in per_chunk[sz].get(m, {}) for m in models)
        ]
        L.append("| template | " + " | ".join(f"{e} {size_label(sz)}" for sz, e in columns) + " |")
        L.append("| --- | " + " | ".join("---:" for _ in columns) + " |")
        growth: dict[tuple[int, str], list[float]] = {c: [] for c in columns}
        for m in models:
            cells = []
            for sz, e in columns:
                big_row = per_chunk[sz].get(m, {})
                if e in big_row and e in per_chunk[small][m]:
                    g = big_row[e] / per_chunk[small][m][e]
                    growth[(sz, e)].append(g)
                    cells.append(f"{fmt(g)}x")
                else:
                    cells.append("-")
            L.append(f"| {m} | " + " | ".join(cells) + " |")
        L.append("| **median** | " + " | ".join(f"**{fmt(median(growth[c]))}x**" for c in columns) + " |")
        L.append("")
    L.append("![per-chunk cost](per_chunk_cost.png)\n")
    return L


def _concurrent_section(cfg: Config, templates: Templates, rows: list[dict[str, Any]]) -> list[str]:
    n = rows[0]["parsers"]
    L = [f"## {n} concurrent parsers (compiled), {size_label(cfg.headline)} each\n"]
    L.append(
        f"Templates: {templates.concurrent_rule}. Each parser streams the template's {size_label(cfg.headline)} output "
        "in its own random chunking (1-6 characters).\n\n"
        "- **Throughput**: `round-robin` = chunk i of every parser before chunk i+1 of any; `sequential` = each "
        "parser's whole stream in turn. Both orders are laid out beforehand as parallel lists (bound `feed`, chunk) "
        "and run by the same loop, so they differ only in order; all parsers are then finalized (timed). us per "
        f"chunk, median of {cfg.concurrent_reps} repetitions, the two orders alternating which goes first, fresh "
        "parsers each time. Every message equalled transformers' one-shot message"
        + ("" if not any(r["mismatch"] for r in rows) else " except where noted")
        + ".\n"
        "- **Memory**: a separate round-robin run under tracemalloc, stopped mid-stream (after half the median "
        "number of chunks per parser). Chunks are sliced from the text inside the traced loop (text from a "
        "tokenizer is new: a parser that keeps a chunk pays for it, one it drops costs nothing); events are "
        "dropped as `feed` returns them. `retained` = bytes still allocated after `gc.collect()` minus before "
        "the parsers were built, per parser (the parser objects, buffers, region bodies, closed values, and 8 "
        "bytes for the list holding the parser). `text` = characters fed so far; `text as str` = `sys.getsizeof` "
        "of that text as one Python string (1 byte per character when ASCII, 2 once it holds a character like "
        "the filler's 東); **`beyond text` = retained − text as str** (the target); `− 1 B/char` = retained minus one "
        "byte per character instead. `new parser` = bytes per parser right after construction.\n"
    )
    L.append(
        "| template | kind | chunks | sequential us/chunk | round-robin us/chunk | round-robin / sequential | new parser | text (chars) | text as str | retained | beyond text | − 1 B/char | peak |"
    )
    L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        wrong = f" (messages differ: {', '.join(r['mismatch'])})" if r["mismatch"] else ""
        L.append(
            f"| {r['model']}{wrong} | {templates.kinds.get(r['model'], '')} | {r['chunks']} | {fmt(r['sequential'])} | {fmt(r['round_robin'])} | "
            f"{fmt(r['ratio'])}x | {fmt(r['built'])} | {fmt(r['text_chars'])} | {fmt(r['text_str'])} | {fmt(r['retained'])} | "
            f"**{fmt(r['overhead'])}** | {fmt(r['overhead_chars'])} | {fmt(r['peak'])} |"
        )
    L.append("")
    return L


def _memory_section(mem: list[dict[str, Any]]) -> list[str]:
    L = ["## Retained memory while streaming content into an open region\n"]
    L.append(
        "tracemalloc: bytes still allocated after feeding (before `finalize`), minus what was allocated before "
        "the parser was built; events are dropped as they are returned. `body as one str` = `sys.getsizeof` of "
        "the fed text joined (the filler has a few non-ASCII characters, so it is a 2-byte-per-character string). "
        "tracemalloc slows token-sized feeds about 8x, so the 10 MB token-chunk run is done on qwen3 only; "
        "transformers is only fed 4 KB chunks (its per-chunk cost grows with its untrimmed buffer).\n"
    )
    L.append(
        "| template | region | chunking | engine | chars fed | chunks | body as one str | retained | retained / body | bytes / chunk | peak | buffer kept (chars) | feed time |"
    )
    L.append("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in mem:
        L.append(
            f"| {r['model']} | {r['region']} | {r['chunking']} | {r['engine']} | {fmt(r['fed'] / MB)} M | {r['chunks']} | "
            f"{fmt(r['body'] / MB)} MB | {fmt(r['retained'] / MB)} MB | {fmt(r['retained'] / r['body'])}x | "
            f"{fmt(r['retained'] / r['chunks'])} | {fmt(r['peak'] / MB)} MB | {r['buffer_chars']} | {fmt(r['seconds'])} s |"
        )
    L.append("")
    return L


def _oneshot_section(cfg: Config, models: list[str], oneshot: dict[str, Any]) -> list[str]:
    one = oneshot["ms"]
    L = ["## One-shot `parse_response`\n"]
    L.append(
        "ms per call (median of "
        + ", ".join(f"{cfg.oneshot_reps[s]} at {size_label(s)}" for s in cfg.oneshot_sizes)
        + "; the engines take turns call by call), same outputs as the streaming runs. The interpreter is "
        "given the already-loaded `Template`; transformers is given the template dict, as its API takes it.\n"
    )
    if oneshot["mismatches"]:
        L.append("**Messages differ between engines**: " + "; ".join(oneshot["mismatches"]) + "\n")
    for size in cfg.oneshot_sizes:
        L.append(f"### {size_label(size)}\n")
        L.append("| template | compiled | interpreter | transformers | tf / compiled | interp / compiled |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
        for m in models:
            r = one[size][m]
            L.append(
                f"| {m} | {get(r, 'compiled', 3)} | {get(r, 'interpreter', 3)} | {get(r, 'transformers', 3)} | "
                f"{times(ratio(r, 'transformers', 'compiled'))} | {times(ratio(r, 'interpreter', 'compiled'))} |"
            )
        rt = median([ratio(one[size][m], "transformers", "compiled") for m in models])
        ri = median([v for m in models if (v := ratio(one[size][m], "interpreter", "compiled")) == v])
        L.append(f"| **median** | | | | **{times(rt)}** | **{times(ri)}** |")
        L.append("")
    return L


def _imports_section(cfg: Config, imp: dict[str, Any]) -> list[str]:
    L = ["## Import time (fresh interpreter per measurement)\n"]
    L.append(
        f"Median of {cfg.import_runs} subprocesses each. `wall` = `time.perf_counter()` around the `import` "
        "statement, run without `-X importtime` (includes the standard-library modules the generated module "
        "imports that Python had not loaded at startup); `self` = `-X importtime` self time of the module's own "
        "body; `re.compile` = time spent in `re.compile` calls during the import (separate run, `re` patched). "
        "Bytecode: the subprocesses run with PYTHONDONTWRITEBYTECODE unset and PYTHONPYCACHEPREFIX set to a "
        "temporary directory (the environment may set PYTHONDONTWRITEBYTECODE, under which nothing is ever "
        "cached); one untimed import of each module writes its bytecode (and its imports') there, and the timed "
        "imports run with `-B` (read, never write). `warm` = the module's bytecode cached (the deployed case); "
        "`cold` = a copy of the module whose bytecode is never cached (its stdlib imports' still is). "
        "`cached?` = whether the warm / cold copy's `.pyc` was found under the prefix.\n"
    )
    L.append("| module | warm wall | warm self | of which re.compile | cold wall | cold self | cached? (warm / cold) |")
    L.append("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for m, v in imp["modules"].items():
        L.append(
            f"| rtc_{m} | {fmt(v['warm_wall'] * 1e3)} ms | {fmt(v['warm_self'] * 1e3)} ms | "
            f"{fmt(v['regex'] * 1e3)} ms ({v['regex_count']} patterns) | {fmt(v['cold_wall'] * 1e3)} ms | "
            f"{fmt(v['cold_self'] * 1e3)} ms | {'yes' if v['warm_cached'] else 'NO'} / {'yes' if v['cold_cached'] else 'no'} |"
        )
    L.append(f"| `rtcompile` (interpreter) | {fmt(imp['interpreter'] * 1e3)} ms | | | | | |")
    L.append(f"| `transformers.utils.chat_parsing` | {fmt(imp['transformers'] * 1e3)} ms | | | | | |")
    L.append("")
    L.append(
        "The modules a generated module imports at its top level (read from its import lines), together and each "
        "alone in a fresh interpreter (they overlap, so the parts do not add up to the first row; 0 = already "
        "loaded at interpreter startup):\n"
    )
    L.append("| import | wall |")
    L.append("| --- | ---: |")
    for dep, seconds in imp["stdlib"].items():
        L.append(f"| `import {dep}` | {fmt(seconds * 1e3)} ms |")
    L.append("")
    return L


def _adversarial_section(adv: list[dict[str, Any]]) -> list[str]:
    L = ["## Adversarial streams, one character per `feed`\n"]
    L.append(
        "us per character, segment by segment (the engines take turns segment by segment, so they share the same "
        "time windows). `first` = the first segment, i.e. the cost of the short stream; `whole` = the whole stream. "
        "transformers streams a tenth of the size: its buffer is never trimmed and `self._buffer += text` copies it "
        "on every feed, so its cost per character grows with the position in the stream.\n"
    )
    L.append(
        "| stream | template | engine | chars | first | whole | whole / first | fastest late / fastest early | per-segment us/char |"
    )
    L.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in adv:
        L.append(
            f"| {cell(r['stream'])} | {r['model']} | {r['engine']} | {size_label(r['total'])} in 10 x {size_label(r['segment'])} | "
            f"{fmt(r['first'])} | {fmt(r['whole'])} | {fmt(r['whole'] / r['first'])}x | {fmt(r['late_vs_early'])}x | "
            + " ".join(fmt(x, 1) for x in r["segments"])
            + " |"
        )
    L.append("")
    return L


def _translation_section(translation: dict[str, Any]) -> list[str]:
    """The regex translation table: every pattern, slowest first, and the totals per kind."""
    rows = sorted(translation["patterns"], key=lambda p: -p["ms"])
    L = ["## Regex translation (`rtcompile.regex.translate.translate`, uncached)\n"]
    L.append(
        f"ms per call, median of {translation['reps']} (the patterns take turns within each repetition); every "
        "memo cache of the module is cleared before each call, so each call does a first translation's work. "
        "The patterns are every regex of the bundled templates (start anchors, open/close delimiters, "
        "xml-inline `tag_pattern`s), each once, under the first template that has it. The table of cased code "
        "points, built once per process on the first case-insensitive character set, is timed apart: "
        f"{fmt(translation['cased_table_ms'])} ms.\n"
    )
    L.append("| kind | patterns | total ms | slowest ms |")
    L.append("| --- | ---: | ---: | ---: |")
    for kind in sorted({p["kind"] for p in rows}):
        of_kind = [p["ms"] for p in rows if p["kind"] == kind]
        L.append(f"| {kind} | {len(of_kind)} | {fmt(sum(of_kind))} | {fmt(max(of_kind))} |")
    L.append(f"| **all** | **{len(rows)}** | **{fmt(sum(p['ms'] for p in rows))}** | **{fmt(rows[0]['ms'])}** |")
    L.append("")
    L.append("| template | kind | pattern | outcome | ms | fastest ms |")
    L.append("| --- | --- | --- | --- | ---: | ---: |")
    for p in rows:
        L.append(
            f"| {p['model']} | {p['kind']} | `{cell(p['pattern'])}` | {p['outcome']} | {fmt(p['ms'], 3)} | "
            f"{fmt(p['ms_min'], 3)} |"
        )
    L.append("")
    return L


def _profile_section(cfg: Config, templates: Templates, results: Results) -> list[str]:
    L = ["## Where the time goes\n"]
    slow = results.slow_paths
    per_chunk = results.streaming["per_chunk"].get(cfg.headline, {}) if results.streaming else {}
    profile = results.profile
    per_template = profile.get("per_template", {})
    if slow:
        L.append(f"### Fast path and slow path per template ({size_label(cfg.headline)}, the streaming run's chunks)\n")
        L.append(
            "A generated module's `ResponseParser.feed` is the fast path, inline: one `in` test per character that "
            "can start a delimiter of the current state, then the region chunk. Any other chunk (one holding such a "
            "character, one arriving while text is held back, before a region opened, ...) falls back to the "
            "engine's `StreamingParser.feed`, the slow path (a module that waits for a string looks at new text for "
            "it without either). `slow` = share of `feed` calls that took the slow path, counted without a profiler "
            "(the engine's `feed` wrapped in a counter), overall and "
            "per parser state (the state when the chunk arrived: `outside` = state 0, in the implicit field or in "
            "none). `us/chunk` = the streaming median. The cProfile columns are from one "
            f"{size_label(cfg.profile_size)} stream under cProfile (shares of its profiled time; cProfile inflates "
            "small calls): `fast self` = self time of `ResponseParser.feed`, `slow cum` = cumulative time under "
            "`StreamingParser.feed`, `finalize` = under `finalize` (the last region's handler), then the three functions "
            "with the most self time besides `feed`.\n"
        )
        L.append(
            "| template | kind | specialised feed | us/chunk | slow | slow per state | fast self | slow cum | finalize | top self time |"
        )
        L.append("| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | --- |")
        for m, row in sorted(slow.items(), key=lambda mr: -mr[1]["share"]):
            states = "; ".join(
                f"{name} {fmt(100 * v['slow'] / v['chunks'], 1)}% of {v['chunks']}"
                for name, v in row["by_state"].items()
            )
            p = per_template.get(m)
            if p:
                total = p["total"] or float("nan")
                top = "; ".join(f"`{cell(r['function'])}` {fmt(100 * r['tottime'] / total, 1)}%" for r in p["rows"][:3])
                prof = (
                    f"{fmt(100 * p['fast_self'] / total, 1)}% | {fmt(100 * p['scanning_cum'] / total, 1)}% | "
                    f"{fmt(100 * p['finalize_cum'] / total, 1)}% | {top}"
                )
            else:
                prof = "- | - | - | -"
            us = get(per_chunk[m], "compiled") if m in per_chunk else "-"
            L.append(
                f"| {m} | {templates.kinds.get(m, '')} | {'yes' if row['specialised_feed'] else 'no'} | {us} | "
                f"{fmt(100 * row['share'], 1)}% | {cell(states)} | {prof} |"
            )
        L.append("")
    components = profile.get("components")
    if components:
        L.append("### Component costs on qwen3 (timeit, no profiler)\n")
        L.append(
            "Each piece of one `feed`, timed alone (best of 5 x 20000 calls; us per call), the parser inside the "
            "region its first text opens, nothing held back.\n"
        )
        L.append("| engine | piece | us/call |")
        L.append("| --- | --- | ---: |")
        for engine, piece, us in components:
            L.append(f"| {engine} | {cell(piece)} | {fmt(us, 3) if us is not None else 'missing'} |")
        L.append("")
    for engine, p in profile.get("together", {}).items():
        L.append(
            f"### cProfile, {engine}, all templates together ({p['chunks']} chunks, {fmt(p['total'])} s profiled)\n"
        )
        L.append("| function | calls/chunk | tottime % | cumtime % |")
        L.append("| --- | ---: | ---: | ---: |")
        for r in p["rows"][:12]:
            L.append(
                f"| `{cell(r['function'])}` | {fmt(r['per_chunk_calls'])} | {fmt(100 * r['tottime'] / p['total'], 1)} | "
                f"{fmt(100 * r['cumtime'] / p['total'], 1)} |"
            )
        L.append("")
    op = profile.get("oneshot")
    if op:
        L.append(
            f"### One-shot `parse_response` on {op['model']} at {size_label(op['size'])} (where compiled is slowest "
            "relative to transformers), cProfile\n"
        )
        L.append("| engine | function | calls | tottime % |")
        L.append("| --- | --- | ---: | ---: |")
        for engine, p in op["engines"].items():
            for r in p["rows"]:
                L.append(
                    f"| {engine} ({fmt(p['total'] * 1e3)} ms) | `{cell(r['function'])}` | {r['calls']} | {fmt(100 * r['tottime'] / p['total'], 1)} |"
                )
        L.append("")
    return L if len(L) > 1 else []


def _workloads_section(workloads: list[Workload], templates: Templates) -> list[str]:
    L = ["## Workloads\n"]
    L.append(
        "Each template's output is the recorded case (tests/data/<model>/cases.json) with the most kinds of "
        "region (reasoning, content, tool calls; then the most calls), its reasoning, content and string "
        "tool-call arguments replaced by filler text sized 35% / 35% / 30% of the target (renormalised over what "
        "the case has). Filler: prose + markdown + a Python code block with `<`, `>`, braces, brackets and some "
        "non-ASCII; plain prose where noted. Before timing, every output is parsed one-shot by the three engines, "
        "which must agree and keep the inflated text. `kind` = the template's delimiter kind, from its JSON "
        "(`benchmarks/delimiters.py`).\n"
    )
    L.append("| template | kind | case | shape | notes |")
    L.append("| --- | --- | --- | --- | --- |")
    for w in workloads:
        L.append(
            f"| {w.model} | {templates.kinds.get(w.model, '')} | {w.case['name']} | {cell(w.shape)} | {cell('; '.join(w.notes))} |"
        )
    L.append("")
    return L


# =============================================================================================== console


def print_summary(cfg: Config, env: dict[str, Any], models: list[str], results: Results, targets: list[Target]) -> None:
    print(f"Python {env['python']}  |  CPU: {env['cpu']} ({env['cores']} cores)  |  transformers {env['transformers']}")
    if results.streaming:
        per_chunk = results.streaming["per_chunk"]
        print("\nus/chunk, median over templates (token chunks of 1-6 chars)")
        print(
            f"{'size':>8} {'compiled':>10} {'interp':>10} {'transf.':>10} {'floor':>8} {'tf/comp':>8} {'comp/floor':>10}"
        )
        for size in cfg.sizes:
            rows = per_chunk[size]
            med = {
                e: median([r[e] for r in rows.values() if e in r])
                for e in ("compiled", "interpreter", "transformers", "floor")
            }
            rt = median([v for r in rows.values() if (v := ratio(r, "transformers", "compiled")) == v])
            rf = median([ratio(r, "compiled", "floor") for r in rows.values()])
            print(
                f"{size_label(size):>8} {fmt(med['compiled']):>10} {fmt(med['interpreter']):>10} {fmt(med['transformers']):>10} "
                f"{fmt(med['floor'], 3):>8} {times(rt):>8} {times(rf):>10}"
            )
    if results.oneshot:
        one = results.oneshot["ms"]
        print("\none-shot parse_response, transformers / compiled (median over templates, worst)")
        for size in cfg.oneshot_sizes:
            rs = {m: ratio(one[size][m], "transformers", "compiled") for m in models}
            worst = min(rs, key=rs.__getitem__)
            print(
                f"  {size_label(size):>7}: median {fmt(median(list(rs.values())))}x, worst {fmt(rs[worst])}x ({worst})"
            )
    for r in results.concurrent:
        print(
            f"concurrent {r['model']:<18} round-robin/sequential {fmt(r['ratio'])}x, {fmt(r['overhead'])} bytes/parser beyond its text"
        )
    print("\ntargets")
    for t in targets:
        print(
            f"  [{'met' if t.met else 'NOT MET':>7}] {t.name} ({t.goal}): {t.measured}"
            + (f" -- missed by {t.missed_by}" if t.missed_by else "")
        )


# =============================================================================================== outputs


def write(
    out: Path, cfg: Config, env: dict[str, Any], workloads: list[Workload], templates: Templates, results: Results
) -> None:
    """RESULTS.md, results.json and per_chunk_cost.png into `out`, then the summary on stdout."""
    text, targets = build_report(cfg, env, workloads, templates, results)
    (out / "RESULTS.md").write_text(text + "\n", encoding="utf-8")
    raw = {
        "env": env,
        "mode": cfg.mode,
        "templates": asdict(templates),
        **{k: v for k, v in asdict(results).items()},
        "targets": [asdict(t) for t in targets],
        "workloads": {w.model: {"case": w.case["name"], "shape": w.shape, "notes": w.notes} for w in workloads},
    }
    (out / "results.json").write_text(json.dumps(raw, indent=1, default=str) + "\n", encoding="utf-8")
    plotted = bool(results.streaming) and plot(
        cfg, [w.model for w in workloads], results.streaming["per_chunk"], out / "per_chunk_cost.png"
    )
    print_summary(cfg, env, [w.model for w in workloads], results, targets)
    written = "RESULTS.md, results.json and per_chunk_cost.png" if plotted else "RESULTS.md and results.json"
    print(f"\nwrote {written} into {out} ({env['elapsed']:.0f} s)")
