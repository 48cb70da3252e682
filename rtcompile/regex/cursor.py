"""A cursor over a `regex` pattern, reading characters the way `regex`'s own parser does."""

from __future__ import annotations


class PatternCursor:
    """Cursor over the pattern; in verbose mode `get` skips whitespace and ``#`` comments, like regex."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.ignore_space = False

    def _skip(self, pos: int) -> int:
        text = self.text
        while pos < len(text):
            if text[pos].isspace():
                pos += 1
            elif text[pos] == "#":
                newline = text.find("\n", pos)
                pos = len(text) if newline < 0 else newline
            else:
                break
        return pos

    def get(self, override_ignore: bool = False) -> str:
        pos = self._skip(self.pos) if self.ignore_space and not override_ignore else self.pos
        if pos >= len(self.text):
            self.pos = pos
            return ""
        self.pos = pos + 1
        return self.text[pos]

    def peek(self) -> str:
        pos = self._skip(self.pos) if self.ignore_space else self.pos
        return self.text[pos] if pos < len(self.text) else ""

    def match(self, literal: str) -> bool:
        saved = self.pos
        for expected in literal:
            if self.get() != expected:
                self.pos = saved
                return False
        return True

    def get_while(self, allowed: frozenset[str], keep_spaces: bool = False) -> str:
        chars: list[str] = []
        while True:
            saved = self.pos
            ch = self.get(override_ignore=keep_spaces)
            if not ch or ch not in allowed:
                self.pos = saved
                return "".join(chars)
            chars.append(ch)

    def get_until(self, stops: frozenset[str]) -> str:
        chars: list[str] = []
        while True:
            saved = self.pos
            ch = self.get()
            if not ch or ch in stops:
                self.pos = saved
                return "".join(chars)
            chars.append(ch)
