"""Building the lock: the walked stack, each package with its hashed files (or its VCS or directory source), and the
[tool.envcheck] table of what pip cannot express, checked with packaging.pylock."""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from packaging.pylock import Pylock, PylockValidationError
from packaging.version import InvalidVersion, Version

from .. import __version__, gitsafe, proc
from ..errors import UsageError
from ..model import Distribution, Interpreter, canonical_name
from ..profile import Policy, driver_text, spec_text
from ..redact import without_credentials  # an index token must never be written into a lock
from ..shell import describe, unsafe_character
from .sources import FileRecord, Index, Wheelhouse, hash_problem
from .stack import stack_roots, walk

if TYPE_CHECKING:
    from .resolve import Resolution

LOCK_VERSION = "1.0"


class StackMismatch(Exception):
    """The target's stack is not the profile's, so there is nothing right to lock: a failed check (exit 1), not bad
    input."""


@dataclass(frozen=True)
class LockResult:
    data: dict  # the TOML document, as packaging.pylock reads it
    pylock: Pylock
    notes: tuple[str, ...]  # things worth saying that did not stop the lock


def git_head(path: str, timeout: float = 10.0) -> Optional[str]:
    """The commit checked out in the repository holding path, or None."""
    try:
        done = proc.run(["git", "-C", os.path.abspath(path), "rev-parse", "HEAD"], timeout,
                        env=gitsafe.full_environment(path))
    except OSError:
        return None
    head = done.stdout.strip()
    return head if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", head) else None


def installed_commit(dist: Distribution) -> Optional[str]:
    """The commit of a VCS or editable install: direct_url.json's, else the checkout's HEAD."""
    if dist.commit:
        return dist.commit
    if dist.editable and Path(dist.editable).is_dir():
        return git_head(dist.editable)
    return None


def environment_marker(interpreter: Interpreter) -> str:
    """The environment a lock walked with the target's markers is good for."""
    markers = dict(interpreter.markers)
    keys = ("sys_platform", "platform_machine", "implementation_name", "python_version")
    return " and ".join(f'{key} == "{markers[key]}"' for key in keys if markers.get(key))


def _tool_table(policy: Policy, python: str, torch_cuda: str, torch_index: str = "") -> dict:
    """[tool.envcheck]: the profile's stack as the lock was made for it; `torch-index` only where torch came from
    the torch index searched first (not with --no-index, --torch-index-url '' or where that index had no torch)."""
    supported = [f"{g.capability[0]}.{g.capability[1]}" for g in policy.gpus if g.status.value != "fail"]
    return {
        "profile": policy.id,
        "profile-title": policy.title,
        "backend": policy.backend,
        "cuda": {
            "toolkit": spec_text(policy.toolkit, ","),
            "toolkit-requirement": str(policy.toolkit_requirement),
            "driver-cuda": str(policy.driver_cuda),
            "driver-floor": driver_text(policy.driver_floor),
            "torch-cuda": torch_cuda,
        },
        "compute-capabilities": supported,
        "compute-capability-floor": f"{policy.gpu_below.capability[0]}.{policy.gpu_below.capability[1]}",
        **({"cutlass": {
            "url": without_credentials(policy.cutlass.url),
            "branch": policy.cutlass.branch,
            "commit": policy.cutlass.commit,
            "subdirectory": policy.cutlass.subdir,
            "distribution": canonical_name(policy.cutlass.distribution),
            "extras": list(policy.cutlass.extras),
        }} if policy.cutlass else {}),
        **({"torch-index": without_credentials(torch_index)} if torch_index else {}),
        "python": python,
    }


def _torch_index_used(policy: Policy, packages: Sequence[dict], torch_index: str) -> str:
    """The torch index, where the lock's torch came from it; "" where none was searched or torch came from another."""
    if not torch_index:
        return ""
    name = canonical_name(policy.torch_requirement.name)
    torch = next((p for p in packages if canonical_name(p.get("name", "")) == name), None)
    return torch_index if torch is not None and torch.get("index") == without_credentials(torch_index) else ""


def cutlass_vcs(policy: Policy) -> dict:
    """The lock's VCS source of the profile's CUTLASS checkout (cutlass_api has no wheel)."""
    return {
        "type": "git",
        "url": without_credentials(policy.cutlass.url),
        "requested-revision": policy.cutlass.branch,
        "commit-id": policy.cutlass.commit,
        "subdirectory": policy.cutlass.subdir,
    }


def _file_entry(record: FileRecord, lock_dir: Path) -> dict:
    entry: dict[str, Any] = {"name": record.filename}
    if record.path is not None:
        try:
            entry["path"] = record.path.relative_to(lock_dir.resolve()).as_posix()
        except ValueError:
            entry["path"] = str(record.path)
    else:
        entry["url"] = without_credentials(record.url or "")
    if record.size is not None:
        entry["size"] = record.size
    if record.upload_time is not None:
        entry["upload-time"] = record.upload_time
    entry["hashes"] = dict(record.hashes)
    return entry


