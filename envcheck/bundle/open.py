"""Opening a bundle on the machine that installs it: reassembled from its parts if need be, unpacked or copied, and
every byte checked against the manifest (and every wheel against the lock) before anything uses it.

Accepted: a bundle folder, FILE.tar, FILE.tar.parts.json, or any one part beside that index. What fix installs
from is always a private copy in envcheck's cache (a folder only its owner can change, paths.usable_folder): a tar
or a set of parts unpacked once under the whole file's sha256, a folder copied under its manifest's. A folder is
read through no link (a `wheels/` linked elsewhere is refused, not skipped), and each file is checked as it is
copied, so that pip sees exactly the files the manifest lists, and what it installs is what was checked: a file
swapped in the user's folder after the check is not the one installed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Mapping, Optional

from ..paths import usable_folder
from ..userfile import MAX_BYTES, expect, open_inside, read_open, read_toml
from .manifest import (MANIFEST, BundleError, Manifest, check_listing, digest_of, files_in, parse_manifest,
                       read_manifest, sha256_of, verify_tree)
from .parts import SUFFIX, read_index, reassemble

__all__ = ["OpenedBundle", "open_bundle", "check_platform"]

_PART = re.compile(r"^(?P<whole>.+)\.part\d+-of-\d+$")


@dataclass(frozen=True)
class OpenedBundle:
    folder: Path  # the checked bundle tree: envcheck's private copy
    manifest: Manifest
    name: str  # as the user named it, for messages

    @property
    def wheels(self) -> Path:
        return self.folder / "wheels"


def open_bundle(path: Path, cache: Path) -> OpenedBundle:
    """The bundle at path, checked, as a private copy. BundleError (exit 2) naming the part or file that is missing
    or corrupted; UsageError when the cache is not a folder of the user's alone."""
    path = Path(path)
    name = str(path)
    bundles = usable_folder(Path(cache) / "bundles", f"envcheck's bundle cache {Path(cache) / 'bundles'}",
                            create=True, root=Path(cache))
    if path.is_dir():
        folder, manifest = _private_copy(path, bundles, name)
    else:
        index = _index_for(path)
        if index is not None:
            whole = read_index(index)
            path = reassemble(index, bundles / f"{whole.sha256[:16]}.tar")  # every part checked, every time
        elif not path.is_file():
            raise BundleError(f"--bundle {name}: no such file or folder (expected a bundle folder, FILE.tar, or its parts)")
        folder = bundles / sha256_of(path)[:16]
        if not (folder / MANIFEST).is_file():
            _unpack(path, folder, name)
        manifest = read_manifest(folder, f"{name}: {MANIFEST}")
        verify_tree(folder, manifest, name)
    _check_lock(folder, manifest, name)
    return OpenedBundle(folder, manifest, name)


def _private_copy(source: Path, bundles: Path, name: str) -> tuple[Path, Manifest]:
    """A folder bundle as a copy of envcheck's own: its listing checked (through no link, nothing missing, nothing
    more), then each file copied and checked as it is read; a copy made before is used when it checks again."""
    root = os.open(source, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        where = f"{name}/{MANIFEST}"
        if not os.path.lexists(source / MANIFEST):
            raise BundleError(f"{where}: missing: this is not an envcheck bundle (no {MANIFEST})")
        text = read_open(open_inside(root, MANIFEST, name, error=BundleError), where, MAX_BYTES, "a bundle's manifest")
        manifest = parse_manifest(_json(text, where), where)
        check_listing(files_in(root, name), manifest, name)
        folder = bundles / f"folder-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        if (folder / MANIFEST).is_file():
            try:
                verify_tree(folder, manifest, name)
                return folder, manifest
            except BundleError:
                shutil.rmtree(folder)  # ours, and not what it was: made again
        stage = Path(tempfile.mkdtemp(prefix=".copy-", dir=bundles))
        try:
            for entry in manifest.files:
                _copy_checked(root, entry, stage, name)
            (stage / MANIFEST).write_text(text, encoding="utf-8")  # inside a folder made new (mkdtemp: 0700)
            os.replace(stage, folder)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        return folder, manifest
    finally:
        os.close(root)


def _json(text: str, where: str):
    from ..userdata import parse_json

    return parse_json(text, where, BundleError)


def _copy_checked(root: int, entry, stage: Path, name: str) -> None:
    """entry's file from the bundle folder (through no link) into stage, hashed as it is copied."""
    fd = open_inside(root, entry.path, name, error=BundleError)
    target = stage.joinpath(*PurePosixPath(entry.path).parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as out:
            digest, size = digest_of(fd, out)
    finally:
        os.close(fd)
    if size != entry.size:
        raise BundleError(f"{name}: {entry.path} is {size} bytes, the manifest says {entry.size}: corrupted")
    if digest != entry.sha256:
        raise BundleError(f"{name}: {entry.path} does not match its sha256 in the manifest: corrupted")


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
    """Extract only regular files and folders, only inside folder (a hostile tar can do nothing else), into a new
    folder beside it (mkdtemp: nothing planted at a fixed name is written through), renamed into place whole."""
    partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        with tarfile.open(tar_path, "r:") as tar:
            for member in tar:
                pure = PurePosixPath(member.name)
                if ("\0" in member.name or pure.is_absolute() or ".." in pure.parts
                        or not (member.isfile() or member.isdir())):
                    raise BundleError(f"{name}: {member.name[:200]!r} is not a plain file inside the bundle: refused")
                target = partial.joinpath(*pure.parts)
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                with open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as out:
                    shutil.copyfileobj(source, out, 1 << 20)
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise BundleError(f"{name}: not a readable tar ({str(exc)[:200]}): corrupted or truncated") from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    partial.replace(folder)


def _check_lock(folder: Path, manifest: Manifest, name: str) -> None:
    """Each wheel's sha256 is the one the lock names for that file (when the lock names it)."""
    locks = manifest.of("lock")
    if not locks:
        raise BundleError(f"{name}: {MANIFEST} lists no lock")
    data = read_toml(folder / locks[0].path, f"{name}: {locks[0].path}", error=BundleError)  # the bundle's fault
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
