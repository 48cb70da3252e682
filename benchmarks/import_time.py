"""Import cost, measured in fresh interpreters: generated modules (bytecode cached and not), the
interpreter package, and `transformers.utils.chat_parsing`.

Bytecode: the environment may set PYTHONDONTWRITEBYTECODE (then no `.pyc` is ever written, and every import
compiles its source: the "cold" case everywhere). So the subprocesses run with PYTHONPYCACHEPREFIX set to
a temporary directory and PYTHONDONTWRITEBYTECODE unset: one untimed import of each measured module first
writes the bytecode of it and of everything it imports there ("warm": the deployed case, bytecode cached),
and the timed imports run with `-B`, which reads cached bytecode but writes none. The "cold" copies of the
generated modules sit in another directory that is never imported without `-B`, so their bytecode is
never cached (their standard-library imports still are, as in a deployment whose own module is new).
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.config import ROOT, Config

IMPORT_SNIPPET = """
import sys, time
sys.path.insert(0, {directory!r})
t0 = time.perf_counter()
import {module}
print(time.perf_counter() - t0)
"""

# How much of a module's own import is spent in `re.compile` (its stdlib dependencies are imported before `re` is
# patched, so only the module body's calls count; no wall time is taken from this run).
REGEX_SNIPPET = """
import re, sys, time
{deps}  # its top-level imports first: count the module's own re.compile calls only
sys.path.insert(0, {directory!r})
spent = [0.0, 0]
original = re.compile
def timed(*args, **kwargs):
    t0 = time.perf_counter()
    try:
        return original(*args, **kwargs)
    finally:
        spent[0] += time.perf_counter() - t0
        spent[1] += 1
re.compile = timed
import {module}
print(spent[0], spent[1])
"""


def module_imports(path: Path) -> tuple[str, ...]:
    """The modules a generated module imports at its top level (its `import X` / `from X import` lines)."""
    names: list[str] = []
    for m in re.finditer(r"^(?:import ([\w.]+)|from ([\w.]+) import)", path.read_text(encoding="utf-8"), re.M):
        name = m.group(1) or m.group(2)
        if name != "__future__" and name not in names:
            names.append(name)
    return tuple(names)


def _import_line(path: Path) -> str:
    deps = module_imports(path)
    return f"import {', '.join(deps)}" if deps else "pass"


def _run(snippet: str, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *flags, "-c", snippet], capture_output=True, text=True, env=env, check=True)


def _import_wall(module: str, directory: Path, env: dict[str, str]) -> float:
    """Seconds of the `import` statement in a fresh interpreter (no -X importtime: it adds its own overhead)."""
    proc = _run(IMPORT_SNIPPET.format(directory=str(directory), module=module), env, "-B")
    return float(proc.stdout.strip().splitlines()[-1])


def _import_self(module: str, directory: Path, env: dict[str, str]) -> float:
    """`-X importtime` self time of `module` (its own body, without the modules it imports), in seconds."""
    proc = _run(IMPORT_SNIPPET.format(directory=str(directory), module=module), env, "-B", "-X", "importtime")
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == module:
            return int(parts[0].split(":")[1]) / 1e6
    return float("nan")


def _prime(module: str, directory: Path, env: dict[str, str]) -> None:
    """Import `module` once without `-B`, so its bytecode and its imports' is written under the cache prefix."""
    _run(f"import sys; sys.path.insert(0, {str(directory)!r}); import {module}", env)


def bench_imports(cfg: Config, models: list[str], directory: Path) -> dict[str, Any]:
    """Fresh subprocesses; generated modules with their bytecode cached (the deployed case) and without."""
    cache = directory / "pycache"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    warm = directory / "warm"
    cold = directory / "cold"
    warm.mkdir()
    cold.mkdir()
    # --quick measures a few modules; with --models, only those of them that were compiled.
    chosen = [m for m in cfg.import_models if m in models] or models if cfg.import_models else models
    for model in chosen:
        for d in (warm, cold):
            shutil.copy(directory / f"rtc_{model}.py", d / f"rtc_{model}.py")
        _prime(f"rtc_{model}", warm, env)
    for module in ("transformers.utils.chat_parsing", "rtcompile"):
        _prime(module, ROOT, env)
    out: dict[str, Any] = {"modules": {}, "bytecode": f"cached under PYTHONPYCACHEPREFIX={cache.name}/ (temporary)"}
    for model in chosen:
        name = f"rtc_{model}"
        row: dict[str, list[float]] = {"warm_wall": [], "warm_self": [], "cold_wall": [], "cold_self": []}
        for _ in range(cfg.import_runs):  # interleaved: warm, cold, warm, cold ...
            row["warm_wall"].append(_import_wall(name, warm, env))
            row["cold_wall"].append(_import_wall(name, cold, env))
            row["warm_self"].append(_import_self(name, warm, env))
            row["cold_self"].append(_import_self(name, cold, env))
        regex = [
            _run(
                REGEX_SNIPPET.format(directory=str(warm), module=name, deps=_import_line(warm / f"{name}.py")),
                env,
                "-B",
            ).stdout.split()
            for _ in range(3)
        ]
        result: dict[str, Any] = {k: statistics.median(v) for k, v in row.items()}
        # Where each copy's bytecode would be (the prefix mirrors the source's absolute directory).
        result["warm_cached"] = any((cache / warm.relative_to(warm.anchor)).glob(f"{name}.*.pyc"))
        result["cold_cached"] = any((cache / cold.relative_to(cold.anchor)).glob(f"{name}.*.pyc"))
        result["regex"] = statistics.median(float(r[0]) for r in regex)
        result["regex_count"] = int(regex[0][1])
        out["modules"][model] = result
    runs = max(3, cfg.import_runs // 2)
    for label, module in (("transformers", "transformers.utils.chat_parsing"), ("interpreter", "rtcompile")):
        out[label] = statistics.median(_import_wall(module, ROOT, env) for _ in range(runs))
    stdlib_deps = module_imports(directory / f"rtc_{chosen[0]}.py")
    out["stdlib_deps"] = ", ".join(stdlib_deps)
    deps: dict[str, float] = {}
    for dep in (", ".join(stdlib_deps), *stdlib_deps):
        snippet = f"import time; t0 = time.perf_counter(); import {dep}; print(time.perf_counter() - t0)"
        deps[dep] = statistics.median(float(_run(snippet, env, "-B").stdout) for _ in range(cfg.import_runs))
    out["stdlib"] = deps
    return out
