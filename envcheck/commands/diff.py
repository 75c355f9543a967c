"""`envcheck diff A B`: what changed from A (the environment that works) to B. Exit 1 when B regresses against A."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..errors import check_choice
from ..fleet.diff import diff
from ..fleet.node import read_node
from ..render.fleet import FORMATS, render_diff
from ..userfile import emit

__all__ = ["run_diff"]


def run_diff(a: Path, b: Path, *, output_format: str = "table", as_json: bool = False, output: Optional[Path] = None,
             all_packages: bool = False) -> int:
    """all_packages: list changes of envcheck's own dependencies too (left out by default: envcheck/own.py)."""
    fmt = check_choice("--format", "json" if as_json else output_format, FORMATS)
    first, second = read_node(a), read_node(b)
    if all_packages:
        leave_out: frozenset[str] = frozenset()
    else:
        from ..own import own_dependencies

        leave_out = own_dependencies()
    result = diff(first, second, leave_out)
    emit(render_diff(result, fmt), output)
    return result.exit_code
