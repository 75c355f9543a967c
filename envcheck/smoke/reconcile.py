"""doctor --smoke: the checks' verdicts held against what the smoke run proved, as a finding of its own
(`smoke.verdicts`) instead of two answers that contradict each other. Pure.

A smoke run that proved a kernel outranks a check that fails only as a recipe deviation (published, not shown
necessary, failing under --strict): that check becomes a warning and the exit code follows the run. A check that fails
as a runtime requirement while the run passed is a verdict the run disproves: it keeps failing, and smoke.verdicts
says so as an error, since envcheck itself is wrong there. A smoke that failed on what a passing check judges (the
checks its cause names in causes/signatures.toml) names that check in its cause.

The checks are held against the run only where both answer for the same GPU: not where they were judged for a
compute capability given with --gpu-capability other than the GPU here, or for GPUs of several capabilities.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..causes import SIGNATURES
from ..model import Contradiction, Driver, Facts, Finding, Reconciliation, Remedy, Report, SmokeResult, Status
from ..profile import RECIPE, RUNTIME
from .forensics import libraries_finding

__all__ = ["CHECK_ID", "reconcile", "cause_checks", "elsewhere", "finding", "joined"]

CHECK_ID = "smoke.verdicts"
TITLE = "Whether the smoke run bears the checks out"
WHY = ("The smoke run is the proof the checks stand in for. A recipe requirement is what was published, not shown "
       "necessary: a run that passes outranks it. A runtime requirement says the backend breaks without it: a run "
       "that passes without it shows that verdict wrong here, and a run that fails on what a passing check judges "
       "shows that check missed something.")
REPORT = Remedy(text="The verdict envcheck's profile gives contradicts a real run: report it to envcheck with the "
                "output of `envcheck doctor --smoke --json` attached.")


def cause_checks(cause_id: Optional[str]) -> tuple[str, ...]:
    """The doctor checks that confirm or rule out a smoke failure's cause (its row of causes/signatures.toml)."""
    return next((s.checks for s in SIGNATURES if s.id == cause_id), ())


def elsewhere(facts: Optional[Facts], no_gpu: bool = False) -> str:
    """Why the checks and the smoke run answer for different GPUs, or "" where they answer for the same one: the
    checks were judged for the GPUs of facts.gpus (those given with --gpu-capability win; with --no-gpu only those),
    the smoke ran on one GPU here."""
    if facts is None:
        return ""
    judged = tuple(dict.fromkeys(g.capability_text for g in facts.gpus if g.given or not no_gpu))
    here = facts.driver.gpus if isinstance(facts.driver, Driver) else ()
    seen = tuple(dict.fromkeys(g.capability_text for g in here))
    if not judged or (len(seen) == 1 and judged == seen):
        return ""
    if len(seen) > 1:
        return (f"the checks were judged for GPUs of compute capability {' and '.join(judged)}, and the smoke ran on "
                "one GPU: what it proved holds for that one only")
    return (f"the checks were judged for compute capability {' and '.join(judged)} (given with --gpu-capability), "
            f"a smoke runs only on the GPU here ({' and '.join(seen) or 'none seen'})")


def reconcile(findings: tuple[Finding, ...], smoke: SmokeResult, named: tuple[str, ...] = (),
              apart: str = "") -> Reconciliation:
    """The checks (`findings`) held against the smoke run. named: the checks the smoke's cause names
    (cause_checks); apart: why they answer for different GPUs (elsewhere), "" where for the same."""
    where = f" on {smoke.gpu}" if smoke.gpu else ""
    if apart:
        return Reconciliation(Status.SKIP, f"not held against the smoke run: {apart}", smoke.status, smoke.kernel,
                              smoke.cause_id)
    if smoke.status in (Status.PASS, Status.WARN) and smoke.kernel:
        found = tuple(Contradiction(f.id, f.status, f.basis or RUNTIME,
                                    "overruled" if f.basis == RECIPE else "disproved")
                      for f in findings if f.status is Status.FAIL)
        status = (Status.ERROR if any(c.outcome == "disproved" for c in found) else Status.WARN if found
                  else Status.PASS)
        said = _passed(found, f"{smoke.kernel}{where}")
        return Reconciliation(status, said, smoke.status, smoke.kernel, None, found)
    if not smoke.status.is_problem:  # a skip, or a pass that names no kernel: it proved nothing to hold them against
        return Reconciliation(Status.SKIP, f"the smoke run proved no kernel ({smoke.status.value}): nothing to hold "
                              "the checks against", smoke.status, smoke.kernel, smoke.cause_id)
    judged = tuple(f for f in findings if f.id in named and f.status is not Status.SKIP)
    cause = smoke.cause_id or "an unnamed cause"
    if not judged:
        return Reconciliation(Status.SKIP, f"the smoke failed with {cause}, which no check judges here",
                              smoke.status, None, smoke.cause_id)
    explained = tuple(f.id for f in judged if f.status.is_problem)
    if explained:
        return Reconciliation(Status.PASS, f"the smoke failed with {cause}, as {_ids(explained)} found",
                              smoke.status, None, smoke.cause_id)
    found = tuple(Contradiction(f.id, f.status, "", "missed") for f in judged)
    said = (f"the smoke failed with {cause} where {_verdicts(found)}: the run contradicts "
            f"{'that verdict' if len(found) == 1 else 'those verdicts'}")
    return Reconciliation(Status.WARN, said, smoke.status, None, smoke.cause_id, found)


