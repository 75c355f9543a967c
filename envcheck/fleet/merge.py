"""fleet: many nodes' reports as one view: groups of nodes with the same outcome, per-check counts, outliers."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

from .node import Node

__all__ = ["Group", "Outlier", "Fleet", "merge", "FACTS"]

# The facts a node should share with the majority, and how to read each from a node.
FACTS: tuple[tuple[str, Callable[[Node], str]], ...] = (
    ("driver", lambda n: n.driver),
    ("torch", lambda n: n.torch),
    ("dsl", lambda n: n.dsl),
    ("profile", lambda n: n.profile),
    ("gpu", lambda n: n.gpus),
)


@dataclass(frozen=True)
class Group:
    """Nodes with the same outcome: the same failing checks (with what was found) and the same smoke result."""

    outcome: str  # "all pass", "cuda.driver fail (driver 570.1); smoke fail", or "nvgemm.deps warn (...)"
    failed: bool
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class Outlier:
    node: str
    fact: str  # one of FACTS
    value: str
    majority: str


@dataclass(frozen=True)
class Fleet:
    nodes: tuple[Node, ...]  # every node, the unreadable ones too
    groups: tuple[Group, ...]  # of the readable nodes, largest first
    checks: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # check id -> (status, count), report order
    outliers: tuple[Outlier, ...]
    smoke: tuple[tuple[str, int], ...]  # smoke status -> count ("none" where a report has no smoke run)
    majority: tuple[tuple[str, str], ...]  # fact -> the majority value

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes if n.failed)

    @property
    def unreadable(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.problem)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def outcome_key(node: Node) -> tuple[str, ...]:
    """What makes two nodes' outcomes the same: their failing checks and a failed smoke run; where nothing failed,
    the checks that warned (a node that warns is not "all pass")."""
    key = tuple(f"{id_} {status}" for id_, status, _ in node.checks if status in ("fail", "error"))
    if node.smoke in ("fail", "error"):
        key += (f"smoke {node.smoke}",)
    if not key and node.failed:
        key = (f"doctor exit code {node.exit_code}",)
    if not key:
        key = tuple(f"{id_} warn" for id_, status, _ in node.checks if status == "warn")
        key += ("smoke warn",) if node.smoke == "warn" else ()
    return key


def outcome_text(key: tuple[str, ...], members: list[Node]) -> str:
    """The outcome for people: each failing check with what was found, where every node of the group found the same."""
    if not key:
        return "all pass"
    parts = []
    for part in key:
        id_ = part.rsplit(" ", 1)[0]
        found = {next((f for i, _, f in n.checks if i == id_), "") for n in members}
        parts.append(f"{part} ({found.pop()})" if len(found) == 1 and "" not in found else part)
    return "; ".join(parts)


def merge(nodes: tuple[Node, ...]) -> Fleet:
    """The view of the nodes. Unreadable ones fail and are listed apart: groups, counts and the majority are the
    readable nodes'."""
    every, nodes = nodes, tuple(n for n in nodes if not n.problem)
    grouped: dict[tuple[str, ...], list[Node]] = {}
    for node in nodes:
        grouped.setdefault(outcome_key(node), []).append(node)
    groups = tuple(
        Group(outcome_text(key, members), any(n.failed for n in members), tuple(n.name for n in members))
        for key, members in sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0]))
    )
    order: list[str] = []
    counts: dict[str, Counter] = {}
    for node in nodes:
        for id_, status, _ in node.checks:
            if id_ not in counts:
                order.append(id_)
                counts[id_] = Counter()
            counts[id_][status] += 1
    statuses = ("pass", "warn", "fail", "error", "skip")
    checks = tuple((id_, tuple((s, counts[id_][s]) for s in statuses if counts[id_][s])) for id_ in order)
    majority: list[tuple[str, str]] = []
    outliers: list[Outlier] = []
    for fact, read in FACTS if nodes else ():
        values = Counter(read(n) for n in nodes)
        common, count = values.most_common(1)[0]
        majority.append((fact, common))
        if len(values) > 1:
            outliers.extend(Outlier(n.name, fact, read(n), common) for n in nodes if read(n) != common)
    smoke = Counter(n.smoke or "none" for n in nodes)
    return Fleet(every, groups, checks, tuple(outliers), tuple(sorted(smoke.items())), tuple(majority))
