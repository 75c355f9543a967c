"""`envcheck doctor`: diagnose (gather -> judge) -> render, and the exit code.

Start-up is a measured goal: the probe is started in the target interpreter first (by __main__, before the CLI is
imported, where it can), and the rest of envcheck (the profile, the judges, the renderers) is imported while it runs.
A fix plan is made only for the table's "can fix" line, and only when a plan could run at all.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..diagnose import diagnose_selected
from ..errors import check_choice
from ..gather import started
from ..gather.target import require_interpreter, resolve_python
from ..userfile import emit, progress

if TYPE_CHECKING:
    from ..gather import Gatherers
    from ..model import Report
    from ..profile import Candidates, Policy

__all__ = ["DoctorOptions", "run_doctor", "fix_command"]


@dataclass(frozen=True)
class DoctorOptions:
    python: Optional[str] = None
    profile: Optional[str] = None  # --profile ID|FILE; None: the one covering the installed torch (profile.choose)
    strict: bool = False  # recipe deviations fail
    cutlass_dir: Optional[str] = None
    output_format: str = "table"
    verbose: bool = False
    no_gpu: bool = False
    gpu_capabilities: tuple[tuple[int, int], ...] = ()  # --gpu-capability: judge for these GPUs, as if present
    evidence: tuple[Path, ...] = ()  # --evidence: smoke results counted as recorded runs
    smoke: bool = False
    junit: Optional[Path] = None
    output: Optional[Path] = None  # -o FILE: written atomically instead of standard output
    anonymize: bool = False  # the host object's hostname as a hash
    bench: bool = False  # embed the last `envcheck bench` (saved under the cache)


NODE_FORMATS = ("prom", "npd")


def _fixable(report: Report, policy: Policy, options: DoctorOptions) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The checks `envcheck fix` would fix, from the plan it would make, the fix command line with doctor's own
    judging flags that makes that plan, and why that plan would stop before any change (planned only when some
    remedy has steps, so a passing machine imports nothing of the fixer)."""
    if not _fixer_needed(report):
        return (), (), ()
    from ..fix.plan import plan_blockers
    from ..fix.promise import fixable

    return (fixable(report.findings, report.facts, policy, options.cutlass_dir, os.environ),
            fix_command(report.target, options), plan_blockers(report.findings, report.facts, policy))


def _fixer_needed(report: Report) -> bool:
    from ..model import Status

    return any(f.remedy is not None and f.remedy.steps and f.status is not Status.PASS for f in report.findings)


def fix_command(target: str, options: DoctorOptions) -> tuple[str, ...]:
    """The `envcheck fix` argv that plans for what doctor judged with these options: the same target interpreter,
    the same profile (--profile ID, or a profile file by its absolute path), the same checkout (--cutlass-dir, as
    the absolute folder fix would use) and, with --no-gpu, the same skipped checks. Without a profile flag fix picks
    the profile doctor picked, from the same torch. --strict is not carried: fix has no such flag, and plans for
    warnings as well as failures, so the checks it fixes are the same."""
    argv = ["envcheck", "fix", "--python", target]
    if options.profile is not None:
        named = Path(options.profile)
        argv += ["--profile", str(named.absolute()) if named.exists() else options.profile]  # else a built-in id
    if options.cutlass_dir:
        argv += ["--cutlass-dir", str(Path(options.cutlass_dir).expanduser().absolute())]
    if options.no_gpu:
        argv.append("--no-gpu")
    argv += [f"--gpu-capability={major}.{minor}" for major, minor in options.gpu_capabilities]
    return tuple(argv)


def _with_judging_flags(report: Report, options: DoctorOptions) -> Report:
    """The report with each remedy's `envcheck fix --python X` (the judges know no flags) carrying the flags doctor
    judged with, as the "can fix" line does: the command shown is the one that fixes what was judged."""
    if not _fixer_needed(report):
        return report
    from ..judge._common import fix_command as plain

    old, new = plain(report.target), fix_command(report.target, options)
    findings = tuple(replace(f, remedy=f.remedy.with_command(old, new)) if f.remedy else f for f in report.findings)
    return replace(report, findings=findings)