def build_lock(
    interpreter: Interpreter,
    policy: Policy,
    *,
    wheelhouse: Optional[Wheelhouse] = None,
    indexes: Sequence[Index] = (),
    torch_index: Optional[Index] = None,
    lock_dir: Path = Path("."),
) -> LockResult:
    """The lock for the stack as the target has it. Raises StackMismatch when the target's stack is not the
    profile's, UsageError when a package has no hashed file in the sources given."""
    roots = stack_roots(policy)
    notes: list[str] = []
    problems: list[str] = []
    for root in roots:
        dist = interpreter.dist(root.name)
        if dist is None:
            if root.required:
                problems.append(f"{root.name} is not installed (profile key {root.what})")
            else:
                notes.append(f"{root.name} is {root.level} in the profile ({root.what}) but not installed: left out "
                             "of the lock")
            continue
        if root.specifier and not _satisfies(dist.version, root.specifier):
            problems.append(f"{root.name} {dist.version} is installed; the profile asks for {root.specifier} ({root.what})")
    cutlass_name = canonical_name(policy.cutlass.distribution) if policy.cutlass else None
    cutlass_dist = interpreter.dist(cutlass_name) if cutlass_name else None
    if cutlass_dist is not None:
        commit = installed_commit(cutlass_dist)
        if commit is not None and commit != policy.cutlass.commit:
            problems.append(f"{cutlass_name} is installed from commit {commit[:12]}; the profile pins {policy.cutlass.commit[:12]}")
    if problems:
        raise StackMismatch(
            f"{interpreter.executable}: its stack does not match profile {policy.id}, so it cannot be locked: "
            + "; ".join(problems)
            + ". Run `envcheck doctor` (and `envcheck fix`) first."
        )

    walked = walk(interpreter, [(r.name, r.extras) for r in roots if interpreter.dist(r.name) is not None])
    for requirement, needed_by in walked.missing:
        notes.append(f"{needed_by} requires {requirement}, which the target does not have: not in the lock either")

    packages: list[dict] = []
    unlocatable: list[str] = []
    for item in walked.packages:
        dist = item.dist
        entry: dict[str, Any] = {"name": dist.name, "version": dist.version}
        if cutlass_name and dist.name == cutlass_name:
            entry["vcs"] = cutlass_vcs(policy)
        elif dist.editable:
            entry.pop("version")  # a source tree: its version is not guaranteed by the lock (PEP 751)
            entry["directory"] = {"path": dist.editable, "editable": True}
            notes.append(f"{dist.name} is an editable install from {dist.editable}: locked as that directory")
        else:
            files, index_url = _locate(dist, wheelhouse, indexes, torch_index if dist.name == roots[0].name else None)
            if not files:
                unlocatable.append(f"{dist.name}=={dist.version}")
                continue
            if index_url:
                entry["index"] = without_credentials(index_url)
            sdists = [f for f in files if not f.is_wheel]
            wheels = [f for f in files if f.is_wheel]
            if sdists:
                entry["sdist"] = _file_entry(sdists[0], lock_dir)
            if wheels:
                entry["wheels"] = [_file_entry(w, lock_dir) for w in wheels]
        if item.dependencies:
            entry["dependencies"] = [{"name": d} for d in item.dependencies]
        if item.extras:
            entry.setdefault("tool", {})["envcheck"] = {"extras": list(item.extras)}
        packages.append(entry)
    if torch_index is not None:
        notes.extend(torch_index.problems)
    if unlocatable:
        where = [str(d) for d in (wheelhouse.dirs if wheelhouse else ())] + [i.url for i in ([torch_index] if torch_index else []) + list(indexes)]
        raise UsageError(
            "no wheel or sdist with a hash found for "
            + ", ".join(unlocatable)
            + f" (looked in: {', '.join(where) or 'nothing: pass --find-links DIR or drop --no-index'})"
        )

    data: dict[str, Any] = {
        "lock-version": LOCK_VERSION,
        "environments": [environment_marker(interpreter)],
        "requires-python": str(policy.python),
        "created-by": f"envcheck {__version__}",
        "packages": packages,
        "tool": {"envcheck": _tool_table(policy, interpreter.version_text, (interpreter.torch.cuda or "") if interpreter.torch else "",
                                         _torch_index_used(policy, packages, torch_index.url if torch_index else ""))},
    }
    return LockResult(data, validate(data, "the new lock"), tuple(notes))


def torch_cuda(version: Optional[str]) -> str:
    """The CUDA of a torch build named in its local version (2.11.0+cu130 -> 13.0), else ""."""
    if not version:
        return ""
    try:
        local = Version(version).local or ""
    except InvalidVersion:
        return ""
    found = re.fullmatch(r"cu(\d+)(\d)", local)
    return f"{found.group(1)}.{found.group(2)}" if found else ""


