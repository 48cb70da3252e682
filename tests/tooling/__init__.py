"""The command line (rtcompile/tooling/) and the package as a user installs it."""
