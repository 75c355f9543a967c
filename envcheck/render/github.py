"""A Report as GitHub Actions reads it: annotations (workflow commands), a step summary in markdown, step outputs.

The renderers are pure functions Report -> str; `emit_github` writes them (annotations to a stream, the summary and
outputs appended to the files GitHub names), redacting the finished text the way every other output is redacted.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional, TextIO

from ..model import Report, Status
from .cases import cases
from .text import MARK, markdown_cell

__all__ = ["github_annotations", "step_summary", "step_outputs", "emit_github"]


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


_COMMAND = {Status.FAIL: "error", Status.ERROR: "error", Status.WARN: "warning"}


def github_annotations(report: Report) -> str:
    """Workflow commands: an error annotation per failed check, a warning per warning; passes and skips say nothing."""
    lines = []
    for case in cases(report):
        command = _COMMAND.get(case.status)
        if command is None:
            continue
        title = f"envcheck {case.id}: {case.status.value}"
        lines.append(f"::{command} title={_escape_property(title)}::{_escape_data(case.message + chr(10) + case.body)}")
    return "".join(line + "\n" for line in lines)


def step_summary(report: Report) -> str:
    """Markdown for $GITHUB_STEP_SUMMARY: a verdict line, a table of every check, the fixes for what failed."""
    items = cases(report)
    counts = {status: sum(c.status is status for c in items) for status in Status}
    verdict = "❌ required checks failed" if report.exit_code else "✅ every required check passed"
    tally = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    lines = [
        f"### envcheck doctor — profile `{report.profile.id}`",
        "",
        f"{verdict} ({tally})",
        "",
        "| | check | found | wanted |",
        "|---|---|---|---|",
    ]
    findings = {f.id: f for f in report.findings}
    for case in items:
        finding = findings.get(case.id)
        found = finding.found if finding else case.message
        wanted = finding.wanted if finding else ""
        cells = (f"`{case.id}` {markdown_cell(case.title)}", markdown_cell(found), markdown_cell(wanted))
        lines.append(f"| {MARK[case.status]} | {' | '.join(cells)} |")
    fixes = [f for f in report.findings if f.status in (Status.FAIL, Status.ERROR, Status.WARN) and f.remedy]
    if fixes:
        lines += ["", "#### What to do", ""]
        for finding in fixes:
            lines.append(f"- `{finding.id}`: {finding.remedy.text}")  # type: ignore[union-attr]
            lines.extend(f"  `{' '.join(command)}`" for command in finding.remedy.commands)  # type: ignore[union-attr]
    return "\n".join(lines) + "\n"


def step_outputs(report: Report) -> str:
    """Lines for $GITHUB_OUTPUT: `worst`, `exit-code` and the count of each status."""
    items = cases(report)
    lines = [f"worst={report.worst.value}", f"exit-code={report.exit_code}"]
    lines += [f"{status.value}={sum(c.status is status for c in items)}" for status in Status]
    return "\n".join(lines) + "\n"


def emit_github(
    report: Report,
    env: Mapping[str, str],
    out: TextIO,
    redact: Optional[Callable[[str], str]] = None,
) -> bool:
    """When env has GITHUB_ACTIONS=true: annotations to `out`, and the summary and outputs appended to the files that
    GITHUB_STEP_SUMMARY and GITHUB_OUTPUT name. Returns whether it did anything. A file it cannot append to is
    reported on `out` as a warning annotation, never a crash of the step."""
    if env.get("GITHUB_ACTIONS") != "true":
        return False
    if redact is None:
        from ..redact import Redactor

        redact = Redactor(env)
    out.write(redact(github_annotations(report)))
    for variable, text in (("GITHUB_STEP_SUMMARY", step_summary(report)), ("GITHUB_OUTPUT", step_outputs(report))):
        target = env.get(variable)
        if not target:
            continue
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(redact(text))
        except OSError as exc:
            out.write(f"::warning title=envcheck::cannot append to ${variable} ({_escape_data(str(exc))})\n")
    out.flush()
    return True
