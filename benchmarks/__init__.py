"""The benchmarks: rtcompile's compiled modules vs transformers 5.24.0 vs the rtcompile interpreter.

Run with `python benchmarks/run.py` (see its `--help`). The package splits what one run does:

* `config`: where things are, the units, and how much each stage measures (full run or `--quick`);
* `workloads`: what is measured (the realistic outputs per template, their chunkings, the adversarial
  streams, the regex patterns of the bundled templates);
* `engines`: the three engines behind one interface;
* `measurement`: timing in this process, engines interleaved run by run, and retained memory;
* `import_time`: import cost of a module in fresh interpreters;
* `compile_time`: compile time against template size (it must grow about linearly);
* `profiling`: where the time goes (cProfile, and timeit of the pieces of one `feed`);
* `report`: RESULTS.md, results.json, the plot and the console summary.

This is a measurement, never a test: nothing here asserts a timing.
"""
