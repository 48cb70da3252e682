"""The report of a run: benchmarks/RESULTS.md (targets first, then every table), results.json (the raw
figures), per_chunk_cost.png (the plot, when matplotlib is installed) and the console summary."""

# ruff: noqa: E501 - report tables are built from long f-strings

from __future__ import annotations

import hashlib
import json
import platform
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import nested_repeats
from benchmarks.config import KB, MB, ROOT, Config, log, size_label
from benchmarks.engines import ENGINES
from benchmarks.workloads import ADVERSARIAL, Workload


@dataclass
class Results:
    """What the stages of one run measured (each as its `bench_*` / `profile_*` function returned it)."""

    streaming: dict[str, Any]
    memory: list[dict[str, Any]]
    oneshot: dict[int, Any]
    imports: dict[str, Any]
    adversarial: list[dict[str, Any]]
    translation: dict[str, Any]
    nested_repeats: list[dict[str, Any]]
    profile: dict[str, Any]


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


def fmt(x: float, digits: int = 2) -> str:
    if x != x:  # NaN
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}f}"


def cell(text: str) -> str:
    """Text for a Markdown table cell (a `|` inside, as in `<|channel|>`, would split the cell)."""
    return text.replace("|", "\\|")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


# =============================================================================================== RESULTS.md


