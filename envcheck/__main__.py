"""`python -m envcheck` is the same as the `envcheck` command."""

from .cli import run

run()
