"""`python -m driftcheck.runner [options]` is `driftcheck smoke [options]`."""

import sys

from driftcheck.runner.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
