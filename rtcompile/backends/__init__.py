"""The two backends that consume a plan: the interpreter (runs it with `regex`) and the code generator.

Both plug their own scanners and field handlers into the one streaming engine in `rtcompile.runtime.engine`.
"""
