"""rtcompile: compile Hugging Face response templates into standalone, typed Python parsers.

Pipeline: `load_template` (read + validate) -> IR (`rtcompile.ir`) -> either the interpreter
(`parse_response`, `ResponseParser`) or the code generator (`compile_template`).
"""

from rtcompile.api import (
    Diagnostic,
    Event,
    Message,
    ResponseParser,
    TemplateText,
    check_template,
    compile_template,
    load_template,
    parse_response,
)
from rtcompile.frontend.errors import TemplateError
from rtcompile.ir import Template
from rtcompile.version import VERSION

__version__ = VERSION

__all__ = [
    "Diagnostic",
    "Event",
    "Message",
    "ResponseParser",
    "Template",
    "TemplateError",
    "TemplateText",
    "__version__",
    "check_template",
    "compile_template",
    "load_template",
    "parse_response",
]
