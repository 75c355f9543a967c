"""What every text renderer shares: the three formats of a result, each status's label, colour and mark, a markdown
table cell, a remedy as the lines a person reads (`fix` and the commands to paste), and which profile judged and why
(the same words from every command, in text and in JSON)."""

from __future__ import annotations

from ..model import ProfileChoice, Remedy, Status, plain
from ..shell import line

__all__ = ["FORMATS", "LABEL", "COLOR", "MARK", "markdown_cell", "remedy_lines", "profile_from", "profile_line",
           "profile_json"]

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


def profile_from(choice: ProfileChoice, quote: str = "") -> str:
    """` from FILE` where the profile is not a built-in one (a pyproject.toml above the folder counts), else ""."""
    return f" from {quote}{choice.source}{quote}" if choice.source and not choice.source.startswith("built-in") else ""


def profile_line(choice: ProfileChoice, quote: str = "", capital: bool = False) -> str:
    """Which profile judged and why, as every command says it: `profile ID [from FILE] chosen because REASON`
    (capital: `Profile ...`, a sentence of its own)."""
    reason = choice.reason or "no reason was given"
    return (f"{'P' if capital else 'p'}rofile {quote}{choice.id}{quote}{profile_from(choice, quote)} chosen because {reason}"
            + ("" if choice.verified else "; UNVERIFIED for this torch"))


def profile_json(choice: ProfileChoice) -> dict:
    """The same, in JSON: `{id, reason, source, verified}` (doctor's `profile`, and every command's since)."""
    return plain(choice)
