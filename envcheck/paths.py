"""Where envcheck keeps its own files: one per-user cache directory, overridable for tests and CI."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Optional

__all__ = ["cache_dir", "default_cutlass_dir"]


def cache_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    env = os.environ if env is None else env
    if env.get("ENVCHECK_CACHE_DIR"):
        return Path(env["ENVCHECK_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "envcheck"


def default_cutlass_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    """Where `envcheck fix` fetches CUTLASS unless --cutlass-dir says otherwise."""
    return cache_dir(env) / "cutlass"
