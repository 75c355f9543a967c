"""What every text renderer shares: the three formats of a result, each status's label, colour and mark, a markdown
table cell, and a remedy as the lines a person reads (`fix` and the commands to paste)."""

from __future__ import annotations

from ..model import Remedy, Status
from ..shell import line

__all__ = ["FORMATS", "LABEL", "COLOR", "MARK", "markdown_cell", "remedy_lines"]

FORMATS = ("table", "json", "markdown")
LABEL = {Status.PASS: "PASS", Status.WARN: "WARN", Status.FAIL: "FAIL", Status.SKIP: "SKIP", Status.ERROR: "ERROR"}
COLOR = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "red", Status.SKIP: "dim", Status.ERROR: "magenta"}
MARK = {Status.PASS: "✅", Status.WARN: "⚠️", Status.FAIL: "❌", Status.SKIP: "⏭️", Status.ERROR: "💥"}


def markdown_cell(text: str) -> str:
    """text as one cell of a markdown table: its pipes escaped, on one line."""
    return text.replace("|", "\\|").replace("\n", " ")


def remedy_lines(remedy: Remedy) -> list[str]:
    """`  fix       TEXT`, then each command as `            $ ARGV` (never wrapped: a command pastes as one line), as
    smoke's and explain's results show a remedy."""
    return [f"  fix       {remedy.text}"] + [f"            $ {line(command)}" for command in remedy.commands]
