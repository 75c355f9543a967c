"""diff and fleet as text: a table for people, JSON for programs, markdown for an issue."""

from __future__ import annotations

import dataclasses

from ..fleet.diff import Diff
from ..fleet.merge import Fleet
from ..jsonanswer import answer
from ..words import DEFAULT_COLUMNS, counted, wrap
from .text import FORMATS, markdown_cell

__all__ = ["FORMATS", "render_diff", "render_fleet"]

SCHEMA_VERSION = 1
WIDTH = DEFAULT_COLUMNS  # columns of the table's lines where the terminal's width is unknown
NODE_LINES = 3  # lines of node names per group; the rest are counted
INDENT = " " * 8
# What a smoke status of "none" means (the JSON keeps the key): the report has no smoke result.
NO_SMOKE = "not run (doctor without --smoke)"


def _cell(text: str) -> str:
    return markdown_cell(text or "—")


def _nodes(names: tuple[str, ...], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _wrap(text: str, width: int, first: str = "  ", rest: str = INDENT) -> list[str]:
    """Lines of at most `width` columns, broken between words (a word longer than a line keeps a line of its own)."""
    return wrap(text, width, first, rest)


def _node_lines(names: tuple[str, ...], width: int) -> list[str]:
    """The names of a group's nodes wrapped to `width`, in at most NODE_LINES lines: as many as fit, then "and N
    more" (found by bisection: the most names whose lines, with the count, fit)."""
    def lines(shown: int) -> list[str]:
        more = f" and {len(names) - shown} more" if shown < len(names) else ""
        return _wrap(", ".join(names[:shown]) + more, width, INDENT, INDENT)

    if len(lines(len(names))) <= NODE_LINES:
        return lines(len(names))
    low, high = 1, len(names) - 1
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if len(lines(middle)) <= NODE_LINES else (low, middle - 1)
    return lines(low)


def _smoke(counts: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{n} {NO_SMOKE if status == 'none' else status}" for status, n in counts)


def _side(status: str, found: str, limit: int = 100) -> str:
    """One side of a change: `pass (Python 3.12.3 (...))` for a check, the value alone for the rest."""
    if not status:
        return "(none)"
    if not found:
        return status
    return f"{status} ({found if len(found) <= limit else found[:limit - 3] + '...'})"


def _left_out(result: Diff) -> str:
    count = len(result.left_out)
    return (f"{count} change{'s' if count != 1 else ''} of envcheck's own dependencies left out "
            f"({', '.join(result.left_out)}; --all-packages lists them)") if count else ""


def render_diff(result: Diff, fmt: str) -> str:
    a, b = result.a, result.b
    if fmt == "json":
        return answer({
            "schema_version": SCHEMA_VERSION, "a": a.path, "b": b.path, "regressed": bool(result.regressions),
            "changes": [dataclasses.asdict(c) for c in result.changes], "left_out": list(result.left_out),
        }, result.exit_code)
    verdict = (f"B regresses against A: {counted(len(result.regressions), 'regression')}" if result.regressions
               else "B does not regress against A")
    if fmt == "markdown":
        lines = [f"### envcheck diff: {verdict}", "", f"A `{a.path}` ({a.kind}), B `{b.path}` ({b.kind}).", ""]
        if result.changes:
            lines += ["| | what | A | B |", "|---|---|---|---|"]
            lines += [f"| {'❌ regression' if c.regression else c.kind} | `{c.subject}` | "
                      f"{_cell(_side(c.before, c.found_before) if c.before else '')} | "
                      f"{_cell(_side(c.after, c.found_after) if c.after else '')} |" for c in result.changes]
        else:
            lines.append("No differences.")
        if result.left_out:
            lines += ["", _left_out(result) + "."]
        return "\n".join(lines) + "\n"
    lines = [f"A: {a.path} ({a.kind})", f"B: {b.path} ({b.kind})", ""]
    width = max((len(c.subject) for c in result.changes), default=10)
    for c in result.changes:
        mark = "REGRESSION" if c.regression else c.kind
        lines.append(f"  {mark:<10}  {c.subject:<{width}}  {_side(c.before, c.found_before)} -> {_side(c.after, c.found_after)}")
    if not result.changes:
        lines.append("  no differences")
    if result.left_out:
        lines += ["", _left_out(result) + "."]
    return "\n".join(lines + ["", verdict + "."]) + "\n"


def render_fleet(fleet: Fleet, fmt: str, width: int = WIDTH) -> str:
    """width: the terminal's columns, which the table's lines keep to (node names wrap, then are counted)."""
    total = len(fleet.nodes)
    if fmt == "json":
        return answer({
            "schema_version": SCHEMA_VERSION, "nodes": total, "failed": list(fleet.failed),
            "groups": [{"outcome": g.outcome, "failed": g.failed, "count": len(g.nodes), "nodes": list(g.nodes)} for g in fleet.groups],
            "checks": {id_: dict(counts) for id_, counts in fleet.checks},
            "majority": dict(fleet.majority),
            "outliers": [dataclasses.asdict(o) for o in fleet.outliers],
            "smoke": dict(fleet.smoke),
            "unreadable": [{"node": n.name, "path": n.path, "problem": n.problem} for n in fleet.unreadable],
        }, fleet.exit_code)
    verdict = f"{len(fleet.failed)} of {total} nodes fail" if fleet.failed else f"all {total} nodes pass"
    if fleet.unreadable:
        verdict += f" ({len(fleet.unreadable)} unreadable)"
    if fmt == "markdown":
        lines = [f"### envcheck fleet: {verdict}", "", "| nodes | outcome | which |", "|---|---|---|"]
        lines += [f"| {len(g.nodes)} | {'❌ ' if g.failed else ''}{_cell(g.outcome)} | {_cell(_nodes(g.nodes))} |" for g in fleet.groups]
        lines += ["", "| check | " + " | ".join(("pass", "warn", "fail", "error", "skip")) + " |", "|---|---|---|---|---|---|"]
        lines += [f"| `{id_}` | " + " | ".join(str(dict(c).get(s, 0)) for s in ("pass", "warn", "fail", "error", "skip")) + " |" for id_, c in fleet.checks]
        if fleet.outliers:
            lines += ["", "| outlier | fact | value | majority |", "|---|---|---|---|"]
            lines += [f"| {o.node} | {o.fact} | {_cell(o.value)} | {_cell(o.majority)} |" for o in fleet.outliers]
        if fleet.unreadable:
            lines += ["", "| ❌ unreadable | why |", "|---|---|"]
            lines += [f"| {_cell(n.name)} | unreadable: {_cell(n.problem)} |" for n in fleet.unreadable]
        lines += ["", "Smoke: " + _smoke(fleet.smoke)]
        return "\n".join(lines) + "\n"
    lines = [f"{total} nodes", ""]
    for g in fleet.groups:
        lines += _wrap(f"{len(g.nodes):>4} node{'s' if len(g.nodes) != 1 else ' '}: {'FAIL ' if g.failed else ''}{g.outcome}", width)
        lines += _node_lines(g.nodes, width)
    lines += ["", "checks:"]
    id_width = max((len(id_) for id_, _ in fleet.checks), default=10)
    lines += [f"  {id_:<{id_width}}  " + ", ".join(f"{n} {s}" for s, n in counts) for id_, counts in fleet.checks]
    if fleet.outliers:
        lines += ["", "outliers (differ from the majority):"]
        lines += [f"  {o.node}: {o.fact} {o.value or '(none)'} (majority: {o.majority or '(none)'})" for o in fleet.outliers]
    if fleet.unreadable:  # one line each, unwrapped: the file and key a reader searches for stay whole
        lines += ["", f"unreadable ({len(fleet.unreadable)} node{'s' if len(fleet.unreadable) != 1 else ''}: FAIL):"]
        lines += [f"  unreadable: {n.problem}" for n in fleet.unreadable]
    lines += ["", *_wrap("smoke: " + _smoke(fleet.smoke), width, "", "  "), "", verdict + "."]
    return "\n".join(lines) + "\n"
