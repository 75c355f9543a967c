"""A plan and an outcome as text for people (the JSON forms are Plan.to_json and Outcome.to_json), and where the
values a plan uses came from (the profile's file, the file and key of each URL, a flag), in text and JSON alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .. import shell
from ..profile import Policy
from ..redact import redact_argv, redact_url
from ..fix.apply import Outcome
from ..fix.pip import PipSources
from ..fix.pipconfig import PipSetup
from ..fix.steps import Plan

__all__ = ["Origin", "value_origins", "set_by", "render_origins", "render_pip", "render_plan", "render_outcome"]

_BUILTIN = "built-in profile "


@dataclass(frozen=True)
class Origin:
    """One value the plan goes by, and what set it: a file and its key, or a flag."""

    what: str  # in the user's words: "profile", "torch's index", "CUTLASS URL"
    value: str
    source: str  # a file (`/repo/pyproject.toml [tool.envcheck]`, `built-in profile X`) or a flag (`--index-url`)
    key: str = ""  # the key in that file; "" for a flag

    def to_json(self) -> dict:
        return {"what": self.what, "value": redact_url(self.value), "source": self.source, "key": self.key or None}

    def text(self) -> str:
        where = f"{self.source}, key {self.key}" if self.key else self.source
        return f"{self.what}: {redact_url(self.value) or '(none)'} (set by {where})"


def value_origins(policy: Policy, sources: PipSources, cutlass_url: str, cutlass_flag: bool = False,
                  bundle: bool = False) -> tuple[Origin, ...]:
    """The profile, where packages come from (torch's index) and the CUTLASS URL, each with the file and key, or
    the flag, that set it. cutlass_flag: --cutlass-url gave the URL; bundle: --bundle gave packages and CUTLASS."""
    origins = [Origin("profile", policy.id, policy.source)]
    if sources.given:  # the user's sources replace every index a step would bring
        flag = ("--bundle" if bundle else "--index-url" if sources.index_url else "--no-index" if sources.no_index
                else "--find-links")
        origins.append(Origin("packages from", sources.index_url or ", ".join(sources.find_links) or "(none)", flag))
    elif policy.torch_index_url:
        key = "torch.index-url"
        origins.append(Origin("torch's index", policy.torch_index_url, policy.origin(key), key))
    if policy.cutlass is not None and cutlass_url:
        flag = "--bundle" if bundle else "--cutlass-url" if cutlass_flag else ""
        key = "" if flag else "cutlass.url"
        origins.append(Origin("CUTLASS URL", cutlass_url, flag or policy.origin(key), key))
    return tuple(origins)


def set_by(policy: Policy) -> dict[str, list[str]]:
    """The keys each file other than a built-in profile set, in the order read: `{file: [key, ...]}`."""
    keys = [key for key, source in policy.origins if not source.startswith(_BUILTIN)]
    parents = {key[:i] for key in keys for i, ch in enumerate(key) if ch in ".["}
    out: dict[str, list[str]] = {}
    for key, source in policy.origins:
        if not source.startswith(_BUILTIN) and key not in parents:
            out.setdefault(source, []).append(key)
    return out


def render_origins(origins: Sequence[Origin], files: dict[str, list[str]]) -> str:
    lines = ["Where its values come from:"] + [f"  {origin.text()}" for origin in origins]
    for source, keys in files.items():
        shown = ", ".join(keys[:12]) + (f" and {len(keys) - 12} more" if len(keys) > 12 else "")
        lines.append(f"  set by {source}: {shown}")
    return "\n".join(lines)


def render_pip(setup: PipSetup) -> str:
    """Which pip configuration files pip reads and which it does not (and why), and where its packages come from,
    step by step, with the file that set an index or a wheel folder."""
    lines = ["pip runs --isolated and without PIP_CONFIG_FILE: it reads the machine-wide configuration files only"]
    for item in setup.files:
        keys = ", ".join(item.keys) or "nothing set"
        lines.append(f"  read: {item.path} ({item.scope}: {keys})" if item.read
                     else f"  not read: {item.path} ({item.scope}: {keys}; {item.why})")
    for source in setup.sources:
        what = "index" if source.kind == "index" else "wheels from"
        origin = f"from {source.origin}: " if source.origin else ""
        default = " (pip's default)" if source.default else ""
        steps = ", ".join(str(n) for n in source.steps)
        lines.append(f"  {what}: {origin}{redact_url(source.value)}{default}, "
                     f"step{'s' if len(source.steps) > 1 else ''} {steps}")
    if not setup.sources:
        lines.append("  no step takes packages from an index or a wheel folder")
    return "\n".join(lines)


def _quote(argv: Sequence[str]) -> str:
    return shell.line(redact_argv(argv))


def render_plan(plan: Plan, title: str) -> str:
    lines = []
    written: set[tuple[str, str]] = set()  # a file several steps write alike (the constraints): named once
    if plan.steps:
        lines.append(f"{title}: {len(plan.steps)} step{'s' if len(plan.steps) != 1 else ''} for {plan.target}")
        for index, step in enumerate(plan.steps, 1):
            lines.append(f"  {index}. {step.what}")
            if step.why:
                lines.append(f"     why: {step.why}")
            for path, text in step.writes + step.writes_after:
                if (path, text) not in written:
                    lines.append(f"     writes {path}")
                written.add((path, text))
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
        if failed.cause is not None:  # the tool's own last words, under the account of what they mean
            lines += [f"  {failed.cause.tool}: {line}" for line in failed.cause.lines]
    if outcome.interrupted is not None:
        lines.append(f"Interrupted (Ctrl-C) during: {outcome.interrupted.what} (it may be half done)")
    if outcome.not_done:
        lines.append("Not done: " + "; ".join(s.what for s in outcome.not_done))
        lines.append(f"Run `{again}` again to finish the job" + ("." if outcome.interrupted else " once the cause is fixed."))
    return lines
