"""`envcheck fleet REPORT...`: many nodes' doctor reports as one view. Exit 1 when a node fails."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from ..errors import UsageError, check_choice
from ..fleet.merge import merge
from ..fleet.node import read_nodes
from ..render.fleet import FORMATS, render_fleet
from ..userfile import emit
from ..words import columns

__all__ = ["run_fleet"]


def run_fleet(reports: Sequence[Path], *, output_format: str = "table", as_json: bool = False, output: Optional[Path] = None) -> int:
    fmt = check_choice("--format", "json" if as_json else output_format, FORMATS)
    nodes = read_nodes(list(reports))
    if all(node.problem for node in nodes):
        more = f" (and {len(nodes) - 1} more unreadable)" if len(nodes) > 1 else ""
        raise UsageError(f"no report could be read: {nodes[0].problem}{more}")
    fleet = merge(nodes)
    emit(render_fleet(fleet, fmt, columns()), output)
    return fleet.exit_code
