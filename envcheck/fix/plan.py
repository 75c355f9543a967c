"""plan: the findings that failed, turned into an ordered, immutable Plan of steps, each with its exact commands.

Pure: make_plan reads findings, facts and the policy and returns a Plan; it runs nothing and writes nothing. The
steps come from the planners (planners.py), one per kind of step, in a fixed order; they are imported only when a
plan is made. What cannot be done from user space (the driver, an interpreter older than the policy's) becomes an
Instruction, and so does a variable the job's environment must set (CUTE_DSL_ARCH), even where its check only
warns. plan_blockers says, before any plan is made, why none could run: doctor asks it first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional, Sequence

from ..model import Facts, Finding, Interpreter, Status
from ..paths import default_cutlass_dir
from ..profile import Policy
from .steps import Instruction, Plan, PlanOptions

__all__ = ["make_plan", "plan_blockers", "cutlass_folder"]


def make_plan(findings: Sequence[Finding], facts: Facts, policy: Policy, options: PlanOptions) -> Plan:
    failing = [f for f in findings if f.status.is_problem]
    failing_ids = tuple(f.id for f in failing)
    manual = tuple(_manual(f) for f in findings if _needs_you(f))
    blocked = plan_blockers(findings, facts, policy)
    interpreter = facts.interpreter if isinstance(facts.interpreter, Interpreter) else None
    if interpreter is None:
        return Plan(options.python, (), manual, (), blocked, failing_ids)
    from .planners import plan_parts  # only once a plan is made: doctor imports this module for plan_blockers

    parts = plan_parts(findings, facts, interpreter, policy, options)
    return Plan(
        options.python,
        tuple(s for p in parts for s in p.steps),
        manual,
        tuple(s for p in parts for s in p.offered),
        blocked + tuple(b for p in parts for b in p.blocked),
        failing_ids,
    )


def plan_blockers(findings: Sequence[Finding], facts: Facts, policy: Policy) -> tuple[str, ...]:
    """Why no plan for this target could run, known before any is made: its interpreter could not be read, or it is
    a Python the stack does not run on (envcheck does not replace an interpreter). Empty: a plan may run."""
    if not isinstance(facts.interpreter, Interpreter):
        return (f"the target interpreter could not be read: {getattr(facts.interpreter, 'message', 'unknown')}",)
    interpreter = facts.interpreter
    python = next((f for f in findings if f.id == "python.version" and f.status.is_problem), None)
    if python is not None:
        return (f"{interpreter.executable} is Python {interpreter.version_text}; the stack needs "
                f"{python.wanted or f'Python {policy.python}'} (python.version says what to do)",)
    return ()


def _needs_you(finding: Finding) -> bool:
    """A person's to do: a failure the fixer has no step for, and any finding (a warning's too) whose remedy is a
    variable to set where the job starts (fix never writes a job's environment)."""
    remedy = finding.remedy
    if finding.status.is_problem:
        return remedy is None or not remedy.steps
    return finding.status is not Status.PASS and remedy is not None and bool(remedy.environment)


def _manual(finding: Finding) -> Instruction:
    """What a person must do, as doctor's remedy says it (python.version's names the same interpreter in both)."""
    remedy = finding.remedy
    text = remedy.text if remedy is not None else f"{finding.found}" + (f" (wanted: {finding.wanted})" if finding.wanted else "")
    return Instruction(finding.id, finding.title, text, remedy.commands if remedy is not None else ())


def cutlass_folder(flag: Optional[str], facts: Facts, env: Mapping[str, str]) -> str:
    """Where fix fetches CUTLASS: --cutlass-dir, else the checkout doctor found, else envcheck's default folder."""
    checkout_path = getattr(facts.checkout, "path", None)
    if flag:
        return str(Path(flag).expanduser().absolute())
    if checkout_path:
        return str(Path(checkout_path).absolute())
    return str(default_cutlass_dir(env).absolute())
