"""The documentation's examples and generated pages, run and checked as written."""
