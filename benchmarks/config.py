"""Where things are, the units, and how much each stage of a run measures (full run, `--quick` or `--targets-only`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
DATA = ROOT / "tests" / "data"

KB = 1024
MB = 1024 * 1024

ALL_ENGINES = ("compiled", "interpreter", "transformers")
MODES = ("full", "quick", "targets")


def log(*args: Any) -> None:
    print(*args, file=sys.stderr, flush=True)


def size_label(size: float) -> str:
    """1 KB, 4 KB, 102 KB, 400 KB, 1 MB, 10 MB (sizes within 0.5% of a whole MB count as that MB)."""
    if size >= 0.995 * MB:
        return f"{size / MB:.0f} MB" if abs(size / MB - round(size / MB)) < 0.005 * size / MB else f"{size / MB:.2f} MB"
    return f"{size / KB:.0f} KB" if size >= 10 * KB else f"{size / KB:.3g} KB"


class Config:
    """Sizes and repetitions of every stage.

    * `full`: everything, every target measured on every template where the brief allows (about 20 minutes
      on 2 cores);
    * `quick`: smaller sizes and fewer repetitions, to check that the benchmark runs (a few minutes);
    * `targets`: only what the targets table needs (compiled, transformers and the floor; no interpreter,
      adversarial streams, regex translation or profile), at the full run's sizes.
    """

    def __init__(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(mode)
        self.mode = mode
        self.quick = mode == "quick"
        # Per-chunk speed targets are judged at `headline`; "flat" compares `flat_big` with `flat_small`.
        self.headline = 4 * KB
        self.flat_small = 4 * KB
        self.engines: tuple[str, ...] = ("compiled", "transformers") if mode == "targets" else ALL_ENGINES
        # Engines streamed at each size (default: all of `engines`). transformers' cost per chunk grows with
        # its untrimmed buffer and the interpreter is several times slower than compiled: only compiled (and
        # the floor) stream 4 MB, and the quick run's 400 KB.
        self.engines_at: dict[int, tuple[str, ...]] = {4 * MB: ("compiled",)}
        if mode == "quick":
            self.sizes = [4 * KB, 40 * KB, 400 * KB]
            self.engines_at[400 * KB] = ("compiled",)
            self.reps = 2
            self.tf_reps: dict[int, int] = {}
            self.chunks_per_sample = {4 * KB: 12000, 40 * KB: 12000, 400 * KB: 1}
            self.memory_size = 256 * KB
            self.memory_size_small = 256 * KB
            self.oneshot_sizes = [4 * KB, 400 * KB]
            self.oneshot_reps = {4 * KB: 5, 400 * KB: 3}
            self.concurrent_parsers = 200
            self.concurrent_reps = 1
            self.concurrent_max_models: int | None = 3
            self.adv_total = 100 * KB
            self.adv_tf_total = 10 * KB
            self.import_runs = 3
            self.import_models: list[str] | None = ["qwen3", "gpt_oss", "gemma4"]
            self.profile_size = 16 * KB
            self.regex_reps = 3
        else:
            targets = mode == "targets"
            self.sizes = [4 * KB, 4 * MB] if targets else [1 * KB, 4 * KB, 40 * KB, 400 * KB, 4 * MB]
            self.reps = 3
            self.tf_reps = {400 * KB: 1}  # one transformers 400 KB stream takes ~3 s (its cost grows with the buffer)
            # Each timed sample streams about this many chunks (a small output through that many fresh parsers
            # back to back); 400 KB and 4 MB outputs are one parser per sample (117 K and 1.2 M chunks).
            self.chunks_per_sample = {1 * KB: 12000, 4 * KB: 72000, 40 * KB: 36000, 400 * KB: 1, 4 * MB: 1}
            self.memory_size = 10 * MB
            self.memory_size_small = 1 * MB
            self.oneshot_sizes = [4 * KB, 400 * KB] if targets else [4 * KB, 40 * KB, 400 * KB, 4 * MB]
            self.oneshot_reps = {4 * KB: 15, 40 * KB: 15, 400 * KB: 9, 4 * MB: 3}
            self.concurrent_parsers = 1000
            self.concurrent_reps = 3
            self.concurrent_max_models = None
            self.adv_total = 1 * MB  # 10 segments of ~100 KB
            self.adv_tf_total = 100 * KB  # 10 segments of 10 KB
            self.import_runs = 4
            self.import_models = None  # all
            self.profile_size = 64 * KB
            self.regex_reps = 7
        # the unseen set (`unseen`): every random template, or every `unseen_random_step`-th; the rewrites of
        # `unseen_rewritten` (None: of every bundled template); big sizes streamed against 4 KB; one-shot sizes
        # (40 KB also keeps an engine that is quadratic on a template from running it at 400 KB and 4 MB)
        if self.quick:
            self.unseen_random_step = 6
            self.unseen_rewritten: list[str] | None = ["deepseek_r1", "gpt_oss", "kimi_k2", "llama3_1", "qwen3"]
            self.unseen_big = [256 * KB]
            self.unseen_oneshot_reps = {4 * KB: 5, 40 * KB: 3, 400 * KB: 3}
        else:
            self.unseen_random_step = 1
            self.unseen_rewritten = None
            self.unseen_big = [1 * MB, 4 * MB]
            self.unseen_oneshot_reps = {4 * KB: 9, 40 * KB: 5, 400 * KB: 5, 4 * MB: 3}
        # compile time (`compile_time`): literals per template, for a field's delimiters and a `defaults` list
        self.compile_sizes = {
            "literal delimiters": [1, 10, 100, 1000] if self.quick else [1, 10, 100, 1000, 10000],
            "defaults list": [1, 100, 1000, 10000] if self.quick else [1, 100, 1000, 10000, 40000],
        }
        self.compile_reps = 3 if self.quick else 5
        self.adv_segments = 10
        self.flat_big = max(self.sizes)  # "flat" compares the per-chunk cost here with the one at `flat_small`

    def engines_for(self, size: int) -> tuple[str, ...]:
        """The engines streamed at `size` (always in the order of `self.engines`)."""
        allowed = self.engines_at.get(size, self.engines)
        return tuple(e for e in self.engines if e in allowed)

    @property
    def with_interpreter(self) -> bool:
        return "interpreter" in self.engines
