"""Helpers the test modules share (test files import from here, never from each other)."""