def _passed(found: tuple[Contradiction, ...], ran: str) -> str:
    if not found:
        return f"no check fails where the smoke run passed: {ran} ran"
    parts = []
    overruled = tuple(c.check for c in found if c.outcome == "overruled")
    disproved = tuple(c.check for c in found if c.outcome == "disproved")
    if disproved:
        parts.append(f"{_ids(disproved)} {_verb(disproved, 'fails', 'fail')} as a runtime requirement (the profile "
                     f"says the backend breaks without it), yet {ran} ran: that verdict is wrong here, and it keeps "
                     "failing the run until the profile is corrected")
    if overruled:
        parts.append(f"{_ids(overruled)} {_verb(overruled, 'fails', 'fail')} only as a recipe deviation (--strict), "
                     f"and {ran} ran with it: the run outranks the recipe, so the exit code follows the run")
    return "; ".join(parts)


def _verdicts(found: tuple[Contradiction, ...], passed: str = "passed", warned: str = "only warned",
              comma: str = " ") -> str:
    """"cutedsl.version and cutlass-api.install passed; nvgemm.deps only warned", the verbs as given."""
    groups = ((tuple(c.check for c in found if c.status is status), verb)
              for status, verb in ((Status.PASS, passed), (Status.WARN, warned)))
    return "; ".join(f"{_ids(ids)}{comma}{verb}" for ids, verb in groups if ids)


def _ids(ids: tuple[str, ...]) -> str:
    return ", ".join(ids[:-1]) + " and " + ids[-1] if len(ids) > 1 else ids[0]


def _verb(ids: tuple[str, ...], one: str, many: str) -> str:
    return one if len(ids) == 1 else many


def finding(reconciliation: Reconciliation) -> Finding:
    """smoke.verdicts: the reconciliation for people and CI, one line each contradiction in its details."""
    details = tuple(f"{c.check}: {c.status.value}{f' ({c.basis})' if c.basis else ''}, {c.outcome} by the smoke run"
                    for c in reconciliation.contradictions)
    remedy = REPORT if reconciliation.of("disproved") else None  # a miss: the smoke's own remedy says what to do
    return Finding(CHECK_ID, TITLE, reconciliation.status, reconciliation.said, why=WHY, remedy=remedy, details=details)


def _noted(check: Finding, contradiction: Contradiction, reconciliation: Reconciliation) -> Finding:
    """The contradicted check, saying so (and, overruled, a warning: the run outranks the recipe)."""
    ran = reconciliation.kernel
    note = {
        "overruled": f"The smoke ran {ran} with it: the run outranks the recipe ({CHECK_ID}).",
        "disproved": f"The smoke ran {ran} anyway: this verdict is contradicted by the run ({CHECK_ID}).",
        "missed": f"The smoke failed with {reconciliation.cause_id}, which this check judges ({CHECK_ID}).",
    }[contradiction.outcome]
    status = Status.WARN if contradiction.outcome == "overruled" else check.status
    return replace(check, status=status, found=f"{check.found} {note}".strip())


def _named_in_cause(smoke: SmokeResult, reconciliation: Reconciliation) -> SmokeResult:
    """The smoke's cause, naming each passing check whose verdict its failure contradicts."""
    missed = reconciliation.of("missed")
    if not missed:
        return smoke
    said = f" This contradicts {_verdicts(missed, 'which passed', 'which only warned', ', ')}."
    return replace(smoke, cause=(smoke.cause or "").rstrip() + said, summary=smoke.summary.rstrip() + said)


def joined(report: Report, smoke: SmokeResult, *, no_gpu: bool = False) -> Report:
    """The report with the smoke run in it: the run, what it loaded (smoke.libraries), and the checks held against
    it (smoke.verdicts, each contradicted check saying so, the smoke's cause naming the checks it contradicts)."""
    findings = report.findings + (libraries_finding(smoke, report),)
    reconciliation = reconcile(findings, smoke, cause_checks(smoke.cause_id), elsewhere(report.facts, no_gpu))
    by_check = {c.check: c for c in reconciliation.contradictions}
    findings = tuple(_noted(f, by_check[f.id], reconciliation) if f.id in by_check else f for f in findings)
    return replace(report, smoke=_named_in_cause(smoke, reconciliation), findings=findings + (finding(reconciliation),),
                   reconciliation=reconciliation)
