"""A bundle's manifest: what it holds (every file with its size and sha256), for which platform, from which lock.

manifest.json sits at the top of a bundle folder (or tar) and lists every other file. Reading one is strict: an
unknown key, a path that leaves the bundle, a file that is missing, larger, smaller or different from what the
manifest says is a BundleError naming it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Mapping, Optional

from packaging.utils import parse_wheel_filename

from ..atomic import replace_text
from ..errors import UsageError
from ..gitsafe import check_git_values
from ..lock.sources import sha256_of
from .. import userfile
from ..userfile import expect, open_inside, type_name

__all__ = [
    "BundleError", "Platform", "BundleFile", "CutlassEntry", "Manifest", "MANIFEST", "ROLES", "sha256_of",
    "read_manifest", "parse_manifest", "write_manifest", "files_in", "check_listing", "digest_of", "verify_tree",
]

MANIFEST = "manifest.json"
SCHEMA = 1
KIND = "envcheck-bundle"
_HEX = re.compile(r"^[0-9a-f]{64}$")
ROLES = ("wheel", "build", "lock", "git-bundle")  # build: the backend that installs cutlass_api from the git bundle


class BundleError(UsageError):
    """A bundle that cannot be used: names the part or file, and what is wrong with it (exit 2)."""


ANY_GLIBC = 39  # the newest glibc a bundle takes wheels for where no --platform names one


@dataclass(frozen=True)
class Platform:
    """The interpreter and machine a bundle's wheels are for."""

    python_version: str = "3.12"  # major.minor
    implementation: str = "cp"  # pip's --implementation
    system: str = "linux"  # sys.platform
    machine: str = "x86_64"  # platform.machine()
    tags: tuple[str, ...] = ()  # pip's --platform values

    @classmethod
    def linux(cls, python_version: str = "3.12", machine: str = "x86_64", glibc: int = ANY_GLIBC) -> "Platform":
        """CPython on glibc Linux: the wheels of every manylinux from 2.`glibc` down to 2.17 (manylinux2014)."""
        tags = tuple(f"manylinux_2_{n}_{machine}" for n in range(glibc, 16, -1)) + (f"manylinux2014_{machine}",)
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
    role: str  # one of ROLES

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
    replace_text(path, json.dumps(manifest.to_json(), indent=2) + "\n")
    return path


def _relative(path: str, where: str) -> str:
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or "\\" in path or path.startswith("-") or path == MANIFEST:
        raise BundleError(f"{where}: file path {path!r}: expected a relative path inside the bundle")
    return str(pure)


def read_json(path: Path, where: str) -> Any:
    """A bundle's JSON file (its manifest, a parts index): a regular file, small, UTF-8 (userfile: a FIFO is refused,
    not waited on), valid JSON of usable numbers (userdata); any other is a BundleError naming it."""
    return userfile.read_json(path, where, error=BundleError)


def read_manifest(folder: Path, where: Optional[str] = None) -> Manifest:
    where = where or str(folder / MANIFEST)
    if not os.path.lexists(folder / MANIFEST):
        raise BundleError(f"{where}: missing: this is not an envcheck bundle (no {MANIFEST})")
    return parse_manifest(read_json(folder / MANIFEST, where), where)


def parse_manifest(data: Any, where: str) -> Manifest:
    """The one reading of a manifest. Every key write_manifest writes, of its type, and no other, at every level
    (the dataclasses' fields are the schema); then what the values mean: the kind and schema, paths inside the
    bundle, sha256s, roles, wheel file names, and the CUTLASS entry's git values and its file among the files."""
    if not isinstance(data, dict):
        raise BundleError(f"{where}: expected an object, got {type_name(data)}")
    head = ("kind", "schema")
    if data.get("kind") != KIND or type(data.get("schema")) is not int or data["schema"] != SCHEMA:  # not 1.0, true
        raise BundleError(f"{where}: expected kind {KIND!r} and schema {SCHEMA}")
    manifest = _build(Manifest, {k: v for k, v in data.items() if k not in head}, where, "", also=head)
    paths: set[str] = set()
    for index, entry in enumerate(manifest.files):
        spot = f"{where}: files[{index}]"
        _relative(entry.path, spot)
        if entry.path in paths:
            raise BundleError(f"{spot}: {entry.path} is listed twice")
        paths.add(entry.path)
        if not _HEX.fullmatch(entry.sha256):
            raise BundleError(f"{spot}: sha256 {entry.sha256[:80]!r}: expected 64 hex digits")
        if entry.size < 0:
            raise BundleError(f"{spot}: size {entry.size}: expected a size in bytes")
        if entry.role not in ROLES:
            raise BundleError(f"{spot}: role {entry.role[:80]!r}: expected one of {', '.join(ROLES)}")
        if entry.role in ("wheel", "build"):
            try:
                parse_wheel_filename(PurePosixPath(entry.path).name)
            except ValueError:
                raise BundleError(f"{spot}: {entry.path[:200]!r} is not a wheel's file name "
                                  "(name-version-python-abi-platform.whl)") from None
    if manifest.cutlass is not None:
        spot = f"{where}: cutlass"
        entry = manifest.cutlass
        _relative(entry.file, spot)
        try:
            check_git_values(entry.branch, entry.commit, entry.subdir)
        except ValueError as exc:
            raise BundleError(f"{spot}: {exc}") from None
        if not any(f.path == entry.file and f.role == "git-bundle" for f in manifest.files):
            raise BundleError(f"{spot}: file {entry.file[:200]!r} is not among the files[] as a git-bundle")
    return manifest


