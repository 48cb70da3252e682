"""The benchmarks: rtcompile's compiled modules vs transformers 5.24.0 vs the rtcompile interpreter.

Run with `python benchmarks/run.py` (see its `--help`: `--quick`, `--targets-only`, `--models`, `--out`).
The package splits what one run does:

* `config`: where things are, the units, and how much each stage measures (full run, `--quick`,
  `--targets-only`);
* `workloads`: what is measured (the realistic outputs per template, their chunkings, the adversarial
  streams, the regex patterns of the bundled templates);
* `delimiters`: each template's delimiter kind and whether it is literal-delimited, from its JSON;
* `engines`: the three engines behind one interface;
* `measurement`: timing in this process (streaming, one-shot, adversarial, regex translation), engines
  interleaved run by run, and retained memory;
* `many_parsers`: 1,000 parsers streaming at once, round-robin against sequential, and their memory;
* `import_time`: import cost of a module in fresh interpreters, bytecode cached and not;
* `compile_time`: compile time against template size (it must grow about linearly);
* `profiling`: where the time goes (the share of chunks taking the slow path, cProfile, and timeit of
  the pieces of one `feed`);
* `unseen_templates`, `rewrites`: templates nobody tuned rtcompile for (random realistic ones with their own
  outputs; the bundled ones written differently), and `unseen` / `unseen_report`: issue 19's targets measured
  on them (`python benchmarks/run.py --unseen-only`);
* `targets`: the targets a run is judged against, met or not, and by how much;
* `report` and `plot`: RESULTS.md, results.json, per_chunk_cost.png and the console summary.

This is a measurement, never a test: nothing here asserts a timing.
"""
