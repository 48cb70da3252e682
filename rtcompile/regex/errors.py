"""Why a template regex cannot be used: `regex` rejects it, or stdlib `re` cannot reproduce it."""

from __future__ import annotations


class InvalidRegex(ValueError):
    """The `regex` module itself rejects the pattern (the message is `regex`'s own)."""


class UnsupportedRegex(ValueError):
    """The pattern is valid for `regex` but cannot be reproduced exactly with stdlib `re`.

    `construct` names the offending construct briefly (e.g. ``"possessive quantifier"``) so callers can
    report it without parsing the message.
    """

    def __init__(self, construct: str, reason: str) -> None:
        super().__init__(f"unsupported regex construct: {construct} ({reason})")
        self.construct = construct
        self.reason = reason

    @property
    def summary(self) -> str:
        """Why a module matches the pattern with `regex`, for a compile warning."""
        return f"{self.construct} has no exact standard-library translation ({self.reason})"


class SlowOnStdlib(UnsupportedRegex):
    """The stdlib translation is exact, but stdlib `re` would backtrack on it asymptotically longer than
    `regex` does (`rtcompile.regex.backtracking.refuse_slow_backtracking`)."""

    @property
    def summary(self) -> str:
        return f"stdlib re would backtrack on this pattern ({self.reason})"
