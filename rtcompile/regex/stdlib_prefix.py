r"""A first character for `re` to skip by: `(?:<X)?<Y` is written `<(?:X<)?Y`.

`re` searches a pattern that opens with a literal character by skipping to its occurrences in C; one that
opens with an optional part (`(?:<tool>\s*)?<function=...`) it runs in full at every position of the text,
about ten times the cost, where `regex`'s own first-character prefilter looks through the optional part.
When the optional part and what follows it both open with the same character, that character can go first:
the strings matched, the order they are tried in (the optional part first, or last when lazy) and every
capture stay as they were. Only the pattern's opening is rewritten, and only for the stdlib translation of
its complete matches: partial matches are decided by `rtcompile.regex.partial` on the pattern as written.
"""

from __future__ import annotations

from rtcompile.regex.ast import Chars, Concat, Node, Repeat, flat_items


def hoist_leading_character(root: Node) -> Node:
    """`root` with a character shared by a leading optional part and what follows it moved in front."""
    items = flat_items(root)
    if len(items) < 2:
        return root
    optional, after = items[0], items[1]
    if not (isinstance(optional, Repeat) and (optional.min, optional.max) == (0, 1) and not optional.possessive):
        return root
    body = flat_items(optional.body)
    if len(body) < 2 or not isinstance(after, Chars) or body[0] != after:
        return root
    moved = Repeat(Concat((*body[1:], after)), 0, 1, optional.lazy)
    return Concat((after, moved, *items[2:]))
