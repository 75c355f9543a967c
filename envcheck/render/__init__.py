"""render: every text a result becomes (issue 19's render/ floor: below the commands, above the domain).

  report.py  one Report as a table for people, versioned JSON for programs, markdown for an issue

Importers keep `from envcheck.render import ...`: the report's API is re-exported here. The modules of this package
import each other directly (`from .report import x`), never this __init__.
"""

from .report import (
    FORMATS,
    SCHEMA_VERSION,
    bench_line,
    markdown,
    markdown_cell,
    render,
    smoke_lines,
    summary_counts,
    table,
    to_json_data,
)

__all__ = [
    "SCHEMA_VERSION", "FORMATS", "render", "to_json_data", "table", "markdown", "summary_counts", "smoke_lines",
    "bench_line", "markdown_cell",
]
