"""Allow ``python -m cli``."""

import sys

from cli.main import main

if __name__ == "__main__":  # not when a worker process (multiprocessing spawn) imports the main module
    sys.exit(main())
