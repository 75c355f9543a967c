"""A report for node monitoring: a Prometheus node-exporter textfile (one gauge per check and status, the smoke
result, the versions as labels of an info gauge)."""

from __future__ import annotations

from typing import Optional

from .. import __version__
from ..model import Report, Status

__all__ = ["prom"]


def _label(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels: object) -> str:
    return "{" + ",".join(f'{key}="{_label(value)}"' for key, value in labels.items()) + "}"


def _package(report: Report, name: str) -> str:
    interpreter = getattr(report.facts, "interpreter", None)
    dist = interpreter.dist(name) if hasattr(interpreter, "dist") else None
    return dist.version if dist else ""


def prom(report: Report, dsl: str = "nvidia-cutlass-dsl", now: Optional[float] = None) -> str:
    """One gauge per check and status (1 for the status it has, 0 for the others), the smoke result, and the
    versions as labels of an info gauge."""
    lines = [
        "# HELP envcheck_check_status Status of an envcheck doctor check: 1 for the status it has.",
        "# TYPE envcheck_check_status gauge",
    ]
    for finding in report.findings:
        for status in Status:
            lines.append(f"envcheck_check_status{_labels(check=finding.id, status=status.value)} {int(finding.status is status)}")
    lines += [
        "# HELP envcheck_ok 1 when every required check passed (doctor exit code 0).",
        "# TYPE envcheck_ok gauge",
        f"envcheck_ok {int(report.exit_code == 0)}",
    ]
    smoke = report.smoke
    if smoke is not None:
        status = getattr(getattr(smoke, "status", None), "value", "unknown")
        lines += [
            "# HELP envcheck_smoke_status Result of the smoke GEMM: 1 for the status it has.",
            "# TYPE envcheck_smoke_status gauge",
        ]
        for value in ("pass", "warn", "fail", "skip", "error"):
            kernel = getattr(smoke, "kernel", None) or ""
            lines.append(f"envcheck_smoke_status{_labels(status=value, kernel=kernel)} {int(status == value)}")
    interpreter = getattr(report.facts, "interpreter", None)
    torch = getattr(interpreter, "torch", None)
    host = report.host
    info = _labels(
        profile=report.profile.id,
        envcheck=__version__,
        torch=getattr(torch, "version", "") or "",
        dsl=_package(report, dsl),
        driver=(host.driver if host and host.driver else ""),
        hostname=(host.hostname if host else ""),
    )
    lines += [
        "# HELP envcheck_info The stack a report saw, as labels.",
        "# TYPE envcheck_info gauge",
        f"envcheck_info{info} 1",
    ]
    if now is not None:
        lines += [
            "# HELP envcheck_last_run_timestamp_seconds When doctor made this report.",
            "# TYPE envcheck_last_run_timestamp_seconds gauge",
            f"envcheck_last_run_timestamp_seconds {now:.3f}",
        ]
    return "\n".join(lines) + "\n"
