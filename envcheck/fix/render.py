"""A plan and an outcome as text for people (the JSON forms are Plan.to_json and Outcome.to_json)."""

from __future__ import annotations

from typing import Sequence

from .. import shell
from ..redact import redact_argv
from .apply import Outcome
from .plan import Plan

__all__ = ["render_plan", "render_outcome"]


def _quote(argv: Sequence[str]) -> str:
    return shell.line(redact_argv(argv))


def render_plan(plan: Plan, title: str) -> str:
    lines = []
    if plan.steps:
        lines.append(f"{title}: {len(plan.steps)} step{'s' if len(plan.steps) != 1 else ''} for {plan.target}")
        for index, step in enumerate(plan.steps, 1):
            lines.append(f"  {index}. {step.what}")
            if step.why:
                lines.append(f"     why: {step.why}")
            for path, _ in step.writes + step.writes_after:
                lines.append(f"     writes {path}")
            for argv in step.commands:
                lines.append(f"     $ {_quote(argv)}")
    elif not plan.manual and not plan.blocked:
        lines.append(f"{title}: nothing to do for {plan.target}")
    if plan.offered:
        lines.append("Offered (applied only when you ask):")
        for step in plan.offered:
            lines.append(f"  - {step.what}" + (f" (with {step.offer})" if step.offer else ""))
            if step.why:
                lines.append(f"    why: {step.why}")
            for argv in step.commands:
                lines.append(f"    $ {_quote(argv)}")
    if plan.manual:
        lines.append("Needs you (envcheck does not try these):")
        for item in plan.manual:
            lines.append(f"  - {item.check_id}: {item.text}")
            for argv in item.commands:
                lines.append(f"      $ {_quote(argv)}")
    for reason in plan.blocked:
        lines.append(f"Stopped before any change: {reason}")
    return "\n".join(lines)


def render_outcome(outcome: Outcome, again: str = "envcheck fix") -> list[str]:
    """What was done, what failed or was interrupted, what was not done, and the command that finishes the job."""
    lines = []
    done = [r for r in outcome.results if r.ok]
    skipped = [r for r in outcome.results if not r.ok and r.step.optional]
    if done:
        lines.append("Done: " + "; ".join(r.step.what for r in done))
    for r in skipped:
        lines.append(f"Not done (optional): {r.step.what}: {r.message}")
    failed = outcome.failed
    if failed is not None:
        lines.append(f"Failed: {failed.step.what}: {failed.message}")
    if outcome.interrupted is not None:
        lines.append(f"Interrupted (Ctrl-C) during: {outcome.interrupted.what} (it may be half done)")
    if outcome.not_done:
        lines.append("Not done: " + "; ".join(s.what for s in outcome.not_done))
        lines.append(f"Run `{again}` again to finish the job" + ("." if outcome.interrupted else " once the cause is fixed."))
    return lines
