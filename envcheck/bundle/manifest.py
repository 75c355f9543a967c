"""A bundle's manifest: what it holds (every file with its size and sha256), for which platform, from which lock.

manifest.json sits at the top of a bundle folder (or tar) and lists every other file. Reading one is strict: an
unknown key, a path that leaves the bundle, a file that is missing, larger, smaller or different from what the
manifest says is a BundleError naming it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Mapping, Optional

from ..errors import UsageError
from ..gitsafe import check_git_values
from ..lock.sources import sha256_of
from ..userfile import read_text

__all__ = [
    "BundleError", "Platform", "BundleFile", "CutlassEntry", "Manifest", "MANIFEST", "sha256_of", "read_manifest",
    "write_manifest", "verify_tree",
]

MANIFEST = "manifest.json"
SCHEMA = 1
KIND = "envcheck-bundle"
_HEX = re.compile(r"^[0-9a-f]{64}$")


class BundleError(UsageError):
    """A bundle that cannot be used: names the part or file, and what is wrong with it (exit 2)."""


@dataclass(frozen=True)
class Platform:
    """The interpreter and machine a bundle's wheels are for."""

    python_version: str = "3.12"  # major.minor
    implementation: str = "cp"  # pip's --implementation
    system: str = "linux"  # sys.platform
    machine: str = "x86_64"  # platform.machine()
    tags: tuple[str, ...] = ()  # pip's --platform values

    @classmethod
    def linux(cls, python_version: str = "3.12", machine: str = "x86_64") -> "Platform":
        tags = tuple(f"manylinux_2_{n}_{machine}" for n in range(39, 16, -1)) + (f"manylinux2014_{machine}",)
        return cls(python_version, "cp", "linux", machine, tags)

    @property
    def text(self) -> str:
        name = {"cp": "CPython", "pp": "PyPy"}.get(self.implementation, self.implementation)
        return f"{name} {self.python_version} on {self.system} {self.machine}"

    def environment(self) -> dict[str, str]:
        """PEP 508 marker values of this platform, for the lock's markers."""
        implementation = {"cp": "cpython", "pp": "pypy"}.get(self.implementation, self.implementation)
        return {
            "python_version": self.python_version,
            "python_full_version": f"{self.python_version}.0",
            "implementation_name": implementation,
            "platform_python_implementation": {"cpython": "CPython", "pypy": "PyPy"}.get(implementation, implementation),
            "sys_platform": self.system,
            "platform_system": self.system.capitalize() if self.system != "darwin" else "Darwin",
            "platform_machine": self.machine,
            "os_name": "posix",
            "implementation_version": f"{self.python_version}.0",
            "platform_release": "",
            "platform_version": "",
            "extra": "",
        }

    def mismatch(self, markers: Mapping[str, str]) -> Optional[str]:
        """Why an interpreter with these PEP 508 markers cannot use the bundle, or None."""
        wanted = self.environment()
        for key in ("implementation_name", "python_version", "sys_platform", "platform_machine"):
            if markers.get(key) and markers.get(key) != wanted[key]:
                return f"{key} is {markers.get(key)!r} there, {wanted[key]!r} in the bundle"
        return None

    def to_json(self) -> dict:
        return {"python_version": self.python_version, "implementation": self.implementation, "system": self.system,
                "machine": self.machine, "tags": list(self.tags)}


@dataclass(frozen=True)
class BundleFile:
    path: str  # relative, POSIX
    size: int
    sha256: str
    role: str  # wheel, lock, git-bundle

    def to_json(self) -> dict:
        return {"path": self.path, "size": self.size, "sha256": self.sha256, "role": self.role}


@dataclass(frozen=True)
class CutlassEntry:
    """The CUTLASS commit a git bundle carries: enough to rebuild the profile's sparse checkout from it."""

    file: str
    url: str
    branch: str
    commit: str
    subdir: str

    def to_json(self) -> dict:
        return {"file": self.file, "url": self.url, "branch": self.branch, "commit": self.commit, "subdir": self.subdir}


@dataclass(frozen=True)
class Manifest:
    profile: str
    platform: Platform
    files: tuple[BundleFile, ...]
    cutlass: Optional[CutlassEntry] = None
    without: tuple[str, ...] = ()
    created_by: str = ""
    notes: tuple[str, ...] = field(default=(), compare=False)

    def of(self, role: str) -> tuple[BundleFile, ...]:
        return tuple(f for f in self.files if f.role == role)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA, "kind": KIND, "profile": self.profile, "created_by": self.created_by,
            "platform": self.platform.to_json(), "without": list(self.without),
            "cutlass": self.cutlass.to_json() if self.cutlass else None,
            "files": [f.to_json() for f in self.files], "notes": list(self.notes),
        }


