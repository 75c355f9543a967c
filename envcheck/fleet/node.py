"""A node's report as the fleet tools read it: a doctor JSON report, or a lock (what a working node should have).

Only what diff and fleet compare is kept: check statuses, package versions, and the stack's headline facts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..errors import UsageError
from ..model import canonical_name
from ..userfile import parse_toml, read_text

__all__ = ["Node", "read_node", "read_nodes", "MAX_BYTES"]

MAX_BYTES = 64 * 1024 * 1024  # a doctor report is tens of kilobytes; anything far larger is not one
DSL = "nvidia-cutlass-dsl"


@dataclass(frozen=True)
class Node:
    """One environment: a doctor report (kind "report") or a lock (kind "lock", no checks)."""

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

    @property
    def failed(self) -> bool:
        return self.exit_code not in (None, 0)

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
        counts[str(name)] = counts.get(str(name), 0) + 1
    return ", ".join(f"{n}x {name}" for name, n in counts.items())


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _from_report(data: dict, path: Path) -> Node:
    where = f"{path}"
    checks = []
    for item in data.get("checks") or []:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("status"), str):
            raise UsageError(f"{where}: key checks: expected a list of {{id, status, found}} objects")
        checks.append((item["id"], item["status"], str(item.get("found", ""))))
    interpreter = _get(data, "facts", "interpreter") or {}
    packages = tuple(
        (canonical_name(d["name"]), str(d.get("version", "")))
        for d in (interpreter.get("distributions") or [])
        if isinstance(d, dict) and isinstance(d.get("name"), str)
    )
    torch = interpreter.get("torch") if isinstance(interpreter.get("torch"), dict) else {}
    host = data.get("host") if isinstance(data.get("host"), dict) else {}
    driver = _get(data, "facts", "driver") or {}
    gpus = host.get("gpus") or [g.get("name") for g in (driver.get("gpus") or []) if isinstance(g, dict)]
    smoke = data.get("smoke") if isinstance(data.get("smoke"), dict) else {}
    exit_code = data.get("exit_code")
    if not isinstance(exit_code, int):
        raise UsageError(f"{where}: key exit_code: expected an integer (is this a doctor --json report?)")
    profile = data.get("profile", "")  # schema 2: {id, reason, source, verified}; schema 1: the id
    return Node(
        name=path.stem, path=str(path), kind="report", exit_code=exit_code,
        profile=str(profile.get("id", "") if isinstance(profile, dict) else profile),
        checks=tuple(checks), packages=packages, torch=str(torch.get("version") or ""), torch_cuda=str(torch.get("cuda") or ""),
        driver=str(host.get("driver") or driver.get("version") or ""), gpus=_gpus_text(gpus),
        hostname=str(host.get("hostname") or ""), smoke=str(smoke.get("status") or ""), smoke_summary=str(smoke.get("summary") or ""),
    )


def _from_lock(data: dict, path: Path) -> Node:
    from ..lock.build import validate

    lock = validate(data, str(path))
    packages = tuple((canonical_name(p.name), str(p.version)) for p in lock.packages if p.version is not None)
    tool = _get(data, "tool", "envcheck") or {}
    versions = dict(packages)
    return Node(
        name=path.stem, path=str(path), kind="lock", profile=str(tool.get("profile", "")), exit_code=None, checks=(),
        packages=packages, torch=versions.get("torch", ""), torch_cuda=str(_get(tool, "cuda", "torch-cuda") or ""),
    )


def read_node(path: Path) -> Node:
    """A doctor JSON report or a pylock.toml. Anything else is a UsageError naming the file."""
    path = Path(path)
    text = read_text(path, str(path), limit=MAX_BYTES)  # a regular file, capped, UTF-8: or a UsageError naming it
    if path.suffix == ".toml":
        return _from_lock(parse_toml(text, str(path)), path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc}); expected a doctor --json report or a pylock.toml") from None
    except RecursionError:
        raise UsageError(f"{path}: not usable JSON: nested too deeply") from None
    if not isinstance(data, dict) or "checks" not in data:
        raise UsageError(f"{path}: not a doctor report (no key checks); write one with `envcheck doctor --json -o FILE`")
    return _from_report(data, path)


def read_nodes(paths: list[Path]) -> tuple[Node, ...]:
    """Reports from files and folders (every *.json in a folder, sorted), each read once."""
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
    return tuple(read_node(p) for p in dict.fromkeys(files))
