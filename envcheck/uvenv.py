"""uv's environments: whether uv made the one envcheck runs in, and how, which decides what brings it a pip.

uvx (`uv tool run`) makes a throwaway environment in uv's cache (`<cache>/archive-v0/<id>`, a CACHEDIR.TAG at the
cache's root), `uv tool install` one of its own with a `uv-receipt.toml` beside it, `uv venv` a plain one; each writes
`uv = VERSION` into its pyvenv.cfg, and none has pip unless asked for (`uvx --with pip`).
"""

from __future__ import annotations

import os
import sys

__all__ = ["uv_environment", "UVX", "UV_TOOL", "UV_VENV"]

UVX, UV_TOOL, UV_VENV = "uvx", "uv tool", "uv venv"


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
