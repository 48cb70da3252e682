"""The front end: find and read a template (with positions), apply the reference's load rules, report.

`source` resolves what the user named (a tokenizer config, a bare template file, a model directory, a
dict) and reads its JSON with the line:col of every value; `loader` applies transformers' load rules in
their order and builds the IR (`rtcompile.ir`); `diagnostics` warns about what loads but will misbehave.
Errors and warnings are defined and rendered in `rtcompile.errors`, which every stage shares.
"""
