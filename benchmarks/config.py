"""Where things are, the units, and how much each stage of a run measures (full run or `--quick`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
DATA = ROOT / "tests" / "data"

KB = 1024
MB = 1024 * 1024


def log(*args: Any) -> None:
    print(*args, file=sys.stderr, flush=True)


def size_label(size: float) -> str:
    """1 KB, 4 KB, 102 KB, 400 KB, 1 MB, 10 MB (sizes within 0.5% of a whole MB count as that MB)."""
    if size >= 0.995 * MB:
        return f"{size / MB:.0f} MB" if abs(size / MB - round(size / MB)) < 0.005 * size / MB else f"{size / MB:.2f} MB"
    return f"{size / KB:.0f} KB" if size >= 10 * KB else f"{size / KB:.3g} KB"


class Config:
    """Sizes and repetitions of every stage: the full run, or `--quick` (a run of under 2 minutes)."""

    def __init__(self, quick: bool) -> None:
        self.quick = quick
        if quick:
            self.sizes = [1 * KB, 4 * KB, 40 * KB]
            self.reps = 2
            self.tf_reps: dict[int, int] = {}
            self.chunks_per_sample = {1 * KB: 6000, 4 * KB: 12000, 40 * KB: 12000}
            self.flat_big = 40 * KB
            self.memory_size = 256 * KB
            self.memory_size_small = 256 * KB
            self.oneshot_sizes = [4 * KB]
            self.oneshot_reps = 5
            self.adv_total = 100 * KB
            self.adv_tf_total = 10 * KB
            self.adv_segments = 10
            self.import_runs = 3
            self.import_models: list[str] | None = ["qwen3", "gpt_oss", "gemma4"]
            self.profile_size = 16 * KB
            self.regex_reps = 3
        else:
            self.sizes = [1 * KB, 4 * KB, 40 * KB, 400 * KB]
            self.reps = 3
            self.tf_reps = {400 * KB: 2}  # transformers' 400 KB runs take ~3 s each (its cost grows with the buffer)
            self.chunks_per_sample = {1 * KB: 12000, 4 * KB: 24000, 40 * KB: 24000, 400 * KB: 1}
            self.flat_big = 400 * KB
            self.memory_size = 10 * MB
            self.memory_size_small = 1 * MB
            self.oneshot_sizes = [4 * KB, 400 * KB]
            self.oneshot_reps = 15
            self.adv_total = 1 * MB  # 10 segments of ~100 KB
            self.adv_tf_total = 100 * KB  # 10 segments of 10 KB
            self.adv_segments = 10
            self.import_runs = 4
            self.import_models = None  # all
            self.profile_size = 64 * KB
            self.regex_reps = 7
        # compile time (`compile_time`): literals per template, for a field's delimiters and a `defaults` list
        self.compile_sizes = {
            "literal delimiters": [1, 10, 100, 1000] if quick else [1, 10, 100, 1000, 10000],
            "defaults list": [1, 100, 1000, 10000] if quick else [1, 100, 1000, 10000, 40000],
        }
        self.compile_reps = 3 if quick else 5
        self.flat_small = 4 * KB
        self.headline = 4 * KB  # per-chunk speed targets are judged at this output size