def run_doctor(options: DoctorOptions) -> int:
    if options.output_format == "npd":
        return _run_npd(options)
    python, gatherers, candidates = _start(options)
    from ..redact import Redactor
    from ..render import render

    policy, report = _report(python, gatherers, candidates, options)
    report = _with_judging_flags(report, options)
    redact = Redactor()
    shown = redact.deep(report)
    if options.output_format == "prom":
        import time

        from ..render.prom import prom

        text = prom(shown, policy.cutedsl.name, now=time.time())
    else:
        color = options.output_format == "table" and options.output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        fixable, fix_command, blocked = _fixable(report, policy, options) if options.output_format == "table" else ((), (), ())
        text = render(shown, options.output_format, options.verbose, color, fixable, redact.deep(fix_command), blocked)
    if options.junit is not None:  # first: one that cannot be written is exit 2, and the report says no other code
        from ..render.junit import write_junit

        write_junit(shown, options.junit, redact)
    emit(redact(text), options.output)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from ..render.github import emit_github

        # Workflow commands on stderr when stdout carries JSON, so that the JSON stays parseable.
        emit_github(shown, os.environ, sys.stderr if options.output_format in ("json", "prom") else sys.stdout, redact)
    return report.exit_code


def _start(options: DoctorOptions) -> tuple[str, Gatherers, Candidates]:
    """The target, the candidate profiles, and the gatherers running (NVML and nvcc perhaps since before the CLI was
    imported, by __main__). A bad --python, --format or profile is a usage error before the target interpreter
    runs: the probe starts only once the command line is parsed and the profiles it names are read, or, where they
    are only envcheck's own (profile.builtin_only), while they are read."""
    python = resolve_python(options.python)
    from ..profile import builtin_only, candidates
    from ..render.text import FORMATS

    check_choice("--format", options.output_format, FORMATS + NODE_FORMATS)
    if builtin_only(options.profile):  # nothing of the user's to refuse: the target runs while they are read
        gatherers = started(python)
        return python, gatherers, candidates(options.profile)
    named = candidates(options.profile)
    return python, started(python), named


def _report(python: str, gatherers: Gatherers, candidates: Candidates, options: DoctorOptions) -> tuple[Policy, Report]:
    """The chosen profile, and its report: diagnose, the smoke run when asked, and the host object."""
    from ..gather.host import host_of

    runs: tuple = ()
    if options.evidence:  # the reader of contributed runs only where one is given: doctor's start stays light
        from ..profile.results import read_run

        runs = tuple(read_run(path, f"--evidence {path}") for path in options.evidence)
    policy, report = diagnose_selected(
        python, options.cutlass_dir, candidates, no_gpu=options.no_gpu, gatherers=gatherers, strict=options.strict,
        gpu_capabilities=options.gpu_capabilities, runs=runs,
    )
    require_interpreter(python, report.facts.interpreter)  # not Python, or hung: nothing to report on (exit 2)
    if options.smoke:
        from ..smoke import run_smoke
        from ..smoke.reconcile import joined
        result = run_smoke(python, report.facts, policy, progress=progress(sys.stderr))
        report = joined(report, result, no_gpu=options.no_gpu)  # the checks held against the run (smoke.verdicts)
    if options.bench:
        from ..bench import last_bench

        report = replace(report, bench=last_bench() or {"bench": {"status": "skip", "summary": "no `envcheck bench` has run here yet"}})
    from ..own import is_own_environment

    own = is_own_environment(getattr(report.facts.interpreter, "prefix", ""))
    return policy, replace(report, host=host_of(report.facts, anonymize=options.anonymize), envcheck_environment=own)


def _run_npd(options: DoctorOptions) -> int:
    """node-problem-detector's custom plugin: one line, exit 0 OK, 1 problem, 2 unknown (doctor could not tell)."""
    from ..render.npd import NPD_UNKNOWN, NPD_WIDTH, npd
    from ..redact import Redactor

    try:
        report = _report(*_start(options), options)[1]
        code, line = npd(Redactor().deep(report))
    except Exception as exc:  # noqa: BLE001 - the contract has no crash code: anything unforeseen is "unknown"
        code, line = NPD_UNKNOWN, f"UNKNOWN: {type(exc).__name__}: {exc}"[:NPD_WIDTH]
    emit(Redactor()(line) + "\n", options.output)
    return code
