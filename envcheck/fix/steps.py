"""steps: the plan's values, immutable, and their JSON: what to run (PlannedStep), what a person must do
(Instruction), the options a plan is made with (PlanOptions) and the plan itself (Plan).

A step's commands are argv lists, never a shell line; its JSON shows them with every secret masked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .. import shell
from ..redact import redact_argv
from .pip import PipSources

__all__ = ["SCHEMA_VERSION", "PlanOptions", "PlannedStep", "Instruction", "Plan"]

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class PlanOptions:
    """Everything the plan needs besides findings, facts and policy; paths are absolute."""

    python: str  # the target interpreter
    state_dir: str  # where the constraints file and logs go (written only when the plan is applied)
    cutlass_dir: str
    cutlass_url: str
    pip: tuple[str, ...] = ()  # how pip is run for it (pip.pip_prefix); default: the target's own pip
    sources: PipSources = PipSources()
    no_deps: bool = False
    toolkit: bool = False  # apply the toolkit step instead of only offering it
    toolkit_prefix: str = ""
    remove: tuple[str, ...] = ()  # distributions the user agreed to remove where the profile asks consent (--remove)
    locked: tuple[str, ...] = ()  # `name==version` of a bundle's packages: installed exactly, wherever they differ

    @property
    def pip_command(self) -> tuple[str, ...]:
        return self.pip or (self.python, "-m", "pip")

    @property
    def constraints_file(self) -> str:
        return os.path.join(self.state_dir, "constraints.txt")


@dataclass(frozen=True)
class PlannedStep:
    """One step: what it does, why, and the exact commands (argv lists, no shell).

    kind is a model.Step kind (pip-uninstall, pip-install, cutlass-fetch, cutlass-install, toolkit-install) or one
    of undo's (checkout-restore, remove-path). writes are files written just before the commands run. params carry
    what an in-process step (the fetch) needs; writes_after are written once the commands succeeded. An optional step may fail without stopping the plan.
    """

    kind: str
    what: str
    why: str
    commands: tuple[tuple[str, ...], ...] = ()
    optional: bool = False
    writes: tuple[tuple[str, str], ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    writes_after: tuple[tuple[str, str], ...] = ()  # files written once the commands succeeded
    offer: str = ""  # for an offered step: the flag that applies it ("--toolkit", "--remove cutlass-api")

    def param(self, name: str, default: str = "") -> str:
        return dict(self.params).get(name, default)

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "what": self.what,
            "why": self.why,
            "commands": [list(redact_argv(c)) for c in self.commands],
            "command": shell.line(redact_argv(self.commands[0])) if self.commands else "",
            "optional": self.optional,
            "writes": [path for path, _ in self.writes + self.writes_after],
            "offer": self.offer,
        }


@dataclass(frozen=True)
class Instruction:
    """Something a person must do: envcheck never tries it."""

    check_id: str
    title: str
    text: str
    commands: tuple[tuple[str, ...], ...] = ()

    def to_json(self) -> dict:
        return {"check": self.check_id, "title": self.title, "text": self.text, "commands": [list(c) for c in self.commands]}


@dataclass(frozen=True)
class Plan:
    target: str
    steps: tuple[PlannedStep, ...] = ()
    manual: tuple[Instruction, ...] = ()
    offered: tuple[PlannedStep, ...] = ()  # steps the user may ask for (the toolkit)
    blocked: tuple[str, ...] = ()  # why nothing will run; the steps are shown for information only
    failing: tuple[str, ...] = field(default=(), compare=False)  # ids of the findings that failed

    @property
    def runnable(self) -> bool:
        return bool(self.steps) and not self.blocked

    def to_json(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "target": self.target,
            "blocked": list(self.blocked),
            "steps": [s.to_json() for s in self.steps],
            "offered": [s.to_json() for s in self.offered],
            "manual": [m.to_json() for m in self.manual],
            "failing": list(self.failing),
        }
