"""`python -m rtcompile`: the same command line as the `rtcompile` script."""

import sys

from rtcompile.tooling.cli import main

sys.exit(main())
