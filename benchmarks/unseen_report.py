"""The unseen set in the report: issue 19's targets judged on it, its tables, and what makes the slow ones slow.

Ratios are per template from one run (`benchmarks.unseen`): `compiled / bound` and `transformers /
compiled` at 4 KB, the growth of the compiled per-chunk cost from 4 KB to each big size, and
`transformers / compiled` for one-shot `parse_response` at each size.
"""

# ruff: noqa: E501 - report tables are built from long f-strings

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any

from benchmarks.config import size_label
from benchmarks.targets import Target, fmt
from benchmarks.unseen import GROWTH_STREAMS, SEGMENT

ISSUE19 = "issue 19 targets"
STREAM_MEDIAN, STREAM_EACH, FLAT, ONESHOT_EACH, ONESHOT_MEDIAN = 1.5, 3.0, 1.3, 1.0, 2.0


def _listing(pairs: list[tuple[str, str]], limit: int = 10) -> str:
    shown = ", ".join(f"{m} {v}" for m, v in pairs[:limit])
    return shown + (f" and {len(pairs) - limit} more" if len(pairs) > limit else "")


def bound_ratio(row: dict[str, Any]) -> float:
    return float(row["stream"]["compiled"] / row["stream"]["bound"])


def tf_ratio(row: dict[str, Any]) -> float:
    return float(row["stream"]["transformers"] / row["stream"]["compiled"])


def oneshot_ratio(row: dict[str, Any], size: int) -> float | None:
    """transformers / compiled one-shot at `size`; None where an engine was not run there."""
    ms = row["oneshot"].get(size, {})
    if "compiled" not in ms or "transformers" not in ms:
        return None
    return float(ms["transformers"] / ms["compiled"])


def growth_text(row: dict[str, Any], size: int) -> str:
    if size not in row["growth"]:
        return "-"
    return (">= " if size in row["stopped"] else "") + f"{fmt(row['growth'][size])}x"


def unseen_targets(unseen: dict[str, Any]) -> list[Target]:
    rows: dict[str, dict[str, Any]] = unseen["rows"]
    n = len(rows)
    out: list[Target] = []
    # A template whose stream transformers raises on is not streamed (NaN, with a note in its row): the
    # streaming figures are over the others, and say how many those are.
    streamed = {m: r for m, r in rows.items() if not math.isnan(r["stream"]["compiled"])}
    unstreamed = n - len(streamed)
    bound = {m: bound_ratio(r) for m, r in streamed.items()}
    tf = {m: tf_ratio(r) for m, r in streamed.items()}
    med = statistics.median(bound.values())
    worst_tf = min(tf, key=tf.__getitem__)
    besides = f" ({unstreamed} not streamed: transformers raises on their stream)" if unstreamed else ""
    out.append(
        Target(
            ISSUE19,
            f"Unseen templates ({n}), streaming 4 KB: compiled per chunk within {STREAM_MEDIAN}x of the bound, median",
            f"<= {STREAM_MEDIAN}x",
            med <= STREAM_MEDIAN,
            f"median compiled / bound {fmt(med)}x over {len(streamed)}{besides}; transformers / compiled median "
            f"{fmt(statistics.median(tf.values()))}x, worst {fmt(tf[worst_tf])}x ({worst_tf})",
            "" if med <= STREAM_MEDIAN else f"{fmt(med / STREAM_MEDIAN)}x over",
        )
    )
    over = sorted(((m, r) for m, r in bound.items() if r > STREAM_EACH), key=lambda mr: -mr[1])
    worst = max(bound, key=bound.__getitem__)
    out.append(
        Target(
            ISSUE19,
            f"Unseen templates ({n}), streaming 4 KB: every template within {STREAM_EACH}x of the bound",
            f"<= {STREAM_EACH}x each",
            not over,
            f"worst {fmt(bound[worst])}x ({worst}); {len(over)} of {len(streamed)} over {STREAM_EACH}x"
            + (f": {_listing([(m, fmt(r) + 'x') for m, r in over])}" if over else ""),
            f"{fmt(bound[worst] / STREAM_EACH)}x over" if over else "",
        )
    )
    for size in unseen["sizes"]:
        out.append(_flat_target(rows, size))
    for size in unseen["oneshot_sizes"]:
        out += _oneshot_targets(rows, size)
    return out


