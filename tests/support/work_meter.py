"""A structural work meter: how many characters a generated module's string work spans, without a timer.

`metered_module(source)` loads a generated module with its syntax tree rewritten so that every

* call of `.find .rfind .index .rindex .count .startswith .endswith` on a `str`,
* call of `.search .match .fullmatch .finditer .findall .split .sub .subn` on a compiled pattern
  (stdlib `re` or the `regex` module),
* `in` / `not in` test whose right-hand side is a `str`,
* slice of a `str`, and `+` / `+=` that builds a `str`

goes through its `WorkMeter`, which adds the characters the operation spans:

* a `str` search from `start`: up to the end of what it found, or to its `end` (the end of the
  string) when it found nothing, since it had to look at every position;
* an anchored `match`/`fullmatch` that fails: up to and including the first character after which
  no match can start at `pos` whatever follows (found with `regex`'s partial matching), so a
  rejected candidate `<tool` costs a few characters while a lazy lookahead that reads to the end
  costs the rest of the text; one that matches: up to its end;
* a pattern `search`: what a failed `match` costs at each start position before the match (all of them
  to `endpos` when there is none; estimated from a few starts on long spans), plus the match: mostly
  one character per position, but a search that is quadratic inside `re` (a lazy lookahead reading to
  the end from every position) counts quadratically; a `regex` partial match counts to the end;
* `startswith`/`endswith`: the length of the affix (each one of a tuple);
* a copy (slice, `+`, `+=`): the length of the new string (a slice that returns the string itself
  copies nothing).

So the total per fed character is a measure of the scanning work that does not depend on the
machine's load: a parser that rescans held text, searches a growing buffer or copies the stream on
every feed has a per-character total that grows with the stream; a linear one does not.

What is not counted: `str.join` and the other string methods (`.strip()`, `.split`), `json.loads` and
module-level `re` functions (content parsing, once per region), and backtracking beyond what partial
matching says an attempt must read. The work of closing a region (content parsing, storing the value)
and of sealing kept chunks into blocks (a region's body, the text a wait keeps) is counted apart
(`WorkMeter.assembly`): it is linear up to a log factor by design and not what scanning does. The
benchmarks time what the meter misses.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

import regex

STR_SEARCHES = frozenset({"find", "rfind", "index", "rindex", "count", "startswith", "endswith"})
PATTERN_SEARCHES = frozenset({"search", "match", "fullmatch", "finditer", "findall", "split", "sub", "subn"})
METERED_METHODS = STR_SEARCHES | PATTERN_SEARCHES

_PATTERN_TYPES = (re.Pattern, type(regex.compile("")))
_REGEX_FLAGS = {re.IGNORECASE: regex.IGNORECASE, re.MULTILINE: regex.MULTILINE, re.DOTALL: regex.DOTALL}
_REGEX_FLAGS |= {re.VERBOSE: regex.VERBOSE, re.ASCII: regex.ASCII}

# The engine's methods whose work is value assembly rather than scanning (see `WorkMeter`), and the module's
# functions: `seal` joins kept chunks into blocks, for a region's body (`_seal_body`) and for the text a wait keeps
# (`Wait.arrived`, which reads no chunk that cannot complete an awaited string: sealing is then all it does).
ASSEMBLY = ("_close_current", "_seal_body")
ASSEMBLY_FUNCTIONS = ("seal",)
# The names the rewritten module calls (module globals; dunder names are never mangled in classes).
CALL, CONTAINS, SLICE, ADD, IADD = (
    "__meter_call__",
    "__meter_in__",
    "__meter_slice__",
    "__meter_add__",
    "__meter_iadd__",
)


@dataclass(frozen=True)
class Site:
    """One metered operation in the module's source."""

    line: int
    operation: str  # "buf.find", "in", "[:]", "+", "+="

    def __str__(self) -> str:
        return f"l.{self.line} {self.operation}"


