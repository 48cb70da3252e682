"""The standard library's regex parser, for analysing the structure of patterns at compile time.

`sre_parse` and `sre_constants` are deprecated public aliases of `re._parser` / `re._constants`,
which typeshed does not describe; they are imported once here, with the warning silenced.
"""

import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_constants
    import sre_parse

__all__ = ["sre_constants", "sre_parse"]
