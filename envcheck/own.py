"""envcheck itself as installed here: its version line, and the distributions it needs to run.

`envcheck --version` says what pip's does (`pip 24.0 from /path (python 3.11)`): the version, where the package is
imported from, the interpreter running it. `diff` leaves envcheck's own dependencies out of its package changes (a
newer typer or click says nothing of the stack); they are read from envcheck's installed metadata, followed through
Requires-Dist as a lock follows the stack (lock/stack.py walk), so that a dependency added to pyproject.toml is left
out too, and one no longer needed is not.

`uv_environment` says whether uv made envcheck's environment, and how: uvx (`uv tool run`) makes a throwaway one in
uv's cache (`<cache>/archive-v0/<id>`, a CACHEDIR.TAG at the cache's root), `uv tool install` one of its own with
a `uv-receipt.toml` beside it, `uv venv` a plain one; each writes `uv = VERSION` into its pyvenv.cfg, and none has
pip unless asked for (`uvx --with pip`).
"""

from __future__ import annotations

import os
import sys

from . import DISTRIBUTION, __version__

__all__ = ["version_line", "own_dependencies", "uv_environment", "UVX", "UV_TOOL", "UV_VENV"]

UVX, UV_TOOL, UV_VENV = "uvx", "uv tool", "uv venv"


def version_line() -> str:
    """`envcheck 0.1.0 from /venv/lib/python3.11/site-packages/envcheck (python 3.11.7, /venv/bin/python)`."""
    package = os.path.dirname(os.path.abspath(__file__))
    python = ".".join(str(part) for part in sys.version_info[:3])
    return f"envcheck {__version__} from {package} (python {python}, {sys.executable})"


def own_dependencies(timeout: float = 60.0) -> frozenset[str]:
    """Canonical names of envcheck's distribution and of every distribution it requires here, recursively (with this
    interpreter's markers, no extras). Empty where envcheck runs from a source tree without installed metadata."""
    from .gather.interpreter import gather_interpreter
    from .lock.stack import walk

    try:
        interpreter = gather_interpreter(sys.executable, timeout)
    except (RuntimeError, ValueError):  # the probe failed: nothing known, so nothing is left out
        return frozenset()
    return frozenset(walked.dist.name for walked in walk(interpreter, [(DISTRIBUTION, ())]).packages)


def uv_environment(prefix: str = sys.prefix) -> str:
    """How uv made the environment at `prefix` (envcheck's own by default): UVX, UV_TOOL or UV_VENV; "" where uv did
    not make it (its pyvenv.cfg has no `uv` key, or there is none)."""
    try:
        with open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8", errors="replace") as handle:
            keys = {line.partition("=")[0].strip().lower() for line in handle.read(65536).splitlines()}
    except OSError:
        return ""
    if "uv" not in keys:
        return ""
    if os.path.isfile(os.path.join(prefix, "uv-receipt.toml")):
        return UV_TOOL
    # uvx's environments live in uv's cache, whose root holds a CACHEDIR.TAG: <cache>/archive-v0/<id>
    above = os.path.dirname(os.path.abspath(prefix))
    for folder in (above, os.path.dirname(above)):
        if os.path.isfile(os.path.join(folder, "CACHEDIR.TAG")):
            return UVX
    return UV_VENV
