"""promise: what `envcheck fix` would fix, read from the plan it would make.

doctor's "`envcheck fix ...` can fix: ..." comes from here, so it names no more than fix does: nothing when the plan
is blocked (an interpreter older than the stack needs), never a step fix only offers (the toolkit without --toolkit).
The command doctor prints with it carries the flags doctor judged with (commands/doctor.fix_command), so that it
makes the plan this promise was read from.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..model import Facts, Finding, Interpreter, Status, Step, canonical_name
from ..profile import Policy
from .pip import requirement_names
from .plan import cutlass_folder, make_plan, plan_blockers
from .steps import Plan, PlanOptions

__all__ = ["fixable"]

_REPORTED = (Status.FAIL, Status.WARN, Status.ERROR)


def _planned_names(plan: Plan, kind: str) -> set[str]:
    return {canonical_name(n) for s in plan.steps if s.kind == kind for argv in s.commands for n in requirement_names(argv)}


def _carried(step: Step, plan: Plan, interpreter: Interpreter, policy: Policy) -> bool:
    """Whether the plan does what this remedy step asks."""
    if step.kind == "pip-uninstall":
        present = {canonical_name(n) for n in step.args if interpreter.installed(canonical_name(n))}
        return present <= _planned_names(plan, "pip-uninstall")
    if step.kind == "pip-install":
        from .planners import never_installed  # loaded by make_plan, which made the plan

        wanted = {canonical_name(n) for n in requirement_names(("--", *step.args))}
        wanted = {n for n in wanted if not never_installed(policy, n)}
        return wanted <= _planned_names(plan, "pip-install")
    return any(s.kind == step.kind for s in plan.steps)


def fixable(findings: Sequence[Finding], facts: Facts, policy: Policy, cutlass_dir: str | None,
            env: Mapping[str, str]) -> tuple[str, ...]:
    """Ids of the findings a plain `envcheck fix` (no flags but --python and --cutlass-dir) would fix. None when no
    plan could run (plan_blockers): then no plan is made."""
    if plan_blockers(findings, facts, policy):
        return ()
    interpreter = facts.interpreter
    plan = make_plan(findings, facts, policy, PlanOptions(
        python=interpreter.executable, state_dir="", cutlass_dir=cutlass_folder(cutlass_dir, facts, env),
        cutlass_url=policy.cutlass.url if policy.cutlass is not None else "",
    ))
    if not plan.runnable:
        return ()
    return tuple(
        f.id for f in findings
        if f.status in _REPORTED and f.remedy is not None and f.remedy.steps
        and all(_carried(step, plan, interpreter, policy) for step in f.remedy.steps)
    )

