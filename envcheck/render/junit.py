"""ci: a Report as CI systems read it — JUnit XML (one testcase per check), GitHub Actions annotations, a GitHub step
summary and step outputs.

The renderers are pure functions Report -> str; `write_junit` and `emit_github` are the two that touch files, and
both redact the finished text the way every other output is redacted.

Statuses in JUnit terms: pass -> a passed testcase; warn -> a passed testcase whose <system-out> says WARN (JUnit has
no warning state, and a warning must not fail the build); skip -> <skipped/>; fail -> <failure/>; error (the check
could not be made) -> <error/>. The counts on <testsuite> and <testsuites> are the counts of those elements.
"""

from __future__ import annotations

import datetime
import socket
from pathlib import Path
from typing import Callable, Mapping, NamedTuple, Optional, TextIO

from . import __version__, shell
from .model import Finding, Report, Status
from .render import smoke_lines

__all__ = ["junit_xml", "write_junit", "github_annotations", "step_summary", "step_outputs", "emit_github", "Case", "cases"]

_MARK = {Status.PASS: "✅", Status.WARN: "⚠️", Status.FAIL: "❌", Status.SKIP: "⏭️", Status.ERROR: "💥"}


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


def _counts(items: list[Case]) -> dict[str, int]:
    return {
        "tests": len(items),
        "failures": sum(c.status is Status.FAIL for c in items),
        "errors": sum(c.status is Status.ERROR for c in items),
        "skipped": sum(c.status is Status.SKIP for c in items),
    }


def _xml_safe(text: str) -> str:
    """Text XML 1.0 can hold: the characters it cannot hold at all are dropped (ElementTree escapes the rest)."""
    return "".join(ch for ch in text if ch in "\t\n\r" or (ord(ch) >= 0x20 and ord(ch) not in (0xFFFE, 0xFFFF)))


def _element(parent, tag: str, text: Optional[str] = None, **attributes: str):
    from xml.etree.ElementTree import SubElement

    element = SubElement(parent, tag, {k: _xml_safe(v) for k, v in attributes.items()})
    if text is not None:
        element.text = _xml_safe(text)
    return element


def junit_xml(
    report: Report,
    *,
    timestamp: Optional[datetime.datetime] = None,
    hostname: Optional[str] = None,
    duration: float = 0.0,
) -> str:
    """The report as a JUnit XML document: one <testsuite> for the profile, one <testcase> per check."""
    from xml.etree import ElementTree

    items = cases(report)
    counts = {key: str(value) for key, value in _counts(items).items()}
    stamp = (timestamp or datetime.datetime.now(datetime.timezone.utc)).replace(microsecond=0).isoformat()
    time = f"{duration:.3f}"
    root = ElementTree.Element("testsuites", {"name": "envcheck", **counts, "time": time})
    suite = _element(root, "testsuite", name=f"envcheck doctor {report.profile.id}", **counts, time=time,
                     timestamp=stamp, **({"hostname": hostname} if hostname else {}))
    properties = _element(suite, "properties")
    for name, value in (("profile", report.profile.id), ("target", report.target), ("envcheck", __version__),
                        ("worst", report.worst.value)):
        _element(properties, "property", name=name, value=value)
    for case in items:
        testcase = _element(suite, "testcase", classname="envcheck." + case.id.split(".", 1)[0], name=case.id, time="0")
        if case.status is Status.FAIL:
            _element(testcase, "failure", case.body, message=case.message, type="fail")
        elif case.status is Status.ERROR:
            _element(testcase, "error", case.body, message=case.message, type="error")
        elif case.status is Status.SKIP:
            _element(testcase, "skipped", message=case.message)
        elif case.status is Status.WARN:  # passes, and says so
            _element(testcase, "system-out", "WARN " + case.message + "\n" + case.body)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(
    report: Report,
    path: Path,
    redact: Optional[Callable[[str], str]] = None,
    *,
    duration: float = 0.0,
) -> None:
    """`doctor --junit FILE`: write the JUnit XML (redacted). An unwritable FILE is a UsageError naming it."""
    if redact is None:
        from .redact import Redactor

        redact = Redactor()
    text = redact(junit_xml(report, hostname=socket.gethostname(), duration=duration))
    from .userfile import write_text

    write_text(path, text, f"--junit {path}")


# --------------------------------------------------------------------------------------------------------------
# GitHub Actions


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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


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
        lines.append(f"| {_MARK[case.status]} | `{case.id}` {_cell(case.title)} | {_cell(found)} | {_cell(wanted)} |")
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
        from .redact import Redactor

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
