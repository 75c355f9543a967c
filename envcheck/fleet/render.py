"""diff and fleet as text: a table for people, JSON for programs, markdown for an issue."""

from __future__ import annotations

import dataclasses
import json

from ..render import FORMATS, markdown_cell
from .diff import Diff
from .merge import Fleet

__all__ = ["FORMATS", "render_diff", "render_fleet"]

SCHEMA_VERSION = 1


def _cell(text: str) -> str:
    return markdown_cell(text or "—")


def _nodes(names: tuple[str, ...], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def render_diff(result: Diff, fmt: str) -> str:
    a, b = result.a, result.b
    if fmt == "json":
        return json.dumps({
            "schema_version": SCHEMA_VERSION, "a": a.path, "b": b.path, "regressed": bool(result.regressions),
            "exit_code": result.exit_code, "changes": [dataclasses.asdict(c) for c in result.changes],
        }, indent=2) + "\n"
    verdict = (f"B regresses against A: {len(result.regressions)} regression(s)" if result.regressions
               else "B does not regress against A")
    if fmt == "markdown":
        lines = [f"### envcheck diff: {verdict}", "", f"A `{a.path}` ({a.kind}), B `{b.path}` ({b.kind}).", ""]
        if result.changes:
            lines += ["| | what | A | B |", "|---|---|---|---|"]
            lines += [f"| {'❌ regression' if c.regression else c.kind} | `{c.subject}` | {_cell(c.before)} | {_cell(c.after)} |" for c in result.changes]
        else:
            lines.append("No differences.")
        return "\n".join(lines) + "\n"
    lines = [f"A: {a.path} ({a.kind})", f"B: {b.path} ({b.kind})", ""]
    width = max((len(c.subject) for c in result.changes), default=10)
    for c in result.changes:
        mark = "REGRESSION" if c.regression else c.kind
        lines.append(f"  {mark:<10}  {c.subject:<{width}}  {c.before or '(none)'} -> {c.after or '(none)'}")
    if not result.changes:
        lines.append("  no differences")
    return "\n".join(lines + ["", verdict + "."]) + "\n"


def render_fleet(fleet: Fleet, fmt: str) -> str:
    total = len(fleet.nodes)
    if fmt == "json":
        return json.dumps({
            "schema_version": SCHEMA_VERSION, "nodes": total, "failed": list(fleet.failed), "exit_code": fleet.exit_code,
            "groups": [{"outcome": g.outcome, "failed": g.failed, "count": len(g.nodes), "nodes": list(g.nodes)} for g in fleet.groups],
            "checks": {id_: dict(counts) for id_, counts in fleet.checks},
            "majority": dict(fleet.majority),
            "outliers": [dataclasses.asdict(o) for o in fleet.outliers],
            "smoke": dict(fleet.smoke),
            "unreadable": [{"node": n.name, "path": n.path, "problem": n.problem} for n in fleet.unreadable],
        }, indent=2) + "\n"
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
        lines += ["", "Smoke: " + ", ".join(f"{n} {s}" for s, n in fleet.smoke)]
        return "\n".join(lines) + "\n"
    lines = [f"{total} nodes", ""]
    for g in fleet.groups:
        lines.append(f"  {len(g.nodes):>4} node{'s' if len(g.nodes) != 1 else ' '}: {'FAIL ' if g.failed else ''}{g.outcome}")
        lines.append(f"        {_nodes(g.nodes)}")
    lines += ["", "checks:"]
    width = max((len(id_) for id_, _ in fleet.checks), default=10)
    lines += [f"  {id_:<{width}}  " + ", ".join(f"{n} {s}" for s, n in counts) for id_, counts in fleet.checks]
    if fleet.outliers:
        lines += ["", "outliers (differ from the majority):"]
        lines += [f"  {o.node}: {o.fact} {o.value or '(none)'} (majority: {o.majority or '(none)'})" for o in fleet.outliers]
    if fleet.unreadable:
        lines += ["", f"unreadable ({len(fleet.unreadable)} node{'s' if len(fleet.unreadable) != 1 else ''}: FAIL):"]
        lines += [f"  unreadable: {n.problem}" for n in fleet.unreadable]
    lines += ["", "smoke: " + ", ".join(f"{n} {s}" for s, n in fleet.smoke), "", verdict + "."]
    return "\n".join(lines) + "\n"
