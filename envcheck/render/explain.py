"""explain's causes as text for people and as JSON: each cause, its evidence line, its remedy, the doctor checks
that confirm it (and, with --python, what doctor found there)."""

from __future__ import annotations

from typing import Optional

from .. import shell
from ..causes.log import Explained, source_name
from ..model import Finding, ProfileChoice, Report, plain
from ..model.candidates import lost_text
from ..words import counted
from .candidates import candidate_lines
from .text import profile_json, profile_line, remedy_lines

__all__ = ["SCHEMA_VERSION", "to_dict", "render_text"]

SCHEMA_VERSION = 1
SHOWN = 300  # characters of an evidence line shown


def _short(text: str) -> str:
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _findings(report: Optional[Report], checks: tuple[str, ...]) -> list[Finding]:
    if report is None:
        return []
    return [f for f in (report.finding(c) for c in checks) if f is not None]


def to_dict(explained: Explained, profile: Optional[ProfileChoice] = None) -> dict:
    """The JSON; `profile`: the one the causes' remedies were made by, and why (doctor's `profile` object)."""
    return {
        "schema_version": SCHEMA_VERSION,
        **({"profile": profile_json(profile)} if profile is not None else {}),
        "source": explained.source,
        "lines_read": explained.lines_read,
        "truncated": False,  # schema 1 kept: a log is read to its end now
        "found": bool(explained.causes),
        "causes": [
            {
                "id": f.cause.id,
                "text": f.cause.text,
                "evidence": {"line": f.line, "text": _short(f.cause.evidence)},
                "remedy": plain(f.cause.remedy),
                "checks": list(f.checks),
                "doctor": [
                    {"id": d.id, "status": d.status.value, "found": d.found, "wanted": d.wanted}
                    for d in _findings(explained.doctor, f.checks)
                ],
            }
            for f in explained.causes
        ],
        "target": explained.doctor.target if explained.doctor else None,
        "candidates": {"gemms": [g.to_dict() for g in explained.candidates], "lost": lost_text(explained.candidates)},
        **({"python": {"path": explained.interpreter[0], "from": explained.interpreter[1]}}
           if explained.interpreter else {}),
    }


def render_text(explained: Explained, profile: Optional[ProfileChoice] = None) -> str:
    read, where = counted(explained.lines_read, "line"), source_name(explained.source)
    if not explained.causes:
        return f"explain  no known failure of the stack in {where} ({read})\n"
    first = "; the first explains it" if len(explained.causes) > 1 else ""
    lines = [f"explain  {counted(len(explained.causes), 'known failure')} in {where} ({read}){first}"]
    if profile is not None:  # the remedies are the profile's
        lines.append(f"  {profile_line(profile)}")
    if explained.interpreter:  # and their interpreter the one the log's paths name
        path, site = explained.interpreter
        lines.append(f"  python  {path}, read from the log's paths ({site} holds its torch); --python PY names "
                     "another")
    for index, found in enumerate(explained.causes):
        cause = found.cause
        lines.append("")
        lines.append(f"{'cause' if index == 0 else 'also':5}  {cause.id}: {cause.text}")
        lines.append(f"  seen      line {found.line}: {_short(cause.evidence)}")
        if cause.remedy is not None:
            lines.extend(remedy_lines(cause.remedy))
        if found.checks:
            target = (explained.doctor.target if explained.doctor else  # the remedies' python
                      explained.interpreter[0] if explained.interpreter else "python3")
            doctor = shell.line(("envcheck", "doctor", "--python", target))
            lines.append(f"  check     $ {doctor}   # {', '.join(found.checks)}")
        for finding in _findings(explained.doctor, found.checks):
            lines.append(f"  doctor    {finding.id} {finding.status.value.upper()}: {_short(finding.found)}")
    lost = lost_text(explained.candidates)
    if lost:
        lines += ["", f"lost   {lost}", *candidate_lines(explained.candidates, None)]
    return "\n".join(lines) + "\n"
