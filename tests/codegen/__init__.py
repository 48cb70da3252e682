"""The generator (rtcompile/backends/codegen/): what a generated module holds, how it is laid out, that it is fresh."""
