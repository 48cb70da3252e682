"""What users run around the compiler: the command line, `lint`, `verify` and the fuzzer behind them."""