def _build(cls: type, data: Any, where: str, key: str, also: tuple[str, ...] = ()) -> Any:
    """cls from a JSON object whose keys are exactly cls's fields (to_json's names), each of its field's type (`also`:
    keys read already, named in the message)."""
    if key:
        expect(data, dict, where, key, BundleError)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in data if k not in names]
    if unknown:
        raise BundleError(f"{where}: unknown key {_joined(key, unknown[0])!r}: expected only {', '.join(also + tuple(names))}"
                          + (f" in {key}" if key else ""))
    missing = [name for name in names if name not in data]
    if missing:
        raise BundleError(f"{where}: key {_joined(key, missing[0])!r} is missing")
    hints = typing.get_type_hints(cls)
    return cls(**{name: _typed(data[name], hints[name], where, _joined(key, name)) for name in names})


def _typed(value: Any, kind: Any, where: str, key: str) -> Any:
    """value as `kind`: str, int, tuple[X, ...] (from an array), Optional[X] (null allowed), or a dataclass."""
    if typing.get_origin(kind) is typing.Union:  # Optional[X]
        if value is None:
            return None
        (kind,) = [k for k in typing.get_args(kind) if k is not type(None)]
    if dataclasses.is_dataclass(kind):
        return _build(kind, value, where, key)
    if typing.get_origin(kind) is tuple:
        item = typing.get_args(kind)[0]
        return tuple(_typed(v, item, where, f"{key}[{i}]") for i, v in enumerate(expect(value, list, where, key, BundleError)))
    return expect(value, kind, where, key, BundleError)


def _joined(key: str, name: str) -> str:
    name = name if len(name) <= 80 else name[:80] + "..."
    return f"{key}.{name}" if key else name


def files_in(folder_fd: int, name: str) -> dict[str, int]:
    """Every file in the folder open as folder_fd (relative POSIX path -> size), read through no link: a symbolic
    link anywhere in it (a `wheels/` that points elsewhere), or anything but files and folders, is a BundleError.
    os.walk would not enter a linked folder, and what is in it would be neither checked nor refused."""
    found: dict[str, int] = {}
    stack = [("", os.dup(folder_fd))]
    try:
        while stack:
            prefix, fd = stack.pop()
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        relative = prefix + entry.name
                        if entry.is_symlink():
                            raise BundleError(f"{name}: {relative} is a symbolic link: a bundle is read through no link")
                        if entry.is_dir(follow_symlinks=False):
                            stack.append((relative + "/", open_inside(fd, entry.name, name, folder=True, error=BundleError)))
                        elif entry.is_file(follow_symlinks=False):
                            found[relative] = entry.stat(follow_symlinks=False).st_size
                        else:
                            raise BundleError(f"{name}: {relative} is not a regular file: not a bundle envcheck made")
            finally:
                os.close(fd)
    finally:
        for _, fd in stack:
            os.close(fd)
    return found


def check_listing(found: dict[str, int], manifest: Manifest, name: str) -> None:
    """The files of a bundle (files_in) are the manifest's, each of its size, and no other. BundleError if not."""
    for entry in manifest.files:
        if entry.path not in found:
            raise BundleError(f"{name}: {entry.path} is missing")
        if found[entry.path] != entry.size:
            raise BundleError(f"{name}: {entry.path} is {found[entry.path]} bytes, the manifest says {entry.size}: corrupted")
    listed = {f.path for f in manifest.files}
    extra = sorted(p for p in found if p != MANIFEST and p not in listed)
    if extra:
        raise BundleError(f"{name}: {extra[0]} is not in the manifest: not a bundle envcheck made")


def digest_of(fd: int, out=None) -> tuple[str, int]:
    """(sha256, size) of what the open file fd holds from its start, read a MiB at a time (and written to out)."""
    digest, size = hashlib.sha256(), 0
    for block in iter(lambda: os.read(fd, 1 << 20), b""):
        digest.update(block)
        size += len(block)
        if out is not None:
            out.write(block)
    return digest.hexdigest(), size


def verify_tree(folder: Path, manifest: Manifest, name: str) -> None:
    """Every file the manifest lists is there with its size and sha256, and nothing else is, all read through no
    link. BundleError if not."""
    root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        check_listing(files_in(root, name), manifest, name)
        for entry in manifest.files:
            fd = open_inside(root, entry.path, name, error=BundleError)
            try:
                digest, _ = digest_of(fd)
            finally:
                os.close(fd)
            if digest != entry.sha256:
                raise BundleError(f"{name}: {entry.path} does not match its sha256 in the manifest: corrupted")
    finally:
        os.close(root)
