"""envcheck doctor: gather -> judge -> render, and the exit code.

Start-up is a measured goal: the probe is started in the target interpreter first, and the rest of envcheck
(policy parsing, the judges, the renderers) is imported while it runs.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from .errors import UsageError
from .gather import started
from .target import require_interpreter, resolve_python

if TYPE_CHECKING:
    from .gather import Gatherers
    from .model import Report
    from .policy import Policy

__all__ = ["DoctorOptions", "run_doctor", "diagnose"]

@dataclass(frozen=True)
class DoctorOptions:
    python: Optional[str] = None
    policy: Optional[Path] = None
    cutlass_dir: Optional[str] = None
    output_format: str = "table"
    verbose: bool = False
    no_gpu: bool = False
    smoke: bool = False
    junit: Optional[Path] = None


def diagnose(
    python: Optional[str], cutlass_dir: Optional[str], policy: Policy, *, no_gpu: bool = False,
    gatherers: Optional[Gatherers] = None,
) -> Report:
    """Gather and judge: the Report for a target interpreter (the fixer and the smoke stage reuse this).

    `gatherers`, if given, may already be running (envcheck.gather.started)."""
    from .gather import Gatherers, Sources, gather
    from .judge import judge
    from .model import Report

    sources = Sources.for_policy(resolve_python(python), policy, cutlass_dir)
    facts = gather(sources, gatherers or Gatherers())
    target = getattr(facts.interpreter, "executable", sources.python)
    return Report(
        profile=policy.id, target=target, findings=judge(facts, policy, no_gpu=no_gpu), facts=facts,
        policy_source=policy.source,
    )


def run_doctor(options: DoctorOptions) -> int:
    python = resolve_python(options.python)  # a bad --python is a usage error before anything runs
    gatherers = started(python)
    from .policy import resolve
    from .redact import Redactor
    from .render import FORMATS, render

    if options.output_format not in FORMATS:
        raise UsageError(f"--format {options.output_format!r}: expected one of {', '.join(FORMATS)}")
    policy = resolve(options.policy)
    report = diagnose(python, options.cutlass_dir, policy, no_gpu=options.no_gpu, gatherers=gatherers)
    require_interpreter(python, report.facts.interpreter)  # not Python, or hung: nothing to report on (exit 2)
    if options.smoke:
        from .smoke import run_smoke

        def say(message: str) -> None:
            print(f"envcheck: {message}", file=sys.stderr, flush=True)

        report = replace(report, smoke=run_smoke(python, report.facts, policy, progress=say))
    redact = Redactor()
    shown = redact.deep(report)
    color = options.output_format == "table" and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    sys.stdout.write(redact(render(shown, options.output_format, options.verbose, color)))
    sys.stdout.flush()
    if options.junit is not None or os.environ.get("GITHUB_ACTIONS") == "true":
        from .ci import emit_github, write_junit

        if options.junit is not None:
            write_junit(shown, options.junit, redact)
        # Workflow commands on stderr when stdout carries JSON, so that the JSON stays parseable.
        emit_github(shown, os.environ, sys.stderr if options.output_format == "json" else sys.stdout, redact)
    return report.exit_code
