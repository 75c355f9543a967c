"""The entry point: `envcheck` and `python -m envcheck` are the same.

`envcheck doctor` is a measured start-up (benchmarks/doctor_vs_collect_env.py): before the CLI and typer are
imported, main() looks at the command line once, and for `doctor` it starts NVML and nvcc at once, so that they run
while typer loads and parses. It only starts work on the host: the target interpreter runs only once typer has
parsed the command line and doctor has read the profiles it names (a refused run has not run it), typer stays the
one parser, and doctor takes the head start only for the very interpreter it resolves (envcheck.gather.started).
Anything it cannot read plainly (help asked, `--`, a --python without a value or naming no interpreter) starts
nothing.
"""

from __future__ import annotations

import sys
from typing import List, Optional


def doctor_target(args: List[str]) -> Optional[str]:
    """The --python value of a plain `doctor` command line ("" for none: the running interpreter), or None where the
    line asks for help, ends its options with `--`, or gives --python without a value. The last --python counts, as
    it does for typer."""
    if not args or args[0] != "doctor":
        return None
    found = ""
    words = iter(args[1:])
    for word in words:
        if word in ("-h", "--help", "--"):
            return None
        if word == "--python":
            found = next(words, None)
            if found is None or found.startswith("-"):
                return None
        elif word.startswith("--python="):
            found = word.partition("=")[2]
            if not found:
                return None
    return found


def _head_start(args: List[str]) -> None:
    flag = doctor_target(args)
    if flag is None:
        return
    from .errors import UsageError
    from .gather import head_start
    from .gather.target import resolve_python

    try:
        python = resolve_python(flag or None)
    except UsageError:  # typer will say it, the same way, when doctor resolves it
        return
    head_start(python)


def main() -> int:
    _head_start(sys.argv[1:])
    from .cli import main as run

    return run()


if __name__ == "__main__":
    sys.exit(main())
