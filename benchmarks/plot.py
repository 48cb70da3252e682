"""per_chunk_cost.png: streaming cost per chunk against output size, median and range over templates."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from benchmarks.config import KB, Config, log, size_label


def plot(cfg: Config, models: list[str], per_chunk: dict[int, Any], path: Path) -> bool:
    """Draw the plot; False (and nothing written) if matplotlib is not installed (`pip install -e '.[bench]'`)."""
    try:
        import matplotlib
    except ModuleNotFoundError:
        log("matplotlib is not installed (pip install -e '.[bench]'): no plot")
        return False

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10.5, 5.5))
    styles = {"compiled": ("C0", "o"), "interpreter": ("C1", "s"), "transformers": ("C3", "^"), "floor": ("0.4", "x")}
    for e, (color, marker) in styles.items():
        xs, meds, los, his = [], [], [], []
        for size in cfg.sizes:
            values = [per_chunk[size][m][e] for m in models if e in per_chunk[size].get(m, {})]
            if not values:
                continue
            xs.append(size / KB)
            meds.append(statistics.median(values))
            los.append(min(values))
            his.append(max(values))
        if not xs:
            continue
        ax.plot(xs, meds, marker=marker, color=color, label=f"{e} (median over templates)")
        ax.fill_between(xs, los, his, color=color, alpha=0.12)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("output size (KB, log)")
    ax.set_ylabel("us per chunk (log)")
    ax.set_title(
        f"Streaming cost per token-like chunk (1-6 chars), {len(models)} templates\n"
        "(line: median, band: min-max; transformers and the interpreter do not stream 4 MB)"
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
