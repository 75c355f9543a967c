"""envcheck itself as installed here: its version line, and the distributions it needs to run.

`envcheck --version` says what pip's does (`pip 24.0 from /path (python 3.11)`): the version, where the package is
imported from, the interpreter running it. `diff` leaves envcheck's own dependencies out of its package changes (a
newer typer or click says nothing of the stack); they are read from envcheck's installed metadata, followed through
Requires-Dist as a lock follows the stack (lock/stack.py walk), so that a dependency added to pyproject.toml is left
out too, and one no longer needed is not.
"""

from __future__ import annotations

import os
import sys

from . import DISTRIBUTION, __version__

__all__ = ["version_line", "own_dependencies", "is_own_environment"]


def version_line() -> str:
    """`envcheck 0.1.0 from /venv/lib/python3.11/site-packages/envcheck (python 3.11.7, /venv/bin/python)`."""
    package = os.path.dirname(os.path.abspath(__file__))
    python = ".".join(str(part) for part in sys.version_info[:3])
    return f"envcheck {__version__} from {package} (python {python}, {sys.executable})"


def is_own_environment(prefix: str) -> bool:
    """Whether an interpreter of this prefix (sys.prefix as the probe read it) is the environment envcheck runs in:
    the virtual environment it was installed into, or the same installation of Python."""
    try:
        return os.path.samefile(prefix, sys.prefix)
    except OSError:
        return False


def own_dependencies(timeout: float = 60.0) -> frozenset[str]:
    """Canonical names of envcheck's distribution and of every distribution it requires here, recursively (with this
    interpreter's markers, no extras). Empty where envcheck runs from a source tree without installed metadata."""
    from .gather.interpreter import Probe

    probe = Probe(sys.executable)  # started now: the lock package is imported while it runs
    from .lock.stack import walk

    try:
        interpreter = probe.result(timeout)
    except (RuntimeError, ValueError):  # the probe failed: nothing known, so nothing is left out
        return frozenset()
    return frozenset(walked.dist.name for walked in walk(interpreter, [(DISTRIBUTION, ())]).packages)