def _flat_target(rows: dict[str, dict[str, Any]], size: int) -> Target:
    """Growth is measured on the streams that ran at 4 KB and at `size`. A template whose stream raises
    (transformers raises there too: not streamed at 4 KB, NaN; or an inflated output the content
    parser refuses at a big size) has no figure and does not count against the target; one stopped
    at a smaller size for growing too fast does."""
    measured = {m: g for m, r in rows.items() if size in r["growth"] and not math.isnan(g := r["growth"][size])}
    stopped = [m for m, r in rows.items() if size not in r["growth"] and r["stopped"]]
    raising = len(rows) - len(measured) - len(stopped)
    over = sorted(((m, g) for m, g in measured.items() if g > FLAT), key=lambda mg: -mg[1])
    worst = max(measured, key=measured.__getitem__)
    met = not over and not stopped
    missed = [f"{len(over)} over"] if over else []
    missed += [f"{len(stopped)} stopped at a smaller size"] if stopped else []
    return Target(
        ISSUE19,
        f"Unseen templates: compiled per-chunk cost at {size_label(size)} within {FLAT}x of 4 KB, every template",
        f"<= {FLAT}x each",
        met,
        f"worst {growth_text(rows[worst], size)} ({worst}), median {fmt(statistics.median(measured.values()))}x over the "
        f"{len(measured)} streamed at {size_label(size)}; {len(over)} over {FLAT}x"
        + (f": {_listing([(m, growth_text(rows[m], size)) for m, _ in over])}" if over else "")
        + (f"; {len(stopped)} stopped at a smaller size: {_listing([(m, '') for m in stopped])}" if stopped else "")
        + (f"; {raising} without a figure (their stream raises, as transformers' does)" if raising else ""),
        ", ".join(missed),
    )


def _oneshot_targets(rows: dict[str, dict[str, Any]], size: int) -> list[Target]:
    """Per template, transformers / compiled at `size`. Where transformers was stopped at a smaller
    size for growing too fast and compiled ran at `size`, transformers' time at the largest size it
    ran is a lower bound of its time here (the bigger output inflates the same one), so the ratio is
    at least that time over compiled's; the median is over the measured ratios only."""
    ratios = {m: r for m, row in rows.items() if (r := oneshot_ratio(row, size)) is not None}
    bounds = {m: b for m, row in rows.items() if m not in ratios and (b := _oneshot_bound(row, size)) is not None}
    missing = [m for m in rows if m not in ratios and m not in bounds]
    below = sorted(((m, r) for m, r in {**ratios, **bounds}.items() if r < ONESHOT_EACH), key=lambda mr: mr[1])
    worst = min(ratios, key=ratios.__getitem__)
    med = statistics.median(ratios.values())
    label = f"Unseen templates, one-shot `parse_response` {size_label(size)}"
    bounded = (
        f"; {len(bounds)} where transformers grew too fast to be run at this size (its time at the last size it "
        f"ran over compiled's here, at least {fmt(min(bounds.values()))}x): "
        + _listing(sorted(((m, f">= {fmt(b)}x") for m, b in bounds.items()), key=lambda mb: mb[0]))
        if bounds
        else ""
    )
    skipped = f"; {len(missing)} not run at this size: {_listing([(m, '') for m in missing])}" if missing else ""
    return [
        Target(
            ISSUE19,
            f"{label}: every template at least as fast as transformers",
            f">= {fmt(ONESHOT_EACH)}x each",
            not below and not missing,
            f"worst {fmt(ratios[worst])}x ({worst}); {len(below)} of {len(ratios) + len(bounds)} below"
            + (f": {_listing([(m, fmt(r) + 'x') for m, r in below])}" if below else "")
            + bounded
            + skipped,
            f"{fmt(ONESHOT_EACH / below[0][1])}x short" if below else (f"{len(missing)} not run" if missing else ""),
        ),
        Target(
            ISSUE19,
            f"{label}: compiled faster than transformers, median",
            f">= {fmt(ONESHOT_MEDIAN)}x",
            med >= ONESHOT_MEDIAN,
            f"median {fmt(med)}x over {len(ratios)} templates",
            "" if med >= ONESHOT_MEDIAN else f"needs {fmt(ONESHOT_MEDIAN / med)}x more",
        ),
    ]


def _oneshot_bound(row: dict[str, Any], size: int) -> float | None:
    """transformers' time at the largest smaller size it ran over compiled's at `size`, where compiled
    ran at `size` and transformers did not; None otherwise (see `_oneshot_targets`)."""
    compiled = row["oneshot"].get(size, {}).get("compiled")
    earlier = [ms["transformers"] for s, ms in row["oneshot"].items() if s < size and "transformers" in ms]
    if compiled is None or not earlier:
        return None
    return float(earlier[-1] / compiled)


# =============================================================================================== the section


