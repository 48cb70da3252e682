"""rtcompile's version, recorded in the header of every generated module."""

VERSION = "0.1.0"
