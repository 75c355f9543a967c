"""Opening a bundle on the machine that installs it: reassembled from its parts if need be, unpacked, and every
byte checked against the manifest (and every wheel against the lock) before anything uses it.

Accepted: a bundle folder, FILE.tar, FILE.tar.parts.json, or any one part beside that index. A tar or a set of
parts is unpacked once into envcheck's cache, under the whole file's sha256.
"""

from __future__ import annotations

import re
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Mapping, Optional

from ..errors import UsageError
from ..userfile import expect, read_toml
from .manifest import MANIFEST, BundleError, Manifest, read_manifest, sha256_of, verify_tree
from .parts import SUFFIX, read_index, reassemble

__all__ = ["OpenedBundle", "open_bundle", "check_platform"]

_PART = re.compile(r"^(?P<whole>.+)\.part\d+-of-\d+$")


@dataclass(frozen=True)
class OpenedBundle:
    folder: Path  # the checked bundle tree
    manifest: Manifest
    name: str  # as the user named it, for messages

    @property
    def wheels(self) -> Path:
        return self.folder / "wheels"


def open_bundle(path: Path, cache: Path) -> OpenedBundle:
    """The bundle at path, checked. BundleError (exit 2) naming the part or file that is missing or corrupted."""
    path = Path(path)
    name = str(path)
    if path.is_dir():
        manifest = read_manifest(path, f"{name}/{MANIFEST}")
        verify_tree(path, manifest, name)
        _check_lock(path, manifest, name)
        return OpenedBundle(path.absolute(), manifest, name)
    index = _index_for(path)
    if index is not None:
        whole = read_index(index)
        path = reassemble(index, cache / "bundles" / f"{whole.sha256[:16]}.tar")  # every part checked, every time
    elif not path.is_file():
        raise BundleError(f"--bundle {name}: no such file or folder (expected a bundle folder, FILE.tar, or its parts)")
    digest = sha256_of(path)
    folder = cache / "bundles" / digest[:16]
    if not (folder / MANIFEST).is_file():
        _unpack(path, folder, name)
    manifest = read_manifest(folder, f"{name}: {MANIFEST}")
    verify_tree(folder, manifest, name)
    _check_lock(folder, manifest, name)
    return OpenedBundle(folder, manifest, name)


def _index_for(path: Path) -> Optional[Path]:
    if path.name.endswith(SUFFIX):
        if not path.is_file():
            raise BundleError(f"--bundle {path}: no such file (the index of a split bundle)")
        return path
    matched = _PART.match(path.name)
    if matched:
        index = path.with_name(matched.group("whole") + SUFFIX)
        if not index.is_file():
            raise BundleError(f"{index}: missing: the index that lists {path.name}'s siblings must travel with the parts")
        return index
    beside = path.with_name(path.name + SUFFIX)
    if not path.exists() and beside.is_file():
        return beside
    return None


def _unpack(tar_path: Path, folder: Path, name: str) -> None:
    """Extract only regular files and folders, only inside folder (a hostile tar can do nothing else)."""
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        with tarfile.open(tar_path, "r:") as tar:
            for member in tar:
                pure = PurePosixPath(member.name)
                if pure.is_absolute() or ".." in pure.parts or not (member.isfile() or member.isdir()):
                    raise BundleError(f"{name}: {member.name!r} is not a plain file inside the bundle: refused")
                target = partial.joinpath(*pure.parts)
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                with open(target, "wb") as out:
                    shutil.copyfileobj(source, out, 1 << 20)
    except (tarfile.TarError, EOFError, OSError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise BundleError(f"{name}: not a readable tar ({exc}): corrupted or truncated") from None
    except BundleError:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    partial.replace(folder)


def _check_lock(folder: Path, manifest: Manifest, name: str) -> None:
    """Each wheel's sha256 is the one the lock names for that file (when the lock names it)."""
    locks = manifest.of("lock")
    if not locks:
        raise BundleError(f"{name}: {MANIFEST} lists no lock")
    try:
        data = read_toml(folder / locks[0].path, f"{name}: {locks[0].path}")
    except UsageError as exc:  # unreadable, too big, not TOML: the bundle's fault
        raise BundleError(str(exc)) from None
    known = _locked_hashes(data, f"{name}: {locks[0].path}")
    for entry in manifest.of("wheel"):
        wanted = known.get(PurePosixPath(entry.path).name)
        if wanted is None:
            raise BundleError(f"{name}: {entry.path} is not a wheel the lock names: not installed from this bundle")
        if entry.sha256 not in wanted:
            raise BundleError(f"{name}: {entry.path} does not match the lock's sha256 for it: corrupted or replaced")


def _locked_hashes(data: dict, where: str) -> dict[str, set[str]]:
    """Each wheel file name the lock names, with its sha256s. Every key on the way is of its type (PEP 751), or a
    BundleError naming it: the lock came with the bundle, it is data like the rest."""

    def typed(value, kind: type, key: str, default):
        return default if value is None else expect(value, kind, where, key, BundleError, toml=True)

    known: dict[str, set[str]] = {}
    for i, package in enumerate(typed(data.get("packages"), list, "packages", [])):
        package = typed(package, dict, f"packages[{i}]", {})
        for j, wheel in enumerate(typed(package.get("wheels"), list, f"packages[{i}].wheels", [])):
            key = f"packages[{i}].wheels[{j}]"
            wheel = typed(wheel, dict, key, {})
            location = next((typed(wheel.get(k), str, f"{key}.{k}", "") for k in ("name", "url", "path") if wheel.get(k)), "")
            hashes = typed(wheel.get("hashes"), dict, f"{key}.hashes", {})
            digest = typed(hashes.get("sha256"), str, f"{key}.hashes.sha256", "")
            file_name = PurePosixPath(location).name
            if file_name and digest:
                known.setdefault(file_name, set()).add(digest)
    return known


def check_platform(opened: OpenedBundle, markers: Mapping[str, str], python: str) -> None:
    """BundleError when the target interpreter is not the platform the bundle's wheels are for."""
    why = opened.manifest.platform.mismatch(markers)
    if why is not None:
        raise BundleError(
            f"{opened.name}: {MANIFEST} says the bundle is for {opened.manifest.platform.text}, and --python {python} "
            f"is not ({why}): make one for it with `envcheck bundle --python-version ...`"
        )
