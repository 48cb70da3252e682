"""Whole parsers against transformers 5.24.0: the interpreter, compiled modules, the bundled templates."""