class WorkMeter:
    """Counts characters per `Site`, in two accounts: `scanning` (everything but what follows) and
    `assembly` (what runs under the engine's `ASSEMBLY` methods and the module's `ASSEMBLY_FUNCTIONS`:
    closing a region, which parses its content and stores the value, and sealing kept chunks into blocks).
    `reset()` before each measured stream."""

    def __init__(self, sites: list[Site]) -> None:
        self.sites = sites
        self.scanning: Counter[int] = Counter()
        self.assembly: Counter[int] = Counter()
        self.chars = self.scanning  # the account the hooks add to

    def reset(self) -> None:
        self.scanning.clear()
        self.assembly.clear()
        self.chars = self.scanning

    def by_site(self, account: Counter[int]) -> list[tuple[Site, int]]:
        """The sites that did any work in `account`, the busiest first."""
        return [(self.sites[site], chars) for site, chars in account.most_common()]

    def charged_to_assembly(self, method: Callable[..., Any]) -> Callable[..., Any]:
        """`method`, with the work done under it (however deep) added to `assembly`."""

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            outer, self.chars = self.chars, self.assembly
            try:
                return method(*args, **kwargs)
            finally:
                self.chars = outer

        return wrapper

    # -- the hooks the rewritten module calls

    def call(self, site: int, obj: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        result = getattr(obj, name)(*args, **kwargs)
        if type(obj) is str and name in STR_SEARCHES:
            self.chars[site] += _str_search_span(obj, name, result, *args)
        elif isinstance(obj, _PATTERN_TYPES) and name in PATTERN_SEARCHES:
            if name == "finditer":
                return self._finditer(site, result, *_span_bounds(args, kwargs, 1))
            self.chars[site] += _pattern_span(obj, name, result, args, kwargs)
        return result

    def contains(self, site: int, needle: Any, haystack: Any) -> bool:
        if type(haystack) is not str:
            return needle in haystack
        at = haystack.find(needle)
        self.chars[site] += len(haystack) if at < 0 else at + len(needle)
        return at >= 0

    def slice(self, site: int, obj: Any, lower: Any, upper: Any, step: Any) -> Any:
        result = obj[lower:upper:step]
        if type(result) is str and result is not obj:
            self.chars[site] += len(result)
        return result

    def add(self, site: int, left: Any, right: Any) -> Any:
        result = left + right
        if type(result) is str:
            self.chars[site] += len(result)
        return result

    def iadd(self, site: int, target: Any, value: Any) -> Any:
        target += value  # in place for a list, as the statement it replaces
        if type(target) is str:
            self.chars[site] += len(target)
        return target

    def _finditer(self, site: int, matches: Iterator[Any], pos: int, endpos: int) -> Iterator[Any]:
        reached = pos
        for m in matches:
            self.chars[site] += m.end() - reached
            reached = m.end()
            yield m
        self.chars[site] += endpos - reached


def _bounds(length: int, start: Any, end: Any) -> tuple[int, int]:
    """`start` and `end` as a slice would clamp them (None, negative, beyond the end)."""
    return slice(start, end).indices(length)[:2]


def _str_search_span(text: str, name: str, result: Any, sub: Any, start: Any = None, end: Any = None) -> int:
    lo, hi = _bounds(len(text), start, end)
    if name in ("startswith", "endswith"):
        affixes = sub if isinstance(sub, tuple) else (sub,)
        return sum(min(len(a), max(0, hi - lo)) for a in affixes)
    if name == "count" or result == -1 or result is None:
        return max(0, hi - lo)
    found = int(result)
    if name in ("rfind", "rindex"):
        return hi - found
    return found + len(sub) - lo


def _span_bounds(args: tuple[Any, ...], kwargs: dict[str, Any], first: int) -> tuple[int, int]:
    """(pos, endpos) of a pattern method whose string is `args[first - 1]`."""
    string = args[first - 1] if len(args) >= first else kwargs.get("string", "")
    pos = args[first] if len(args) > first else kwargs.get("pos", 0)
    endpos = args[first + 1] if len(args) > first + 1 else kwargs.get("endpos", len(string))
    return _bounds(len(string), pos, endpos)


def _pattern_span(pattern: Any, name: str, result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    if name in ("sub", "subn"):  # (repl, string, count)
        string = args[1] if len(args) > 1 else kwargs["string"]
        return len(string)
    if name in ("findall", "split"):
        return len(args[0] if args else kwargs["string"])
    pos, endpos = _span_bounds(args, kwargs, 1)
    string = args[0] if args else kwargs["string"]
    if name == "search":  # the starts before the match (all of them without one) failed
        stop = endpos if result is None else int(result.start())
        partial = getattr(result, "partial", False)
        matched = 0 if result is None else max(1, (endpos if partial else int(result.end())) - stop)
        return failed_starts_span(pattern, string, pos, stop, endpos) + matched
    if result is None:
        return failed_match_span(pattern, string, pos, endpos)
    return max(1, int(result.end()) - pos)


SAMPLED_STARTS = 8


def failed_starts_span(pattern: Any, string: str, start: int, stop: int, endpos: int) -> int:
    """What a search spends on the start positions `start` to `stop` where no match starts: each costs
    `failed_match_span`, summed (on long spans: estimated from the midpoints of `SAMPLED_STARTS` equal
    parts). Mostly one character each; the rest of a run for a pattern that opens with a repeat over it
    (`[^<]*</x>`), and the rest of the text for a lookahead that reads to the end (`(?=.*?</think>)`), so
    a search that is quadratic inside `re` counts quadratically."""
    width = stop - start
    if width <= SAMPLED_STARTS:
        return sum(failed_match_span(pattern, string, i, endpos) for i in range(start, stop))
    starts = [start + (2 * k + 1) * width // (2 * SAMPLED_STARTS) for k in range(SAMPLED_STARTS)]  # midpoints
    return round(width * sum(failed_match_span(pattern, string, i, endpos) for i in starts) / SAMPLED_STARTS)


def failed_match_span(pattern: Any, string: str, pos: int, endpos: int) -> int:
    """How far an anchored match at `pos` must read to fail: up to and including the first character
    after which `regex`'s partial matching says no match can start at `pos` (or to `endpos`)."""
    probe = _partial_twin(pattern)

    def viable(end: int) -> bool:
        return probe.match(string, pos, end, partial=True) is not None

    if viable(endpos):
        return endpos - pos
    good, bad = pos, pos + 1  # viable(good), not viable(bad): first widen, then bisect
    while bad < endpos and viable(bad):
        good, bad = bad, min(endpos, pos + 2 * (bad - pos))
    while bad - good > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if viable(middle) else (good, middle)
    return bad - pos


_TWINS: dict[tuple[str, int], Any] = {}


def _partial_twin(pattern: Any) -> Any:
    """`pattern` as a `regex` pattern (which can match partially); a `regex` pattern is its own twin."""
    if not isinstance(pattern, re.Pattern):
        return pattern
    key = (pattern.pattern, pattern.flags)
    if key not in _TWINS:
        flags = sum(ours for theirs, ours in _REGEX_FLAGS.items() if pattern.flags & theirs)
        _TWINS[key] = regex.compile(pattern.pattern, flags)
    return _TWINS[key]


# =============================================================================================== the rewrite


def _is_number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


_Node = TypeVar("_Node", bound=ast.AST)


def _at(new: _Node, old: ast.AST) -> _Node:
    """`new` (a node the rewrite built around parts of `old`) located where `old` is. Only the nodes built
    are located, not the parts reused (located already): `ast.fix_missing_locations` would walk the whole
    module, which was a sixth of the meter's time."""
    stack: list[ast.AST] = [new]
    while stack:
        node = stack.pop()
        if "lineno" in node._attributes and not hasattr(node, "lineno"):
            ast.copy_location(node, old)
            stack.extend(ast.iter_child_nodes(node))
        elif not node._attributes:  # an operator or a context: located by its parent
            stack.extend(ast.iter_child_nodes(node))
    return new


class _Metering(ast.NodeTransformer):
    """Routes the operations listed in the module docstring through the meter's hooks; annotations are
    left alone (they are never evaluated, and some are subscripts)."""

    def __init__(self) -> None:
        self.sites: list[Site] = []

    def _hook(self, name: str, node: ast.AST, operation: str, args: list[ast.expr], **kw: Any) -> ast.Call:
        self.sites.append(Site(getattr(node, "lineno", 0), operation))
        site = ast.Constant(len(self.sites) - 1)
        return _at(ast.Call(ast.Name(name, ast.Load()), [site, *args], kw.get("keywords", [])), node)

    def visit_arg(self, node: ast.arg) -> ast.arg:
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AnnAssign:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        returns, node.returns = node.returns, None
        self.generic_visit(node)
        node.returns = returns
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        label = ast.unparse(node.func)[:40]
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in METERED_METHODS:
            args = [func.value, ast.Constant(func.attr), *node.args]
            return self._hook(CALL, node, label, args, keywords=node.keywords)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        membership = [op for op in node.ops if isinstance(op, (ast.In, ast.NotIn))]
        if not membership:
            return node
        if len(node.ops) > 1:
            raise NotImplementedError(f"line {node.lineno}: a chained comparison with `in` is not metered")
        test = self._hook(CONTAINS, node, "in", [node.left, node.comparators[0]])
        return _at(ast.UnaryOp(ast.Not(), test), node) if isinstance(node.ops[0], ast.NotIn) else test

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.slice, ast.Slice) or not isinstance(node.ctx, ast.Load):
            return node
        bounds = [
            b if b is not None else ast.Constant(None) for b in (node.slice.lower, node.slice.upper, node.slice.step)
        ]
        return self._hook(SLICE, node, "[:]", [node.value, *bounds])

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Add) or _is_number(node.left) or _is_number(node.right):
            return node
        return self._hook(ADD, node, "+", [node.left, node.right])

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.stmt:
        self.generic_visit(node)
        target = node.target
        if not isinstance(node.op, ast.Add) or _is_number(node.value) or isinstance(target, ast.Subscript):
            return node
        load = (
            ast.Name(target.id, ast.Load())
            if isinstance(target, ast.Name)
            else ast.Attribute(target.value, target.attr, ast.Load())
        )
        call = self._hook(IADD, node, "+=", [_at(load, target), node.value])
        return _at(ast.Assign([target], call), node)


def metered_module(
    source: str,
    name: str,
    assembly: tuple[str, ...] = ASSEMBLY,
    assembly_functions: tuple[str, ...] = ASSEMBLY_FUNCTIONS,
) -> tuple[ModuleType, WorkMeter]:
    """The module `source` defines, loaded under `name` with its string work metered, and its meter; the work
    under the `assembly` methods of its `StreamingParser` and its `assembly_functions` goes to the meter's
    `assembly` account."""
    metering = _Metering()
    tree = metering.visit(ast.parse(source))
    meter = WorkMeter(metering.sites)
    module = ModuleType(name)
    hooks: dict[str, Callable[..., Any]] = {
        CALL: meter.call,
        CONTAINS: meter.contains,
        SLICE: meter.slice,
        ADD: meter.add,
        IADD: meter.iadd,
    }
    module.__dict__.update(hooks)
    sys.modules[name] = module
    exec(compile(tree, f"<metered {name}>", "exec"), module.__dict__)
    for method in assembly:
        engine = module.StreamingParser
        if method not in vars(engine):  # renamed in the engine: the meter must follow
            raise LookupError(f"the engine has no {method}: update work_meter.ASSEMBLY")
        setattr(engine, method, meter.charged_to_assembly(getattr(engine, method)))
    for function in assembly_functions:
        if not callable(module.__dict__.get(function)):  # renamed in the runtime: the meter must follow
            raise LookupError(f"the module has no function {function}: update work_meter.ASSEMBLY_FUNCTIONS")
        # (the module's code calls it by its global name, which now names the wrapper)
        module.__dict__[function] = meter.charged_to_assembly(module.__dict__[function])
    return module, meter