def unseen_section(unseen: dict[str, Any]) -> list[str]:
    rows: dict[str, dict[str, Any]] = unseen["rows"]
    sizes, oneshot_sizes = unseen["sizes"], unseen["oneshot_sizes"]
    L = ["## Unseen templates: nobody tuned rtcompile for these\n"]
    L.append(
        f"{len(rows)} templates (`benchmarks/unseen.py`): `random-NNN` are drawn from every construct the compiler "
        "accepts (`benchmarks/unseen_templates.py`) and measured on their own outputs (prose with whitespace runs, "
        "stray `<`, `[`, `{`, newlines and near misses of their delimiters); `MODEL~KIND` are the bundled templates "
        "rewritten (`benchmarks/rewrites.py`) and measured on the bundled workload. Streaming: us per chunk at 4 KB "
        "as in the bundled streaming tables (token chunks of 1-6 characters; compiled, transformers and the bound "
        f"interleaved); growth = compiled per-chunk cost at a big size over its 4 KB cost: {GROWTH_STREAMS} streams, "
        f"each stretch of {SEGMENT:,} chunks at the best of them, against the best 4 KB sample, "
        "`>=` where the stream was stopped for costing over 8x its linear prediction (bigger sizes are then not "
        "run). One-shot: transformers / compiled ms per `parse_response`. Constructs: what each template is made "
        "of (for a rewrite, its kind).\n"
    )
    L += _worst_lists(rows, sizes, oneshot_sizes)
    L += _construct_table(rows, sizes, oneshot_sizes)
    L.append("### Every unseen template\n")
    head = ["template", "shape", "compiled us/chunk", "compiled / bound", "tf / compiled"]
    head += [f"growth {size_label(s)}" for s in sizes] + [
        f"one-shot {size_label(s)} tf / compiled" for s in oneshot_sizes
    ]
    L.append("| " + " | ".join([*head, "constructs", "notes"]) + " |")
    L.append("| --- | --- | " + " | ".join("---:" for _ in head[2:]) + " | --- | --- |")
    for m, r in rows.items():
        cells = [m, r["shape"], fmt(r["stream"]["compiled"]), f"{fmt(bound_ratio(r))}x", f"{fmt(tf_ratio(r))}x"]
        cells += [growth_text(r, s) for s in sizes]
        cells += [f"{fmt(v)}x" if (v := oneshot_ratio(r, s)) is not None else "-" for s in oneshot_sizes]
        cells += [", ".join(r["constructs"]), "; ".join(r["notes"])]
        L.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    L.append("")
    return L


def _worst_lists(rows: dict[str, dict[str, Any]], sizes: list[int], oneshot_sizes: list[int]) -> list[str]:
    L = ["### The worst templates, and what they are made of\n"]

    def listing(title: str, ranked: list[tuple[str, str]]) -> None:
        L.append(f"**{title}**\n")
        for m, value in ranked[:10]:
            L.append(f"- {m}: {value} ({', '.join(rows[m]['constructs'])})")
        L.append("")

    listing(
        "Streaming 4 KB, compiled / bound, highest",
        [(m, f"{fmt(bound_ratio(r))}x") for m, r in sorted(rows.items(), key=lambda mr: -bound_ratio(mr[1]))],
    )
    big = max(sizes)

    def grown(r: dict[str, Any]) -> float:
        return float(max(r["growth"].values(), default=0.0)) * (1e6 if r["stopped"] else 1)

    listing(
        f"Per-chunk growth up to {size_label(big)}, highest (stopped streams first)",
        [
            (m, ", ".join(f"{size_label(s)} {growth_text(r, s)}" for s in r["growth"]) or "not timed (see its notes)")
            for m, r in sorted(rows.items(), key=lambda mr: -grown(mr[1]))
        ],
    )
    for size in oneshot_sizes:
        ranked = sorted(
            ((m, v) for m, r in rows.items() if (v := oneshot_ratio(r, size)) is not None), key=lambda mv: mv[1]
        )
        listing(f"One-shot {size_label(size)}, transformers / compiled, lowest", [(m, f"{fmt(v)}x") for m, v in ranked])
    return L


def _construct_table(rows: dict[str, dict[str, Any]], sizes: list[int], oneshot_sizes: list[int]) -> list[str]:
    """Per construct: how the templates that have it fare (a template counts for each of its constructs)."""
    having: dict[str, list[str]] = defaultdict(list)
    for m, r in rows.items():
        for construct in dict.fromkeys(c for written in r["constructs"] for c in written.split(", ")):
            having[construct].append(m)
    big, last = max(sizes), max(oneshot_sizes)
    L = ["### By construct\n"]
    L.append(
        f"Per construct, over the templates that have it: their median and worst compiled / bound at 4 KB, how many "
        f"grow more than {FLAT}x by {size_label(big)} (or were stopped), and the lowest one-shot transformers / compiled at "
        f"{size_label(last)}. A construct shared by slow and fast templates is not the cause by itself: compare with "
        "the lists above.\n"
    )
    L.append(
        f"| construct | templates | median compiled / bound | worst | growing > {FLAT}x | lowest one-shot {size_label(last)} |"
    )
    L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for construct, models in sorted(
        having.items(), key=lambda cm: -statistics.median(bound_ratio(rows[m]) for m in cm[1])
    ):
        ratios = [bound_ratio(rows[m]) for m in models]
        growing = sum(1 for m in models if rows[m]["stopped"] or max(rows[m]["growth"].values(), default=0.0) > FLAT)
        oneshot = [v for m in models if (v := oneshot_ratio(rows[m], last)) is not None]
        L.append(
            f"| {construct.replace('|', chr(92) + '|')} | {len(models)} | {fmt(statistics.median(ratios))}x | {fmt(max(ratios))}x | "
            f"{growing} | {fmt(min(oneshot)) + 'x' if oneshot else '-'} |"
        )
    L.append("")
    return L
