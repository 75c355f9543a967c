"""Small pieces of bench's text outputs: aligned columns, a markdown table, numbers as people read them."""

from __future__ import annotations

from typing import Optional, Sequence

from .text import markdown_cell

__all__ = ["columns", "markdown_table", "number", "percent", "times"]


def columns(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows (the first is the header) as lines of left-aligned columns two spaces apart."""
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]


def markdown_table(rows: Sequence[Sequence[str]]) -> list[str]:
    header, *body = rows
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(markdown_cell(str(cell)) for cell in row) + " |" for row in body)]


def number(value: Optional[float], digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def percent(value: Optional[float], sign: bool = False) -> str:
    return "" if value is None else f"{100 * value:{'+' if sign else ''}.1f}%"


def times(value: Optional[float]) -> str:
    """A speed ratio: "2.05x"."""
    return "" if value is None else f"{value:.2f}x"
