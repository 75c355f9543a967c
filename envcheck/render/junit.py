"""A Report as JUnit XML, one testcase per check (and one for the smoke run), for CI systems to read.

`junit_xml` is a pure function Report -> str; `write_junit` touches the file, and redacts the finished text the way
every other output is redacted.

Statuses in JUnit terms: pass -> a passed testcase; warn -> a passed testcase whose <system-out> says WARN (JUnit has
no warning state, and a warning must not fail the build); skip -> <skipped/>; fail -> <failure/>; error (the check
could not be made) -> <error/>. The counts on <testsuite> and <testsuites> are the counts of those elements.
"""

from __future__ import annotations

import datetime
import socket
from pathlib import Path
from typing import Callable, Optional

from .. import __version__
from ..model import Report, Status
from .cases import Case, cases

__all__ = ["junit_xml", "write_junit"]


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
        from ..redact import Redactor

        redact = Redactor()
    text = redact(junit_xml(report, hostname=socket.gethostname(), duration=duration))
    from ..userfile import write_text

    write_text(path, text, f"--junit {path}")
