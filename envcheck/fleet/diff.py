"""diff: what changed from environment A (the one that works) to environment B, most important first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet

from .node import Node

__all__ = ["Change", "Diff", "diff", "WORSE"]

# How bad a status is; a check regresses when it gets worse and ends failing.
WORSE = {"pass": 0, "skip": 1, "warn": 2, "fail": 3, "error": 3}
FAILING = ("fail", "error")
# What matters most comes first: the outcome, checks and smoke that broke, then the stack's headline facts, then
# the rest of the checks, then package versions.
ORDER = ("outcome", "check", "smoke", "profile", "driver", "gpu", "torch", "dsl", "package")


@dataclass(frozen=True)
class Change:
    kind: str  # one of ORDER
    subject: str  # a check id, a package name, or the fact's name
    before: str  # "" = absent
    after: str
    regression: bool
    found_before: str = ""  # a check's: what it found in A and in B ("Python 3.12.3 (...)"), "" where unknown
    found_after: str = ""

    @property
    def rank(self) -> tuple[int, int]:
        return (0 if self.regression else 1, ORDER.index(self.kind))


@dataclass(frozen=True)
class Diff:
    a: Node
    b: Node
    changes: tuple[Change, ...]
    left_out: tuple[str, ...] = ()  # packages whose changes are not listed (envcheck's own dependencies)

    @property
    def regressions(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.regression)

    @property
    def exit_code(self) -> int:
        return 1 if self.regressions else 0


def _worse(before: str, after: str) -> bool:
    return after in FAILING and WORSE.get(after, 3) > WORSE.get(before, 0)


def _fact_changes(a: Node, b: Node) -> list[Change]:
    changes = []
    facts = (
        ("profile", "profile", a.profile, b.profile),
        ("driver", "driver", a.driver, b.driver),
        ("gpu", "GPUs", a.gpus, b.gpus),
        ("torch", "torch", " ".join(filter(None, [a.torch, a.torch_cuda and f"(CUDA {a.torch_cuda})"])),
         " ".join(filter(None, [b.torch, b.torch_cuda and f"(CUDA {b.torch_cuda})"]))),
        ("dsl", "nvidia-cutlass-dsl", a.dsl, b.dsl),
    )
    for kind, subject, before, after in facts:
        # A lock says nothing of the driver or GPUs: those are compared only where both sides know them.
        known = (before and after) or kind in ("profile", "torch", "dsl")
        if before != after and known:
            changes.append(Change(kind, subject, before, after, regression=False))
    return changes


def diff(a: Node, b: Node, leave_out: AbstractSet[str] = frozenset()) -> Diff:
    """Every difference from a to b. A regression: b fails where a did not, a check or the smoke run that now fails,
    a check a did not fail that b does not report at all (b proves less than a did),
    or (a is a lock) a locked package b lacks or has at another version. leave_out: canonical names of packages whose
    changes are not listed unless they regress (envcheck's own dependencies say nothing of the stack)."""
    changes: list[Change] = []
    if a.exit_code is not None and b.exit_code is not None and a.exit_code != b.exit_code:
        changes.append(Change("outcome", "doctor exit code", str(a.exit_code), str(b.exit_code), regression=b.exit_code > a.exit_code and b.exit_code != 0))
    if a.kind == b.kind == "report":
        before = {id_: (status, found) for id_, status, found in a.checks}
        after = {id_: status for id_, status, _ in b.checks}
        for id_, status, found in b.checks:
            old, old_found = before.get(id_, ("", ""))
            if old != status:
                changes.append(Change("check", id_, old, status, regression=_worse(old, status), found_before=old_found,
                                      found_after=found))
        for id_, (old, old_found) in before.items():  # a check B did not run no longer shows what it showed in A
            if id_ not in after:
                changes.append(Change("check", id_, old, "", regression=old in ("pass", "warn"), found_before=old_found))
    if a.smoke and b.smoke and a.smoke != b.smoke:
        changes.append(Change("smoke", "smoke", a.smoke, b.smoke, regression=_worse(a.smoke, b.smoke)))
    changes.extend(_fact_changes(a, b))
    old_packages, new_packages = dict(a.packages), dict(b.packages)
    facts = {"torch", "nvidia-cutlass-dsl"}
    left_out = []
    for name in sorted(set(old_packages) | set(new_packages)):
        before, after = old_packages.get(name, ""), new_packages.get(name, "")
        if before == after or name in facts:
            continue
        if a.kind == "lock" and not before:
            continue  # installed beside the lock: not drift (verify says the same)
        if name in leave_out and a.kind != "lock":  # drift from a lock is a regression: never left out
            left_out.append(name)
            continue
        changes.append(Change("package", name, before, after, regression=a.kind == "lock"))
    if a.kind == "lock":  # the headline packages drifting from a lock is drift too
        changes = [Change(c.kind, c.subject, c.before, c.after, True) if c.kind in ("torch", "dsl") else c for c in changes]
    return Diff(a, b, tuple(sorted(changes, key=lambda c: c.rank)), tuple(left_out))
