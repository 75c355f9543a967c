"""A node's report as the fleet tools read it: a doctor JSON report, or a lock (what a working node should have).

Only what diff and fleet compare is kept: check statuses, package versions, and the stack's headline facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..errors import UsageError
from ..model import Status, canonical_name
from ..userfile import expect, parse_json, parse_toml, read_text

__all__ = ["Node", "NodeError", "read_node", "read_nodes", "MAX_BYTES"]

MAX_BYTES = 64 * 1024 * 1024  # a doctor report is tens of kilobytes; anything far larger is not one
DSL = "nvidia-cutlass-dsl"


@dataclass(frozen=True)
class Node:
    """One environment: a doctor report (kind "report"), a lock (kind "lock", no checks), or a file fleet could not
    read (kind "unreadable": a finding about that node, never the end of the fleet view)."""

    name: str  # the file's stem: `reports/%N.json` names it after the node
    path: str
    kind: str
    profile: str
    exit_code: Optional[int]  # None for a lock
    checks: tuple[tuple[str, str, str], ...]  # (id, status, found), in report order
    packages: tuple[tuple[str, str], ...]  # (canonical name, version)
    torch: str = ""
    torch_cuda: str = ""
    driver: str = ""
    gpus: str = ""  # "8x NVIDIA H200"
    hostname: str = ""
    smoke: str = ""  # the smoke status, "" when there was no smoke run
    smoke_summary: str = ""
    problem: str = ""  # kind "unreadable": why the file could not be read as a report (it names the file and key)

    @property
    def failed(self) -> bool:
        """A failing report, or one that could not be read: neither says the node works."""
        return bool(self.problem) or self.exit_code not in (None, 0)

    def status_of(self, check: str) -> Optional[str]:
        return next((status for id_, status, _ in self.checks if id_ == check), None)

    def version_of(self, name: str) -> str:
        key = canonical_name(name)
        return next((version for n, version in self.packages if n == key), "")

    @property
    def dsl(self) -> str:
        return self.version_of(DSL)


def _gpus_text(names: list) -> str:
    if not names:
        return ""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{n}x {name}" for name, n in counts.items())


class NodeError(UsageError):
    """A report or lock that diff and fleet cannot read: names the file, the key and what was expected (exit 2 in
    diff; in fleet, a finding about that node)."""


_STATUSES = tuple(status.value for status in Status)
SCHEMAS = (1, 2)  # the doctor report versions diff and fleet read (render.report.SCHEMA_VERSION is the newest)


class _Fields:
    """The keys of one report that diff and fleet read, each of its JSON type: any other is a NodeError naming the
    file and the key's path from the report's top ("facts.interpreter.torch"). Absent and null are one: nothing."""

    def __init__(self, where: str, toml: bool = False):
        self.where, self.toml = where, toml

    def get(self, obj: dict, key: str, path: str, kind: type, required: bool = False) -> Any:
        value = obj.get(key)
        if value is None and not required:
            return None
        return expect(value, kind, self.where, path, NodeError, self.toml, present=key in obj)

    def object(self, obj: dict, key: str, path: str) -> dict:
        return self.get(obj, key, path, dict) or {}

    def text(self, obj: dict, key: str, path: str, choices: tuple[str, ...] = (), required: bool = False) -> str:
        value = self.get(obj, key, path, str, required)
        if value is None:
            return ""
        if choices and value not in choices:
            raise NodeError(f"{self.where}: key {path} is {value[:40]!r}: expected one of {', '.join(choices)}")
        return value

    def items(self, obj: dict, key: str, path: str, kind: type, required: bool = False) -> list:
        """The array at key (nothing: empty), each item of kind."""
        return [self.get({key: item}, key, f"{path}[{index}]", kind, required=True)
                for index, item in enumerate(self.get(obj, key, path, list, required) or [])]


def _from_report(data: dict, path: Path) -> Node:
    """Every key diff and fleet compare, read through one _Fields: a mistyped one names itself."""
    read = _Fields(str(path))
    checks = []
    for index, item in enumerate(read.items(data, "checks", "checks", dict, required=True)):
        where = f"checks[{index}]"
        checks.append((read.text(item, "id", f"{where}.id", required=True),
                       read.text(item, "status", f"{where}.status", _STATUSES, required=True),
                       read.text(item, "found", f"{where}.found")))
    exit_code = read.get(data, "exit_code", "exit_code", int, required=True)
    schema = read.get(data, "schema_version", "schema_version", int, required=True)
    if schema not in SCHEMAS:
        raise NodeError(f"{path}: key schema_version is {schema}: expected one this envcheck reads "
                        f"({', '.join(map(str, SCHEMAS))}); a newer envcheck wrote it, whose report may mean otherwise")
    facts = read.object(data, "facts", "facts")
    interpreter = read.object(facts, "interpreter", "facts.interpreter")
    packages = []
    for index, item in enumerate(read.items(interpreter, "distributions", "facts.interpreter.distributions", dict)):
        where = f"facts.interpreter.distributions[{index}]"
        packages.append((canonical_name(read.text(item, "name", f"{where}.name", required=True)),
                         read.text(item, "version", f"{where}.version")))
    torch = read.object(interpreter, "torch", "facts.interpreter.torch")
    host = read.object(data, "host", "host")
    driver = read.object(facts, "driver", "facts.driver")
    # Both sources are read, so that a mistyped one is named whether or not the other stands in for it.
    gpus = read.items(host, "gpus", "host.gpus", str)
    driver_gpus = [read.text(gpu, "name", f"facts.driver.gpus[{index}].name")
                   for index, gpu in enumerate(read.items(driver, "gpus", "facts.driver.gpus", dict))]
    driver_version = read.text(driver, "version", "facts.driver.version")
    smoke = read.object(data, "smoke", "smoke")
    profile = data.get("profile")  # schema 2: {id, reason, source, verified}; schema 1: the id
    profile_id = read.text(profile, "id", "profile.id") if isinstance(profile, dict) else read.text(data, "profile", "profile")
    return Node(
        name=path.stem, path=str(path), kind="report", exit_code=exit_code, profile=profile_id,
        checks=tuple(checks), packages=tuple(packages), torch=read.text(torch, "version", "facts.interpreter.torch.version"),
        torch_cuda=read.text(torch, "cuda", "facts.interpreter.torch.cuda"),
        driver=read.text(host, "driver", "host.driver") or driver_version,
        gpus=_gpus_text(gpus or driver_gpus), hostname=read.text(host, "hostname", "host.hostname"),
        smoke=read.text(smoke, "status", "smoke.status", _STATUSES), smoke_summary=read.text(smoke, "summary", "smoke.summary"),
    )


def _from_lock(data: dict, path: Path) -> Node:
    from ..lock.build import validate

    lock = validate(data, str(path))
    packages = tuple((canonical_name(p.name), str(p.version)) for p in lock.packages if p.version is not None)
    read = _Fields(str(path), toml=True)
    tool = read.object(read.object(data, "tool", "tool"), "envcheck", "tool.envcheck")
    versions = dict(packages)
    return Node(
        name=path.stem, path=str(path), kind="lock", profile=read.text(tool, "profile", "tool.envcheck.profile"),
        exit_code=None, checks=(), packages=packages, torch=versions.get("torch", ""),
        torch_cuda=read.text(read.object(tool, "cuda", "tool.envcheck.cuda"), "torch-cuda", "tool.envcheck.cuda.torch-cuda"),
    )


def read_node(path: Path) -> Node:
    """A doctor JSON report or a pylock.toml. Anything else is a UsageError naming the file."""
    path = Path(path)
    text = read_text(path, str(path), limit=MAX_BYTES)  # a regular file, capped, UTF-8: or a UsageError naming it
    if path.suffix == ".toml":
        return _from_lock(parse_toml(text, str(path)), path)
    data = parse_json(text, str(path), expected="a doctor --json report or a pylock.toml")
    if not isinstance(data, dict) or "checks" not in data:
        raise UsageError(f"{path}: not a doctor report (no key checks); write one with `envcheck doctor --json -o FILE`")
    return _from_report(data, path)


def read_nodes(paths: list[Path]) -> tuple[Node, ...]:
    """Reports from files and folders (every *.json in a folder, sorted), each read once. A file that cannot be read
    as a report is a node of kind "unreadable" that says why; the others are read all the same."""
    files: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
            if not found:
                raise UsageError(f"{path}: a folder with no *.json reports in it")
            files.extend(found)
        else:
            files.append(path)
    if not files:
        raise UsageError("no reports given: pass report files or folders of them")
    return tuple(_read_or_unreadable(p) for p in dict.fromkeys(files))


def _read_or_unreadable(path: Path) -> Node:
    try:
        return read_node(path)
    except UsageError as exc:
        return Node(name=path.stem, path=str(path), kind="unreadable", profile="", exit_code=None, checks=(),
                    packages=(), problem=str(exc))
