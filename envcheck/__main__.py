"""`python -m envcheck` is the same as the `envcheck` command."""

import sys

from .cli import main

sys.exit(main())
