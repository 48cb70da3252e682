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