def build_resolved_lock(policy: Policy, resolution: "Resolution", without: Sequence[str] = ()) -> LockResult:
    """The lock of a resolution (resolve.py): the resolver's packages, the profile's CUTLASS checkout as a VCS
    package, and the same [tool.envcheck] table as a live lock, checked with packaging.pylock."""
    notes: list[str] = []
    packages = [_with_index(dict(p), resolution.indexes) for p in resolution.packages]
    cutlass_name = canonical_name(policy.cutlass.distribution) if policy.cutlass else ""
    if policy.cutlass and policy.cutlass.commit and cutlass_name not in {canonical_name(n) for n in without}:
        packages.append({"name": cutlass_name, "vcs": cutlass_vcs(policy)})
        notes.append(f"{cutlass_name} is locked as {policy.cutlass.url} at {policy.cutlass.commit[:12]} ({policy.cutlass.subdir})")
    for package in packages:
        if not package.get("wheels") and "vcs" not in package:
            notes.append(f"{package['name']} {package.get('version', '')} has no wheel for the target: locked from its sdist")
    torch_name = canonical_name(policy.torch_requirement.name)
    target = resolution.target
    tool = _tool_table(policy, target.python_version, torch_cuda(resolution.version_of(torch_name)),
                       _torch_index_used(policy, packages, resolution.torch_index))
    tool["resolved"] = {
        "python-version": target.python_version,
        "platform": target.platform,
        "resolver": resolution.resolver,
        "requirements": list(resolution.requirements),
    }
    data: dict[str, Any] = {
        "lock-version": LOCK_VERSION,
        "environments": [target.environment],
        "requires-python": str(policy.python),
        "created-by": f"envcheck {__version__}",
        "packages": packages,
        "tool": {"envcheck": tool},
    }
    return LockResult(data, validate(data, "the resolved lock"), tuple(notes))


def _with_index(package: dict, indexes: Sequence[str]) -> dict:
    """A resolved package with the index its wheels came from (uv does not say; the export needs it for pip):
    the first index on the wheels' host; PyPI's files live on files.pythonhosted.org."""
    hosts = {urllib.parse.urlsplit(w.get("url", "")).hostname for w in package.get("wheels", [])}
    for index in indexes:
        host = urllib.parse.urlsplit(index).hostname
        if host in hosts or (host == "pypi.org" and "files.pythonhosted.org" in hosts):
            return {**package, "index": without_credentials(index)}
    return package


def _satisfies(version: str, specifier: str) -> bool:
    from packaging.specifiers import SpecifierSet

    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def _locate(
    dist: Distribution, wheelhouse: Optional[Wheelhouse], indexes: Sequence[Index], torch_index: Optional[Index]
) -> tuple[list[FileRecord], Optional[str]]:
    """The files of dist's version: local ones first, then the first index that has any."""
    if wheelhouse is not None:
        files = wheelhouse.files(dist.name, dist.version)
        if files:
            return files, None
    for index in ([torch_index] if torch_index else []) + list(indexes):
        files = index.files(dist.name, dist.version)
        if files:
            return files, index.url
    return [], None


def validate(data: Mapping[str, Any], what: str) -> Pylock:
    """The lock document as packaging.pylock reads it, its hashes checked, and no value in it holding a line break or
    a control character: each value may reach a line of a requirements file (`envcheck lock --format
    requirements`), a pip or git argument, a printed command or the terminal."""
    broken = _line_break(data)
    if broken is not None:
        key, character = broken
        raise UsageError(f"{what}: key {key!r} holds {describe(character)}, a line break or control character; expected "
                         "a value on one line")
    try:
        lock = Pylock.from_dict(data)
    except PylockValidationError as exc:
        raise UsageError(f"{what} is not a valid PEP 751 lock: {exc}") from None
    for package in lock.packages:
        for file in (package.archive, package.sdist, *(package.wheels or ())):
            for algorithm, digest in ((file.hashes or {}).items() if file is not None else ()):
                problem = hash_problem(algorithm, digest)
                if problem:
                    name = getattr(file, "name", None) or package.name
                    raise UsageError(f"{what}: package {package.name}: {name}: hash {algorithm} = {str(digest)[:80]!r}: {problem}")
    return lock


def _line_break(document: Any) -> Optional[tuple[str, str]]:
    """The first (key, character) where a key or a string value of the document holds an unsafe character
    (envcheck.shell), or None. Walked with a list, not recursion: a deeply nested document is no crash."""
    todo: list[tuple[str, Any]] = [("", document)]
    while todo:
        key, value = todo.pop()
        if isinstance(value, str):
            character = unsafe_character(value)
            if character is not None:
                return key or "(top level)", character
        elif isinstance(value, Mapping):
            for name, item in reversed(list(value.items())):
                path = f"{key}.{name}" if key else str(name)
                todo += [(path, item), (path, str(name))]
        elif isinstance(value, (list, tuple)):
            todo += reversed([(f"{key}[{index}]", item) for index, item in enumerate(value)])
    return None
