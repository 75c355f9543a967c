"""Which packages a lock holds: the stack's roots (what the profile names) and everything they pull in, as installed
in the target interpreter, followed along Requires-Dist with the target's own markers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from packaging.requirements import InvalidRequirement, Requirement

from ..model import Distribution, Interpreter, canonical_name
from ..profile import Policy


@dataclass(frozen=True)
class Root:
    name: str  # canonical
    extras: tuple[str, ...]
    specifier: str  # what the profile asks for ("" = any version)
    level: str  # the profile's word for it: "required", "recommended" or "optional" (as doctor says it)
    what: str  # the profile key it comes from, for messages

    @property
    def required(self) -> bool:
        return self.level == "required"


def stack_roots(policy: Policy) -> tuple[Root, ...]:
    """The packages a profile names: torch, the DSL with its extras, the CUTLASS checkout's package (if the profile
    has one) with its extras, then every [[packages]] entry."""
    torch_name = canonical_name(policy.torch_requirement.name)
    torch_spec = policy.torch & policy.torch_requirement.specifier
    roots = [
        Root(torch_name, tuple(sorted(policy.torch_requirement.extras)), str(torch_spec), "required", "torch.version"),
        Root(policy.cutedsl.name, policy.cutedsl.extras, str(policy.cutedsl.specifier), "required", "cutedsl.version"),
    ]
    if policy.cutlass is not None:
        roots.append(Root(canonical_name(policy.cutlass.distribution), policy.cutlass.extras, "", "required", "cutlass"))
    for rule in policy.packages:
        roots.append(Root(rule.name, rule.extras, str(rule.specifier), rule.level, f"packages.{rule.name}"))
    seen: dict[str, Root] = {}
    for root in roots:
        seen.setdefault(root.name, root)
    return tuple(seen.values())


@dataclass(frozen=True)
class Walked:
    """A distribution of the target that the stack needs, and what needs it."""

    dist: Distribution
    extras: tuple[str, ...]
    dependencies: tuple[str, ...]  # canonical names of the installed distributions it requires


@dataclass(frozen=True)
class Walk:
    packages: tuple[Walked, ...]  # in the order found: roots first
    missing: tuple[tuple[str, str], ...]  # (requirement, needed by) that the target does not have


def walk(interpreter: Interpreter, roots: Iterable[tuple[str, Sequence[str]]]) -> Walk:
    """Follow Requires-Dist from the roots through the target's installed distributions, with its markers."""
    environment = dict(interpreter.markers)
    extras: dict[str, set[str]] = {}
    order: list[str] = []
    deps: dict[str, list[str]] = {}
    missing: list[tuple[str, str]] = []
    queue: list[tuple[str, tuple[str, ...], str]] = [(canonical_name(n), tuple(e), "") for n, e in roots]
    while queue:
        name, wanted, needed_by = queue.pop(0)
        dist = interpreter.dist(name)
        if dist is None:
            if needed_by:
                missing.append((name, needed_by))
            continue
        known = extras.get(name)
        new = set(wanted) - (known or set())
        if known is not None and not new:
            continue
        if known is None:
            order.append(name)
            extras[name] = set()
            deps[name] = []
        extras[name] |= set(wanted)
        for text in dist.requires:
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            if requirement.marker is not None:
                active = ("",) + tuple(sorted(extras[name]))
                if not any(requirement.marker.evaluate({**environment, "extra": extra}) for extra in active):
                    continue
            child = canonical_name(requirement.name)
            if interpreter.dist(child) is None:
                missing.append((str(requirement), f"{name} {dist.version}"))
                continue
            if child not in deps[name]:
                deps[name].append(child)
            queue.append((child, tuple(canonical_name(e) for e in requirement.extras), name))
    packages = tuple(
        Walked(interpreter.dist(n), tuple(sorted(extras[n])), tuple(deps[n])) for n in order  # type: ignore[arg-type]
    )
    unique_missing = tuple(dict.fromkeys(missing))
    return Walk(packages, unique_missing)