def build_report(
    cfg: Config, env: dict[str, Any], workloads: list[Workload], results: Results
) -> tuple[str, list[tuple[str, bool | None, str]]]:
    """The text of RESULTS.md, and the targets (name, met?, what was measured) it opens with."""
    s, mem, one, imp = results.streaming, results.memory, results.oneshot, results.imports
    adv, translation, prof = results.adversarial, results.translation, results.profile
    per_chunk = s["per_chunk"]
    L: list[str] = []
    targets: list[tuple[str, bool | None, str]] = []
    models = [w.model for w in workloads]

    L.append("# rtcompile benchmark results\n")
    L.append(
        f"- Python {env['python']} ({env['implementation']}), transformers {env['transformers']}, rtcompile "
        f"{env['rtcompile']} (sources sha256 {env['rtcompile_sources']}…, over rtcompile/**/*.py and *.jinja)"
    )
    L.append(f"- CPU: {env['cpu']} ({env['cores']} cores visible), {env['platform']}")
    L.append(
        f"- Mode: {'quick' if cfg.quick else 'full'}; run took {env['elapsed']:.0f} s; started {env['started']}; "
        f"load average {env['load_start'][0]:.2f} at the start, {env['load_end'][0]:.2f} at the end "
        "(other work on the machine shifts all engines alike: they are interleaved run by run)"
    )
    L.append(
        "- Command: `python benchmarks/run.py"
        + (" --quick" if cfg.quick else "")
        + "`; stages: "
        + ", ".join(f"{k} {v:.0f} s" for k, v in env["stages"].items())
    )
    L.append("")

    # ------------------------------------------------------------------ targets (filled below, printed first)
    head = per_chunk[cfg.headline]
    r_tf = [head[m]["transformers"] / head[m]["compiled"] for m in models if "transformers" in head[m]]
    r_in = [head[m]["interpreter"] / head[m]["compiled"] for m in models]
    r_tf_min = [head[m]["transformers_min"] / head[m]["compiled_min"] for m in models]
    r_in_min = [head[m]["interpreter_min"] / head[m]["compiled_min"] for m in models]
    targets.append(
        (
            f"Streaming: compiled >= 8x faster per chunk than transformers (median over {len(r_tf)} templates, {size_label(cfg.headline)})",
            median(r_tf) >= 8,
            f"median {fmt(median(r_tf))}x (min {fmt(min(r_tf))}x, max {fmt(max(r_tf))}x); "
            f"from each engine's fastest repetition instead of its median: {fmt(median(r_tf_min))}x",
        )
    )
    targets.append(
        (
            f"Streaming: compiled >= 2x faster per chunk than the interpreter (median, {size_label(cfg.headline)})",
            median(r_in) >= 2,
            f"median {fmt(median(r_in))}x (min {fmt(min(r_in))}x, max {fmt(max(r_in))}x); "
            f"from the fastest repetitions: {fmt(median(r_in_min))}x",
        )
    )
    big, small = cfg.flat_big, cfg.flat_small
    growth: dict[str, list[float]] = {}
    for e in ("compiled", "interpreter", "transformers", "floor"):
        growth[e] = [per_chunk[big][m][e] / per_chunk[small][m][e] for m in models if e in per_chunk[big][m]]
    for e in ("compiled", "interpreter"):
        worst = max(growth[e])
        worst_model = models[growth[e].index(worst)]
        over = [m for m, g in zip(models, growth[e], strict=True) if g > 1.3]
        targets.append(
            (
                f"Flat: {e} per-chunk cost at {size_label(big)} within 1.3x of {size_label(small)} (median over templates)",
                median(growth[e]) <= 1.3,
                f"median {fmt(median(growth[e]))}x; worst {fmt(worst)}x ({worst_model}); "
                f"{len(over)} of {len(models)} templates above 1.3x" + (f" ({', '.join(over)})" if over else ""),
            )
        )
    for e in ("compiled", "interpreter"):
        rows = [r for r in mem if r["engine"] == e and r["chunking"].startswith("token")]
        longest = max(rows, key=lambda r: (r["fed"], r["retained"] / r["body"]))  # the longest run
        ratio = longest["retained"] / longest["body"]
        targets.append(
            (
                f"Memory: {e} retains at most the open region's body (+ the longest pending delimiter) after "
                f"{size_label(longest['fed'])} of content in token chunks ({longest['model']})",
                longest["retained"] <= 1.05 * longest["body"] + KB,
                f"retained {fmt(longest['retained'] / MB)} MB for a {fmt(longest['body'] / MB)} MB body "
                f"({fmt(ratio)}x; {fmt(longest['retained'] / longest['chunks'])} bytes per chunk fed)",
            )
        )
    for size in cfg.oneshot_sizes:
        r1 = [one[size][m]["transformers"] / one[size][m]["compiled"] for m in models]
        targets.append(
            (
                f"One-shot parse_response: compiled >= 2x faster than transformers ({size_label(size)}, median)",
                median(r1) >= 2,
                f"median {fmt(median(r1))}x (min {fmt(min(r1))}x, {models[r1.index(min(r1))]})",
            )
        )
    walls = {m: v["warm_wall"] * 1e3 for m, v in imp["modules"].items()}
    worst_m = max(walls, key=walls.__getitem__)
    targets.append(
        (
            "Import of a generated module < 10 ms (fresh interpreter, bytecode cached, including the stdlib "
            "modules it imports)",
            walls[worst_m] < 10,
            f"median over modules {fmt(median(list(walls.values())))} ms, worst {fmt(walls[worst_m])} ms ({worst_m}); "
            f"its stdlib imports alone take {fmt(imp['stdlib'][imp['stdlib_deps']] * 1e3)} ms",
        )
    )
    for label, model, _ in ADVERSARIAL:
        for e in ("compiled", "interpreter"):
            row = next(r for r in adv if r["stream"] == label and r["model"] == model and r["engine"] == e)
            g = row["whole"] / row["first"]
            targets.append(
                (
                    f"Adversarial {label} on {model}, one char per feed: {e} linear (fastest segment of the second "
                    f"half of the {size_label(row['total'])} stream within 1.3x of the fastest of the first half)",
                    row["late_vs_early"] <= 1.3,
                    f"{fmt(row['late_vs_early'])}x; first {size_label(row['segment'])} {fmt(row['first'])} us/char, "
                    f"whole {size_label(row['total'])} {fmt(row['whole'])} us/char ({fmt(g)}x)",
                )
            )
    slowest = max(translation["patterns"], key=lambda p: p["ms"])
    targets.append(
        (
            "Regex translation: every pattern of the bundled templates translates to stdlib `re` (uncached) in "
            "< 250 ms",
            slowest["ms"] < 250,
            f"slowest {fmt(slowest['ms'])} ms ({slowest['model']}, {slowest['kind']}); all "
            f"{len(translation['patterns'])} patterns {fmt(sum(p['ms'] for p in translation['patterns']))} ms",
        )
    )

    L.append("## Targets\n")
    L.append("| target | met? | measured |")
    L.append("| --- | --- | --- |")
    for name, met, measured in targets:
        L.append(f"| {cell(name)} | {'met' if met else 'NOT MET'} | {cell(measured)} |")
    L.append("")

    # ------------------------------------------------------------------ streaming table
    L.append("## Streaming, token-like chunks (1-6 characters)\n")
    L.append(
        "us per chunk: all `feed` calls + `finalize`, divided by the number of chunks (parser construction not "
        f"timed). Median of {cfg.reps} interleaved repetitions"
        + "".join(f" ({r} for transformers at {size_label(sz)})" for sz, r in cfg.tf_reps.items())
        + "; each repetition times every engine on every size of a template, one after the other. A timed sample "
        "streams the output through `batch` fresh parsers back to back (so that every sample covers about "
        f"{size_label(cfg.chunks_per_sample[cfg.sizes[1]] * 3.5)} of text whatever the output size). "
        "`floor` = append each chunk to a list + build one event dict per chunk. Ratios are "
        "transformers/compiled and interpreter/compiled. Everything alive before the measurements (modules, "
        "templates, transformers) is moved out of the collector's sight with `gc.freeze()`; the collector stays "
        "enabled during the runs.\n"
    )
    for size in cfg.sizes:
        rows = per_chunk[size]
        L.append(f"### {size_label(size)} of output\n")
        L.append(
            "| template | output shape | chunks x batch | compiled | interpreter | transformers | floor | tf / compiled | interp / compiled |"
        )
        L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for w in workloads:
            r = rows[w.model]
            tf = r.get("transformers", float("nan"))
            L.append(
                f"| {w.model} | {w.shape}{' (' + '; '.join(w.notes) + ')' if w.notes else ''} | {r['chunks']} x {r['batch']} | {fmt(r['compiled'])} | "
                f"{fmt(r['interpreter'])} | {fmt(tf)} | {fmt(r['floor'], 3)} | {fmt(tf / r['compiled'])}x | "
                f"{fmt(r['interpreter'] / r['compiled'])}x |"
            )
        med = {e: median([rows[m][e] for m in models if e in rows[m]]) for e in (*ENGINES, "floor")}
        rt = median([rows[m]["transformers"] / rows[m]["compiled"] for m in models if "transformers" in rows[m]])
        ri = median([rows[m]["interpreter"] / rows[m]["compiled"] for m in models])
        L.append(
            f"| **median** | | | **{fmt(med['compiled'])}** | **{fmt(med['interpreter'])}** | **{fmt(med['transformers'])}** | "
            f"**{fmt(med['floor'], 3)}** | **{fmt(rt)}x** | **{fmt(ri)}x** |"
        )
        L.append("")
    if s["mismatches"]:
        L.append("Streamed-message mismatches between engines: " + "; ".join(s["mismatches"]) + "\n")
    else:
        L.append("Every streamed message was identical in the three engines (checked once per template and size).\n")

    L.append(f"### Growth of the per-chunk cost, {size_label(small)} -> {size_label(big)}\n")
    L.append("| template | compiled | interpreter | transformers | floor |")
    L.append("| --- | ---: | ---: | ---: | ---: |")
    for m in models:
        cells = []
        for e in ("compiled", "interpreter", "transformers", "floor"):
            if e in per_chunk[big][m]:
                cells.append(f"{fmt(per_chunk[big][m][e] / per_chunk[small][m][e])}x")
            else:
                cells.append("-")
        L.append(f"| {m} | " + " | ".join(cells) + " |")
    L.append(
        "| **median** | "
        + " | ".join(f"**{fmt(median(growth[e]))}x**" for e in ("compiled", "interpreter", "transformers", "floor"))
        + " |"
    )
    L.append("")
    L.append("![per-chunk cost](per_chunk_cost.png)\n")

    # ------------------------------------------------------------------ memory
    L.append("## Retained memory while streaming content into an open region\n")
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

    # ------------------------------------------------------------------ one-shot
    L.append("## One-shot `parse_response`\n")
    L.append(
        f"ms per call (median of {cfg.oneshot_reps}), same outputs as the streaming runs. The interpreter is "
        "given the already-loaded `Template`; transformers is given the template dict, as its API takes it.\n"
    )
    for size in cfg.oneshot_sizes:
        L.append(f"### {size_label(size)}\n")
        L.append("| template | compiled | interpreter | transformers | tf / compiled | interp / compiled |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
        for m in models:
            r = one[size][m]
            L.append(
                f"| {m} | {fmt(r['compiled'], 3)} | {fmt(r['interpreter'], 3)} | {fmt(r['transformers'], 3)} | "
                f"{fmt(r['transformers'] / r['compiled'])}x | {fmt(r['interpreter'] / r['compiled'])}x |"
            )
        rt = median([one[size][m]["transformers"] / one[size][m]["compiled"] for m in models])
        ri = median([one[size][m]["interpreter"] / one[size][m]["compiled"] for m in models])
        L.append(f"| **median** | | | | **{fmt(rt)}x** | **{fmt(ri)}x** |")
        L.append("")

    # ------------------------------------------------------------------ imports
    L.append("## Import time (fresh interpreter per measurement)\n")
    L.append(
        f"Median of {cfg.import_runs} subprocesses each. `wall` = `time.perf_counter()` around the `import` "
        "statement, run without `-X importtime` (includes the standard-library modules the generated module "
        "imports that Python had not loaded at startup); `self` = `-X importtime` self time of the module's own "
        "body; `re.compile` = time spent in `re.compile` calls during the import (separate run, `re` patched). "
        "`warm` = bytecode cached in `__pycache__` (the deployed case); `cold` = source only, compiled on import.\n"
    )
    L.append("| module | warm wall | warm self | of which re.compile | cold wall | cold self |")
    L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for m, v in imp["modules"].items():
        L.append(
            f"| rtc_{m} | {fmt(v['warm_wall'] * 1e3)} ms | {fmt(v['warm_self'] * 1e3)} ms | "
            f"{fmt(v['regex'] * 1e3)} ms ({v['regex_count']} patterns) | {fmt(v['cold_wall'] * 1e3)} ms | "
            f"{fmt(v['cold_self'] * 1e3)} ms |"
        )
    L.append(f"| `rtcompile` (interpreter) | {fmt(imp['interpreter'] * 1e3)} ms | | | | |")
    L.append(f"| `transformers.utils.chat_parsing` | {fmt(imp['transformers'] * 1e3)} ms | | | | |")
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

    # ------------------------------------------------------------------ adversarial
    L.append("## Adversarial streams, one character per `feed`\n")
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

    # ------------------------------------------------------------------ regex translation
    L.extend(translation_section(translation))
    L.extend(nested_repeats.section(results.nested_repeats))

    # ------------------------------------------------------------------ profile
    L.append("## Where the time goes\n")
    L.append(
        f"cProfile (deterministic; it inflates the cost of small Python calls, so read shares, not absolute "
        f"times) over one streaming run per template at {size_label(cfg.profile_size)}, token chunks. "
        "`tottime` = time in the function itself; `calls/chunk` = calls per `feed` chunk.\n"
    )
    components = prof.pop("components")
    oneshot_profile = prof.pop("oneshot")
    L.append("### Component costs on qwen3 (timeit, no profiler)\n")
    L.append(
        "Each piece of one `feed` of a 3-character chunk inside the content region, timed alone (best of 5 x "
        "20000 calls; us per call). The buffer is set to what the engines hold between feeds (one committed "
        "character plus the new chunk).\n"
    )
    L.append("| engine | piece | us/call |")
    L.append("| --- | --- | ---: |")
    for engine, piece, us in components:
        L.append(f"| {engine} | {piece} | {fmt(us, 3)} |")
    L.append("")
    for key, p in prof.items():
        L.append(f"### {key} ({p['chunks']} chunks, {fmt(p['total'])} s profiled)\n")
        L.append("| function | calls/chunk | tottime % | cumtime % |")
        L.append("| --- | ---: | ---: | ---: |")
        for r in p["rows"][:12]:
            L.append(
                f"| `{r['function']}` | {fmt(r['per_chunk_calls'])} | {fmt(100 * r['tottime'] / p['total'], 1)} | "
                f"{fmt(100 * r['cumtime'] / p['total'], 1)} |"
            )
        L.append("")

    op = oneshot_profile
    L.append(
        f"### One-shot `parse_response` on {op['model']} at {size_label(op['size'])} (the template where compiled "
        "is slowest relative to transformers), cProfile\n"
    )
    L.append("| engine | function | calls | tottime % |")
    L.append("| --- | --- | ---: | ---: |")
    for engine, p in op["engines"].items():
        for r in p["rows"]:
            L.append(
                f"| {engine} ({fmt(p['total'] * 1e3)} ms) | `{r['function']}` | {r['calls']} | {fmt(100 * r['tottime'] / p['total'], 1)} |"
            )
    L.append("")

    L.append("## Workloads\n")
    L.append(
        "Each template's output is the recorded case (tests/data/<model>/cases.json) with the most kinds of "
        "region (reasoning, content, tool calls; then the most calls), its reasoning, content and string "
        "tool-call arguments replaced by filler text sized 35% / 35% / 30% of the target (renormalised over what "
        "the case has). Filler: prose + markdown + a Python code block with `<`, `>`, braces, brackets and some "
        "non-ASCII; plain prose where noted. Before timing, every output is parsed one-shot by the three engines, "
        "which must agree and keep the inflated text.\n"
    )
    L.append(
        "`fast path` = parser states of the generated module that have a no-scan fast path (`_PLAIN[state]` is "
        "not None), out of all states; `-` if the module has no such table.\n"
    )
    L.append("| template | case | shape | fast path | notes |")
    L.append("| --- | --- | --- | --- | --- |")
    for w in workloads:
        L.append(
            f"| {w.model} | {w.case['name']} | {w.shape} | {env['fast_path'].get(w.model, '-')} | {'; '.join(w.notes)} |"
        )
    L.append("")
    return "\n".join(L), targets


def translation_section(translation: dict[str, Any]) -> list[str]:
    """The regex translation table: every pattern, slowest first, and the totals per kind."""
    rows = sorted(translation["patterns"], key=lambda p: -p["ms"])
    lines = ["## Regex translation (`rtcompile.regex.translate.translate`, uncached)\n"]
    lines.append(
        f"ms per call, median of {translation['reps']} (the patterns take turns within each repetition); every "
        "memo cache of the module is cleared before each call, so each call does a first translation's work. "
        "The patterns are every regex of the bundled templates (start anchors, open/close delimiters, "
        "xml-inline `tag_pattern`s), each once, under the first template that has it. The table of cased code "
        "points, built once per process on the first case-insensitive character set, is timed apart: "
        f"{fmt(translation['cased_table_ms'])} ms.\n"
    )
    lines.append("| kind | patterns | total ms | slowest ms |")
    lines.append("| --- | ---: | ---: | ---: |")
    for kind in sorted({p["kind"] for p in rows}):
        of_kind = [p["ms"] for p in rows if p["kind"] == kind]
        lines.append(f"| {kind} | {len(of_kind)} | {fmt(sum(of_kind))} | {fmt(max(of_kind))} |")
    lines.append(f"| **all** | **{len(rows)}** | **{fmt(sum(p['ms'] for p in rows))}** | **{fmt(rows[0]['ms'])}** |")
    lines.append("")
    lines.append("| template | kind | pattern | outcome | ms | fastest ms |")
    lines.append("| --- | --- | --- | --- | ---: | ---: |")
    for p in rows:
        lines.append(
            f"| {p['model']} | {p['kind']} | `{cell(p['pattern'])}` | {p['outcome']} | {fmt(p['ms'], 3)} | "
            f"{fmt(p['ms_min'], 3)} |"
        )
    lines.append("")
    return lines


# =============================================================================================== plot


def plot(cfg: Config, workloads: list[Workload], per_chunk: dict[int, Any], path: Path) -> bool:
    """Draw per_chunk_cost.png; False (and nothing written) if matplotlib is not installed (`pip install -e '.[bench]'`)."""
    try:
        import matplotlib
    except ModuleNotFoundError:
        log("matplotlib is not installed (pip install -e '.[bench]'): no plot")
        return False

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = [w.model for w in workloads]
    fig, ax = plt.subplots(figsize=(10.5, 5.5))
    styles = {"compiled": ("C0", "o"), "interpreter": ("C1", "s"), "transformers": ("C3", "^"), "floor": ("0.4", "x")}
    for e, (color, marker) in styles.items():
        xs, meds, los, his = [], [], [], []
        for size in cfg.sizes:
            values = [per_chunk[size][m][e] for m in models if e in per_chunk[size][m]]
            if not values:
                continue
            xs.append(size / KB)
            meds.append(statistics.median(values))
            los.append(min(values))
            his.append(max(values))
        ax.plot(xs, meds, marker=marker, color=color, label=f"{e} (median over templates)")
        ax.fill_between(xs, los, his, color=color, alpha=0.12)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("output size (KB, log)")
    ax.set_ylabel("us per chunk (log)")
    ax.set_title(
        f"Streaming cost per token-like chunk (1-6 chars), {len(models)} templates\n(line: median, band: min-max)"
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.set_xticks([size / KB for size in cfg.sizes])
    ax.set_xticklabels([size_label(size) for size in cfg.sizes])
    ax.minorticks_off()
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


# =============================================================================================== console


def print_table(
    cfg: Config,
    env: dict[str, Any],
    workloads: list[Workload],
    results: Results,
    targets: list[tuple[str, bool | None, str]],
) -> None:
    s, mem, one, imp = results.streaming, results.memory, results.oneshot, results.imports
    adv, translation = results.adversarial, results.translation
    per_chunk = s["per_chunk"]
    models = [w.model for w in workloads]
    print(f"Python {env['python']}  |  CPU: {env['cpu']} ({env['cores']} cores)  |  transformers {env['transformers']}")
    print()
    print("us/chunk, median over templates (token chunks of 1-6 chars)")
    print(f"{'size':>8} {'compiled':>10} {'interp':>10} {'transf.':>10} {'floor':>8} {'tf/comp':>8} {'int/comp':>9}")
    for size in cfg.sizes:
        rows = per_chunk[size]
        med = {e: median([rows[m][e] for m in models if e in rows[m]]) for e in (*ENGINES, "floor")}
        rt = median([rows[m]["transformers"] / rows[m]["compiled"] for m in models if "transformers" in rows[m]])
        ri = median([rows[m]["interpreter"] / rows[m]["compiled"] for m in models])
        print(
            f"{size_label(size):>8} {fmt(med['compiled']):>10} {fmt(med['interpreter']):>10} {fmt(med['transformers']):>10} "
            f"{fmt(med['floor'], 3):>8} {fmt(rt) + 'x':>8} {fmt(ri) + 'x':>9}"
        )
    print()
    print(
        f"per template at {size_label(cfg.headline)} and {size_label(cfg.flat_big)} (us/chunk: compiled / interpreter / transformers; growth)"
    )
    for m in models:
        a, b = per_chunk[cfg.flat_small][m], per_chunk[cfg.flat_big][m]
        print(
            f"  {m:<18} {fmt(a['compiled']):>6} {fmt(a['interpreter']):>6} {fmt(a.get('transformers', float('nan'))):>6}   "
            f"{fmt(b['compiled']):>6} {fmt(b['interpreter']):>6} {fmt(b.get('transformers', float('nan'))):>6}   "
            f"growth {fmt(b['compiled'] / a['compiled'])}x {fmt(b['interpreter'] / a['interpreter'])}x "
            f"{fmt(b.get('transformers', float('nan')) / a.get('transformers', float('nan')))}x"
        )
    print()
    print("retained memory (token chunks unless noted)")
    for r in mem:
        print(
            f"  {r['model']:<8} {r['chunking']:<18} {r['engine']:<12} body {fmt(r['body'] / MB)} MB  retained {fmt(r['retained'] / MB)} MB "
            f"({fmt(r['retained'] / r['body'])}x)"
        )
    print()
    print("one-shot parse_response (ms, median over templates)")
    for size in cfg.oneshot_sizes:
        med = {e: median([one[size][m][e] for m in models]) for e in ENGINES}
        rt = median([one[size][m]["transformers"] / one[size][m]["compiled"] for m in models])
        print(
            f"  {size_label(size):>7}: compiled {fmt(med['compiled'], 3)}  interpreter {fmt(med['interpreter'], 3)}  "
            f"transformers {fmt(med['transformers'], 3)}  tf/compiled {fmt(rt)}x"
        )
    print()
    walls = [v["warm_wall"] * 1e3 for v in imp["modules"].values()]
    selfs = [v["warm_self"] * 1e3 for v in imp["modules"].values()]
    print(
        f"import (warm): generated modules median {fmt(median(walls))} ms (max {fmt(max(walls))}), self {fmt(median(selfs))} ms; "
        f"their stdlib imports alone {fmt(imp['stdlib'][imp['stdlib_deps']] * 1e3)} ms; rtcompile {fmt(imp['interpreter'] * 1e3)} ms; "
        f"transformers.utils.chat_parsing {fmt(imp['transformers'] * 1e3)} ms"
    )
    print()
    print("adversarial, one char per feed (us/char: first segment, whole stream)")
    for r in adv:
        print(
            f"  {r['stream']:<40} {r['model']:<8} {r['engine']:<12} first {size_label(r['segment'])}: {fmt(r['first'])}  "
            f"whole {size_label(r['total'])}: {fmt(r['whole'])}  ({fmt(r['whole'] / r['first'])}x; fastest late/early {fmt(r['late_vs_early'])}x)"
        )
    print()
    patterns = translation["patterns"]
    slowest = max(patterns, key=lambda p: p["ms"])
    print(
        f"regex translation (uncached): {len(patterns)} patterns in {fmt(sum(p['ms'] for p in patterns))} ms, "
        f"slowest {fmt(slowest['ms'])} ms ({slowest['model']}); cased code point table {fmt(translation['cased_table_ms'])} ms"
    )
    print()
    print("targets")
    for name, met, measured in targets:
        print(f"  [{'met' if met else 'NOT MET':>7}] {name}: {measured}")


# =============================================================================================== outputs


def write(out: Path, cfg: Config, env: dict[str, Any], workloads: list[Workload], results: Results) -> None:
    """RESULTS.md, results.json and per_chunk_cost.png into `out`, then the summary on stdout."""
    text, targets = build_report(cfg, env, workloads, results)
    (out / "RESULTS.md").write_text(text + "\n", encoding="utf-8")
    raw = {
        "env": env,
        "streaming": results.streaming,
        "memory": results.memory,
        "oneshot": results.oneshot,
        "imports": results.imports,
        "adversarial": results.adversarial,
        "regex_translation": results.translation,
        "nested_repeats": results.nested_repeats,
        "targets": [{"target": t, "met": met, "measured": m} for t, met, m in targets],
        "workloads": {w.model: {"case": w.case["name"], "shape": w.shape, "notes": w.notes} for w in workloads},
    }
    (out / "results.json").write_text(json.dumps(raw, indent=1, default=str) + "\n", encoding="utf-8")
    plotted = plot(cfg, workloads, results.streaming["per_chunk"], out / "per_chunk_cost.png")
    print_table(cfg, env, workloads, results, targets)
    written = "RESULTS.md, results.json and per_chunk_cost.png" if plotted else "RESULTS.md and results.json"
    print(f"\nwrote {written} into {out} ({env['elapsed']:.0f} s)")
