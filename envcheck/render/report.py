"""A doctor Report, many texts — a table for people, versioned JSON for programs, markdown for an issue.

Every format is made from the same Report; redaction is applied by the caller to the finished text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .. import __version__, shell
from ..jsonanswer import answer
from ..model import Report, Status, plain
from ..terminal import paint
from ..words import columns, fit, wrap
from .text import COLOR, FORMATS, LABEL, MARK, markdown_cell, profile_from, profile_line

if TYPE_CHECKING:
    from ..model import SmokeResult

__all__ = ["SCHEMA_VERSION", "FORMATS", "render", "to_json_data", "table", "markdown", "summary_counts", "smoke_lines"]

SCHEMA_VERSION = 2  # 2: `profile` is an object {id, reason, source, verified}

# Said first where doctor judged the environment it runs in and found no torch there (Report.envcheck_itself): the
# README's first command does, and its user means the environment their job runs in.
OWN_ENVIRONMENT = ("This is envcheck's own environment, and it holds no torch: not the one your torch.compile job "
                   "runs in. To check that one, name its Python: `envcheck doctor --python PATH`.")


def render(report: Report, fmt: str, verbose: bool = False, color: bool = False, fixable: Sequence[str] = (),
           fix_command: Sequence[str] = (), blocked: Sequence[str] = ()) -> str:
    """fixable: the ids that `fix_command` (an `envcheck fix` argv) would fix (envcheck.fix.promise), named under the
    table; blocked: why that command would stop before any change (fix.plan.plan_blockers), said there instead."""
    if fmt == "json":
        return answer(to_json_data(report), report.exit_code, report.status.value)
    if fmt == "markdown":
        return markdown(report, verbose)
    return table(report, verbose, color, fixable, fix_command, blocked)


def summary_counts(report: Report) -> dict[str, int]:
    counts = {s.value: 0 for s in Status}
    for finding in report.findings:
        counts[finding.status.value] += 1
    return counts


def to_json_data(report: Report) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "envcheck_version": __version__,
        "profile": plain(report.profile),
        "policy_source": report.policy_source,
        "target": report.target,
        "envcheck_environment": report.envcheck_environment,
        "status": report.status.value,
        "exit_code": report.exit_code,
        "summary": summary_counts(report),
        "checks": [plain(f) for f in report.findings],
        "smoke": report.smoke.to_dict() if report.smoke is not None else None,
        "reconciliation": plain(report.reconciliation) if report.reconciliation is not None else None,
        "bench": report.bench,
        "host": plain(report.host) if report.host is not None else None,
        "facts": plain(report.facts) if report.facts is not None else None,
    }


def bench_line(saved: dict) -> str:
    """The last bench, in one line: its status and decision (envcheck bench prints the whole table)."""
    bench = saved.get("bench") or {}
    return f"bench  {str(bench.get('status', '?')).upper():5}  {bench.get('summary', '')}"


def smoke_lines(smoke: SmokeResult) -> list[str]:
    """The smoke result for people, as the smoke command prints it."""
    from .smoke import render_text

    return render_text(smoke).splitlines()


def _paint(text: str, status: Status, color: bool) -> str:
    return paint(text, COLOR[status]) if color else text


def _from(report: Report, quote: str = "") -> str:
    """Where the policy came from, when it is not the built-in profile: a pyproject.toml above the folder counts."""
    return profile_from(report.profile, quote)


def table(report: Report, verbose: bool = False, color: bool = False, fixable: Sequence[str] = (),
          fix_command: Sequence[str] = (), blocked: Sequence[str] = ()) -> str:
    width = columns()
    id_width = max(len(f.id) for f in report.findings) if report.findings else 10
    indent = " " * (2 + 6 + 1 + id_width + 2)
    lines = [f"envcheck {__version__} doctor — profile {report.profile.id}{_from(report)}, target {report.target}"]
    if report.envcheck_itself:
        lines.extend(wrap(OWN_ENVIRONMENT, width, "  ", "    "))
    if report.profile.reason:
        lines.extend(wrap(profile_line(report.profile), width, "  ", "    "))
    given = report.facts.given_gpus if report.facts is not None else ()
    if given:  # --gpu-capability: the verdicts are for GPUs that are not here
        shown = ", ".join(g.capability_text for g in given)
        lines.append(f"  judged for compute capability {shown}: given with --gpu-capability, not seen here")
    lines.append("")

    def block(label: str, text: str) -> None:
        lines.extend(wrap(f"{label}{text}", width, indent, indent + "  "))

    for finding in report.findings:
        head = f"  {_paint(LABEL[finding.status].ljust(5), finding.status, color)} {finding.id.ljust(id_width)}  "
        lines.extend(wrap(finding.found, width, head, indent))
        problem = finding.status not in (Status.PASS, Status.SKIP)
        if problem or verbose:
            if finding.wanted and (problem or verbose):
                block("wanted: ", finding.wanted)
            if verbose and finding.why:
                block("why: ", finding.why)
            if finding.remedy and problem:
                block("fix: ", finding.remedy.text)
                for command in finding.remedy.commands:  # never wrapped: a command pastes as one line
                    lines.append(f"{indent}$ {shell.line(command)}")
            if verbose:
                for detail in finding.details:
                    block("· ", detail)
    if report.smoke is not None:
        lines.append("")
        lines.extend(fit("\n".join(smoke_lines(report.smoke)), width).split("\n"))
    if report.bench is not None:
        lines += ["", bench_line(report.bench)]
    counts = summary_counts(report)
    lines.append("")
    parts = [f"{counts[s.value]} {name}" for s, name in ((Status.PASS, "passed"), (Status.WARN, "warned"), (Status.FAIL, "failed"), (Status.SKIP, "skipped"), (Status.ERROR, "errors")) if counts[s.value]]
    lines.append(f"{len(report.findings)} checks: {', '.join(parts)}.")
    command = shell.line(fix_command or ("envcheck", "fix", "--python", report.target))
    if fixable:
        lines.append(f"`{command}` can fix: {', '.join(fixable)} (it shows its plan first).")
    elif blocked:
        lines.append(f"`{command}` would stop before any change: {'; '.join(blocked)}.")
    if not verbose:
        lines.append("Run with -v for why each check matters and every detail.")
    return "\n".join(lines) + "\n"


def markdown(report: Report, verbose: bool = False) -> str:
    counts = summary_counts(report)
    lines = [
        f"### envcheck doctor: {report.status.value}",
        "",
        f"Profile `{report.profile.id}`{_from(report, '`')}, target `{report.target}`, envcheck {__version__}. "
        + ", ".join(f"{n} {s}" for s, n in counts.items() if n),
        "",
        *([OWN_ENVIRONMENT, ""] if report.envcheck_itself else []),
        *([profile_line(report.profile, "`", capital=True) + ".", ""] if report.profile.reason else []),
        "| | check | found | wanted |",
        "|---|---|---|---|",
    ]
    for f in report.findings:
        lines.append(f"| {MARK[f.status]} {f.status.value} | `{f.id}` | {markdown_cell(f.found)} | {markdown_cell(f.wanted)} |")
    todo = [f for f in report.findings if f.status not in (Status.PASS, Status.SKIP) and f.remedy]
    if todo:
        lines += ["", "#### What to do", ""]
        for f in todo:
            lines.append(f"- **`{f.id}`**: {f.remedy.text}")
            if f.remedy.commands:
                lines.append("  ```sh")
                lines.extend(f"  {shell.line(c)}" for c in f.remedy.commands)
                lines.append("  ```")
    if verbose:
        lines += ["", "<details><summary>Why each check matters</summary>", ""]
        lines.extend(f"- `{f.id}`: {f.why}" for f in report.findings if f.why)
        lines += ["", "</details>"]
    if report.smoke is not None:
        lines += ["", "#### Smoke", ""] + [f"    {line}" for line in smoke_lines(report.smoke)]
    if report.bench is not None:
        lines += ["", "#### Bench", "", f"    {bench_line(report.bench)}"]
    system = system_lines(report)
    if system:
        lines += ["", "#### System", "", *system]
    return "\n".join(lines) + "\n"


def system_lines(report: Report) -> list[str]:
    """The bug-report facts as collect_env gives them: OS, kernel, libc, compiler, CPU, and the target's Python, torch
    and driver, one `- name: value` line each (facts.system; none for a report without them)."""
    from ..model import Driver, Interpreter, System

    facts = report.facts
    system = facts.system if facts is not None else None
    if not isinstance(system, System):
        return []
    interpreter = facts.interpreter if isinstance(facts.interpreter, Interpreter) else None
    driver = facts.driver if isinstance(facts.driver, Driver) else None
    rows = [
        ("OS", system.os), ("kernel", " ".join(p for p in (system.kernel, system.machine) if p) or None),
        ("libc", system.libc), ("C compiler", system.compiler), ("CC", system.cc),
        ("CPU", f"{system.cpu or 'unknown'}" + (f" ({system.cpus} logical CPUs)" if system.cpus else "")),
        ("Python", f"{interpreter.version_text} ({interpreter.executable})" if interpreter else None),
        ("torch", f"{interpreter.torch.version} (CUDA {interpreter.torch.cuda or 'none: a CPU build'})"
         if interpreter and interpreter.torch else None),
        ("driver", f"{driver.version} (CUDA {driver.cuda})" if driver else None),
    ]
    return [f"- {name}: {markdown_cell(value)}" for name, value in rows if value]
