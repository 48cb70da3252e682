"""Maintenance scripts, importable from the repository root (tests check what they generate)."""
