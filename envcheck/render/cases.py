"""A report's checks as the cases CI formats list (JUnit's testcases, GitHub's annotations and summary rows): each
finding in the report's fixed order, then the smoke run when there was one, so that both render the same way."""

from __future__ import annotations

from typing import NamedTuple

from .. import shell
from ..model import Finding, Report, Status
from .report import smoke_lines

__all__ = ["Case", "cases"]


class Case(NamedTuple):
    """One testcase: a finding, or the smoke run, so that both render the same way."""

    id: str
    title: str
    status: Status
    message: str
    body: str


def _finding_body(finding: Finding) -> str:
    lines = [f"found: {finding.found}"]
    if finding.wanted:
        lines.append(f"wanted: {finding.wanted}")
    if finding.why:
        lines.append(f"why: {finding.why}")
    remedy = finding.remedy
    if remedy is not None:
        lines.append(f"fix: {remedy.text}")
        lines.extend(f"  $ {shell.line(command)}" for command in remedy.commands)
        if remedy.automatic:
            lines.append("  (`envcheck fix` can do this)")
        if remedy.link:
            lines.append(f"  see {remedy.link}")
    lines.extend(finding.details)
    return "\n".join(lines)


def _finding_message(finding: Finding) -> str:
    message = f"{finding.title}: {finding.found}"
    if finding.wanted and finding.status is not Status.PASS:
        message += f" (wanted {finding.wanted})"
    return message


def cases(report: Report) -> list[Case]:
    """The report's checks in its fixed order, then the smoke run when there was one."""
    found = [Case(f.id, f.title, f.status, _finding_message(f), _finding_body(f)) for f in report.findings]
    smoke = report.smoke
    if smoke is not None:
        lines = smoke_lines(smoke)
        found.append(Case("smoke", "a real GEMM through the CuteDSL backend", smoke.status, lines[0] if lines else "", "\n".join(lines)))
    return found
