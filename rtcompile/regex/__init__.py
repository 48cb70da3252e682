"""Template regexes: the `regex` module's V0 syntax, parsed once into one AST, and what is derived from it.

The exact standard-library translation (with `regex`'s partial matching), first-character sets and the
analyses that diagnostics, lint and the fuzzer need all read that AST; nothing else parses
`regex`-dialect text.
"""
