"""What changed in the reference since 5.24.0: the installed transformers' response-parsing code against
fingerprints recorded from transformers 5.24.0 (tools/reference_fingerprints.json).

rtcompile reproduces transformers' response parsing (`transformers.utils.chat_parsing`), its tool-schema
conversion and chat-template rendering (`transformers.utils.chat_template_utils`) and the tokenizer methods
that call them. Moving the oracle to a new release starts from the list this prints, not from a guess:

    pip install 'transformers==NEW'         # in a scratch environment
    python -m tools.reference_diff          # changed / added / removed definitions, exit 1 if any

Each definition (a module-level function, class, method, import or assignment) is fingerprinted by the SHA-256
of its normalised source (`ast.unparse` of its AST without docstrings), so formatting, comments
and documentation edits do not count, while any change to code, defaults, annotations, decorators or
constants does. `--root DIR` reads another copy of the sources (a directory holding `transformers/`);
`--record` rewrites the fingerprint file from what is read (the last step of moving the oracle).
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import importlib.util
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

FINGERPRINTS = Path(__file__).resolve().parent / "reference_fingerprints.json"

#: The modules whose every definition is fingerprinted, as paths inside the `transformers` package.
WHOLE_MODULES = (
    "utils/chat_parsing/__init__.py",
    "utils/chat_parsing/content_parsers.py",
    "utils/chat_parsing/response_parser.py",
    "utils/chat_parsing/response_templates.py",
    "utils/chat_template_utils.py",
)

#: Methods of a larger module that reach the code above (the tokenizer's chat and parsing entry points).
METHODS = {
    "tokenization_utils_base.py": {
        "PreTrainedTokenizerBase": (
            "apply_chat_template",
            "get_chat_template",
            "parse_response",
            "get_response_parser",
        ),
    },
}


@dataclass(frozen=True)
class Difference:
    kind: str  # "changed", "added" or "removed"
    name: str  # "module/path.py:Qualified.name"

    def __str__(self) -> str:
        return f"{self.kind:8} {self.name}"


def fail(message: str) -> NoReturn:
    """One line on stderr and exit status 2, as for the project's other command-line errors."""
    print(f"reference_diff: {message}", file=sys.stderr)
    raise SystemExit(2)


def transformers_root(root: str | None) -> Path:
    """The `transformers` package directory: under `root`, or the installed one (found without importing it)."""
    if root is not None:
        directory = Path(root) / "transformers"
        if not directory.is_dir():
            fail(f"{root}: no transformers/ directory there")
        return directory
    spec = importlib.util.find_spec("transformers")
    if spec is None or spec.origin is None:
        fail("transformers is not installed (pip install -e '.[test]')")
    return Path(spec.origin).parent


def installed_version(package: Path) -> str:
    """The version a transformers source tree declares (its `__version__` assignment)."""
    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return "unknown"


def _without_docstring(node: ast.AST) -> ast.AST:
    """A copy of `node` whose own docstring (and those of the functions and classes in it) is gone."""
    node = copy.deepcopy(node)
    for inner in ast.walk(node):
        body = getattr(inner, "body", None)
        if (
            isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            inner.body = body[1:] or [ast.Pass()]
    return node


def fingerprint(node: ast.AST) -> str:
    # `ast.unparse`, not `ast.dump`: the source it prints is the same on every Python version, where the
    # node fields that `dump` shows grow from version to version.
    normalised = ast.unparse(_without_docstring(node))
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def _assigned_names(node: ast.stmt) -> list[str]:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    names = []
    for target in targets:
        names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return names


def definitions(body: Sequence[ast.stmt], prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) for every function, class, method, import and assigned name in `body`. A class
    gives its own entry (bases, decorators, class-level statements) and one per method. Other statements
    (an `if TYPE_CHECKING:` block, a bare call) are not fingerprinted."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
        elif isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            shell = copy.copy(node)
            shell.body = [n for n in node.body if n not in methods] or [ast.Pass()]
            yield prefix + node.name, shell
            yield from definitions(methods, f"{prefix}{node.name}.")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:  # `import regex as re` -> `re`: which library a name is matters
                yield prefix + (alias.asname or alias.name), node
        else:
            for name in _assigned_names(node):
                yield prefix + name, node


def read_fingerprints(package: Path) -> dict[str, str]:
    """{"path.py:Qualified.name": fingerprint} for the watched code of a transformers source tree."""
    found: dict[str, str] = {}
    for relative in WHOLE_MODULES:
        path = package / relative
        if not path.is_file():
            continue  # the module is gone: each of its definitions is reported as removed
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, node in definitions(tree.body):
            found[f"{relative}:{name}"] = fingerprint(node)
    for relative, classes in METHODS.items():
        path = package / relative
        if not path.is_file():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name in classes:
                for name, method in definitions(node.body, f"{node.name}."):
                    if name.split(".")[-1] in classes[node.name]:
                        found[f"{relative}:{name}"] = fingerprint(method)
    return found


def compare(recorded: dict[str, str], current: dict[str, str]) -> list[Difference]:
    differences = [
        Difference("changed", n) for n in sorted(recorded.keys() & current.keys()) if recorded[n] != current[n]
    ]
    differences += [Difference("added", n) for n in sorted(current.keys() - recorded.keys())]
    differences += [Difference("removed", n) for n in sorted(recorded.keys() - current.keys())]
    return differences


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.reference_diff", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root", help="a directory holding the transformers/ sources to read (default: the installed one)"
    )
    parser.add_argument("--fingerprints", default=str(FINGERPRINTS), help="the recorded fingerprints (JSON)")
    parser.add_argument("--record", action="store_true", help="write the fingerprints of what is read instead")
    args = parser.parse_args(argv)
    package = transformers_root(args.root)
    version = installed_version(package)
    current = read_fingerprints(package)
    if args.record:
        document = {"transformers": version, "fingerprints": dict(sorted(current.items()))}
        Path(args.fingerprints).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        print(f"recorded {len(current)} definitions of transformers {version} in {args.fingerprints}")
        return 0
    document = json.loads(Path(args.fingerprints).read_text(encoding="utf-8"))
    differences = compare(document["fingerprints"], current)
    print(f"transformers {version} ({package}) against the recorded {document['transformers']}:")
    for difference in differences:
        print(f"  {difference}")
    if not differences:
        print(f"  no differences in {len(current)} definitions")
        return 0
    counts = {kind: sum(d.kind == kind for d in differences) for kind in ("changed", "added", "removed")}
    print("  " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
    return 1


if __name__ == "__main__":
    sys.exit(main())
