"""Work done once per template object.

A loaded `Template` never changes, so what is derived from it alone (its parser plan, its grammar
skeleton, its interpreted program) is worked out on first use and kept in the template itself
(`Template.derived`), for as long as it lives: compiling a template plans it for the scanners and
again for the grammar, and a test or a server builds many parsers from one template. Kept there, the
derived values (a plan refers to its template) go with the template when it is collected.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar, cast

from rtcompile.ir import Template

T = TypeVar("T")


def per_template(build: Callable[[Template], T]) -> Callable[[Template], T]:
    """`build`, called once per template object."""
    key = f"{build.__module__}.{build.__qualname__}"

    @functools.wraps(build)
    def memoised(template: Template) -> T:
        derived = template.derived
        if key not in derived:
            derived[key] = build(template)
        return cast(T, derived[key])

    return memoised
