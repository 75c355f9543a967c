"""A report as node-problem-detector's custom plugin says it: exit 0 OK, 1 problem, 2 unknown, and one short line on
stdout (its `max_output_length` defaults to 80 characters)."""

from __future__ import annotations

from ..model import Report, Status

__all__ = ["npd", "NPD_OK", "NPD_PROBLEM", "NPD_UNKNOWN", "NPD_WIDTH"]

NPD_OK, NPD_PROBLEM, NPD_UNKNOWN = 0, 1, 2
NPD_WIDTH = 80


def npd(report: Report) -> tuple[int, str]:
    """node-problem-detector's (exit code, line): a problem names the first failing check and what was found."""
    failing = [f for f in report.findings if f.status in (Status.FAIL, Status.ERROR)]
    smoke_status = getattr(getattr(report.smoke, "status", None), "value", None)
    if report.exit_code == 0:
        line = f"OK: {len(report.findings)} checks, profile {report.profile.id}" + (f", smoke {smoke_status}" if smoke_status else "")
        return NPD_OK, line[:NPD_WIDTH]
    if not failing and smoke_status in ("fail", "error"):
        return NPD_PROBLEM, f"smoke {smoke_status}: {getattr(report.smoke, 'summary', '')}"[:NPD_WIDTH]
    if not failing:
        return NPD_UNKNOWN, f"UNKNOWN: doctor exited {report.exit_code}"[:NPD_WIDTH]
    first = failing[0]
    more = f" (+{len(failing) - 1} more)" if len(failing) > 1 else ""
    return NPD_PROBLEM, f"{first.id} {first.status.value}{more}: {first.found}"[:NPD_WIDTH]
