"""The code generator: one standalone, typed Python module per template (see `generate`)."""
