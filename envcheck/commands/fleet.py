"""The commands: `envcheck diff A B` and `envcheck fleet REPORT...`. Exit 1: B regresses / a node fails."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Optional, Sequence

from ..errors import UsageError
from ..userfile import emit
from .diff import diff
from .merge import merge
from .node import read_node, read_nodes
from .render import FORMATS, WIDTH, render_diff, render_fleet


def _format(output_format: str, as_json: bool) -> str:
    fmt = "json" if as_json else output_format
    if fmt not in FORMATS:
        raise UsageError(f"--format {output_format!r}: expected one of {', '.join(FORMATS)}")
    return fmt


def run_diff(a: Path, b: Path, *, output_format: str = "table", as_json: bool = False, output: Optional[Path] = None,
             all_packages: bool = False) -> int:
    """all_packages: list changes of envcheck's own dependencies too (left out by default: envcheck/own.py)."""
    fmt = _format(output_format, as_json)
    first, second = read_node(a), read_node(b)
    if all_packages:
        leave_out: frozenset[str] = frozenset()
    else:
        from ..own import own_dependencies

        leave_out = own_dependencies()
    result = diff(first, second, leave_out)
    emit(render_diff(result, fmt), output)
    return result.exit_code


def run_fleet(reports: Sequence[Path], *, output_format: str = "table", as_json: bool = False, output: Optional[Path] = None) -> int:
    fmt = _format(output_format, as_json)
    nodes = read_nodes(list(reports))
    if all(node.problem for node in nodes):
        more = f" (and {len(nodes) - 1} more unreadable)" if len(nodes) > 1 else ""
        raise UsageError(f"no report could be read: {nodes[0].problem}{more}")
    fleet = merge(nodes)
    emit(render_fleet(fleet, fmt, shutil.get_terminal_size((WIDTH, 24)).columns), output)
    return fleet.exit_code