def write_manifest(manifest: Manifest, folder: Path) -> Path:
    path = folder / MANIFEST
    path.write_text(json.dumps(manifest.to_json(), indent=2) + "\n", encoding="utf-8")
    return path


def _field(data: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise BundleError(f"{where}: key '{key}' = {value!r}: expected a {kind.__name__}")
    return value


def _relative(path: str, where: str) -> str:
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or "\\" in path or path.startswith("-") or path == MANIFEST:
        raise BundleError(f"{where}: file path {path!r}: expected a relative path inside the bundle")
    return str(pure)


def read_json(path: Path, where: str) -> Any:
    """A bundle's JSON file (its manifest, a parts index): a regular file, small, UTF-8 (userfile: a FIFO is refused,
    not waited on), valid JSON; any other is a BundleError naming it."""
    try:
        return json.loads(read_text(path, where))
    except BundleError:
        raise
    except UsageError as exc:
        raise BundleError(str(exc)) from None
    except ValueError as exc:
        raise BundleError(f"{where}: cannot be read as JSON ({exc}): corrupted") from None


def read_manifest(folder: Path, where: Optional[str] = None) -> Manifest:
    where = where or str(folder / MANIFEST)
    if not os.path.lexists(folder / MANIFEST):
        raise BundleError(f"{where}: missing: this is not an envcheck bundle (no {MANIFEST})")
    data = read_json(folder / MANIFEST, where)
    if not isinstance(data, dict) or data.get("kind") != KIND or data.get("schema") != SCHEMA:
        raise BundleError(f"{where}: expected kind {KIND!r} and schema {SCHEMA}")
    platform = _field(data, "platform", dict, where)
    files = []
    for index, item in enumerate(_field(data, "files", list, where)):
        spot = f"{where} files[{index}]"
        if not isinstance(item, dict):
            raise BundleError(f"{spot}: expected an object")
        digest = _field(item, "sha256", str, spot)
        if not _HEX.match(digest):
            raise BundleError(f"{spot}: sha256 {digest!r}: expected 64 hex digits")
        size = _field(item, "size", int, spot)
        if size < 0:
            raise BundleError(f"{spot}: size {size}: expected a size in bytes")
        files.append(BundleFile(_relative(_field(item, "path", str, spot), spot), size, digest, _field(item, "role", str, spot)))
    cutlass = data.get("cutlass")
    entry = None
    if cutlass is not None:
        spot = f"{where} cutlass"
        if not isinstance(cutlass, dict):
            raise BundleError(f"{spot}: expected an object or null")
        entry = CutlassEntry(*(_field(cutlass, k, str, spot) for k in ("file", "url", "branch", "commit", "subdir")))
        _relative(entry.file, spot)
        try:
            check_git_values(entry.branch, entry.commit, entry.subdir)
        except ValueError as exc:
            raise BundleError(f"{spot}: {exc}") from None
    return Manifest(
        profile=_field(data, "profile", str, where),
        platform=Platform(
            _field(platform, "python_version", str, f"{where} platform"), _field(platform, "implementation", str, f"{where} platform"),
            _field(platform, "system", str, f"{where} platform"), _field(platform, "machine", str, f"{where} platform"),
            tuple(str(t) for t in platform.get("tags") or ()),
        ),
        files=tuple(files),
        cutlass=entry,
        without=tuple(str(w) for w in data.get("without") or ()),
        created_by=str(data.get("created_by", "")),
        notes=tuple(str(n) for n in data.get("notes") or ()),
    )


def verify_tree(folder: Path, manifest: Manifest, name: str) -> None:
    """Every file the manifest lists is there with its size and sha256, and nothing else is. BundleError if not."""
    listed = {f.path for f in manifest.files}
    for entry in manifest.files:
        path = folder / entry.path
        if not path.is_file() or path.is_symlink():
            raise BundleError(f"{name}: {entry.path} is missing")
        size = path.stat().st_size
        if size != entry.size:
            raise BundleError(f"{name}: {entry.path} is {size} bytes, the manifest says {entry.size}: corrupted")
        if sha256_of(path) != entry.sha256:
            raise BundleError(f"{name}: {entry.path} does not match its sha256 in the manifest: corrupted")
    for root, _dirs, names in os.walk(folder):
        for leaf in names:
            relative = Path(root, leaf).relative_to(folder).as_posix()
            if relative != MANIFEST and relative not in listed:
                raise BundleError(f"{name}: {relative} is not in the manifest: not a bundle envcheck made")
