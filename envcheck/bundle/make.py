"""`envcheck bundle`: everything a profile's stack needs, for a machine with no network.

From the profile's lock: every wheel for the target platform, downloaded by pip with every hash checked
(`pip download --require-hashes --no-deps --only-binary=:all: --platform ... --python-version ... --implementation
cp`), the CUTLASS commit as a git bundle where the lock has cutlass_api, the lock itself, and manifest.json with
each file's size and sha256. Written as a folder, or as one tar file (optionally cut into parts).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional, Sequence

from packaging.pylock import Package, Pylock
from packaging.utils import canonicalize_name, parse_wheel_filename

from .. import __version__, piprun, proc, shell
from ..atomic import refuse_folder, replacing
from ..errors import EXIT_FAILED, UsageError
from ..lock.lockfile import applies
from ..redact import without_credentials
from ..userfile import existing_folder
from .gitbundle import make_git_bundle
from .manifest import MANIFEST, BundleFile, CutlassEntry, Manifest, Platform, sha256_of, write_manifest
from .parts import split

__all__ = ["BundleRequest", "check_output", "select_packages", "make_bundle", "pip_download_argv", "GIT_BUNDLE", "LOCK_NAME"]

GIT_BUNDLE = "cutlass.bundle"
LOCK_NAME = "pylock.toml"
BUILD_REQUIREMENTS = ("setuptools>=70.1",)  # cutlass_api's build backend (>=70.1 builds editables without `wheel`)
WHEELS = "wheels"


@dataclass(frozen=True)
class BundleRequest:
    lock: Pylock
    lock_text: str
    lock_dir: Path  # where the lock's relative wheel paths start
    profile: str
    output: Path  # a folder, or FILE.tar
    platform: Platform = Platform.linux()
    without: tuple[str, ...] = ()  # canonical names
    present: frozenset[str] = frozenset()  # --only-missing: what the target has and doctor does not flag
    skip_cutlass: bool = False  # --only-missing and the target's cutlass_api passes doctor
    split: Optional[int] = None  # bytes per part
    index_url: Optional[str] = None
    no_index: bool = False
    find_links: tuple[str, ...] = ()
    cutlass_url: Optional[str] = None  # where to fetch the commit from (default: the lock's VCS URL)


def select_packages(
    packages: Sequence[Package], environment: Mapping[str, str], without: Iterable[str] = (),
    present: Iterable[str] = (),
) -> tuple[tuple[Package, ...], tuple[str, ...]]:
    """(the packages the bundle carries, why each other one is left out). Pure.

    A package is left out when its marker excludes the platform, when --without names it, when only packages left
    out need it (torch's own CUDA wheels go with torch), or when the target already has it and doctor does not
    flag it (--only-missing)."""
    dropped = {canonicalize_name(n) for n in without}
    there = {canonicalize_name(n) for n in present}
    notes: list[str] = []
    live = [p for p in packages if applies(p, environment)]
    notes += [f"{p.name}: its marker excludes this platform" for p in packages if p not in live]
    names = {p.name for p in live}
    needs = {p.name: {canonicalize_name(n) for n in map(_dependency_name, p.dependencies or ()) if n} & names for p in live}
    needed = set().union(*needs.values()) if needs else set()
    roots = [n for n in names if n not in needed]
    reach: set[str] = set()
    stack = [n for n in roots if n not in dropped]
    while stack:
        name = stack.pop()
        if name in reach or name in dropped:
            continue
        reach.add(name)
        stack.extend(needs.get(name, ()))
    kept = []
    for package in live:
        if package.name in dropped:
            notes.append(f"{package.name}: --without")
        elif package.name not in reach:
            notes.append(f"{package.name}: only what --without leaves out needs it")
        elif package.name in there:
            notes.append(f"{package.name}: the target has it, and doctor does not flag it")
        else:
            kept.append(package)
    return tuple(kept), tuple(notes)


def _dependency_name(dependency) -> str:
    """A lock's `dependencies` entry is a table (PEP 751 leaves its keys open): its name, or ''."""
    name = dependency.get("name") if isinstance(dependency, Mapping) else getattr(dependency, "name", None)
    return name if isinstance(name, str) else ""


def pip_download_argv(python: str, requirements: Sequence[str], dest: Path, platform: Platform, *,
                      index_url: Optional[str], no_index: bool, find_links: Sequence[str]) -> list[str]:
    """pip download for another machine: binary wheels only, no dependency resolution. `requirements` are pip
    arguments: `-r FILE` of hash-pinned lines (then pip requires every hash), or requirement strings."""
    argv = [python, "-m", "pip", "download", piprun.ISOLATED, "--disable-pip-version-check", "--no-input",
            "--no-deps", "--only-binary=:all:", f"--python-version={platform.python_version}",
            f"--implementation={platform.implementation}", f"--dest={dest}"]
    argv += [f"--platform={tag}" for tag in platform.tags]
    if no_index:
        argv.append("--no-index")
    elif index_url:
        argv.append(f"--index-url={index_url}")
    argv += [f"--find-links={link}" for link in find_links]
    if requirements[:1] == ["-r"]:
        argv.append("--require-hashes")
    return argv + ["--", *requirements] if requirements[:1] != ["-r"] else argv + list(requirements)


Runner = Callable[[Sequence[str]], proc.Finished]
DOWNLOAD_S = 3600.0  # pip download of a whole stack (a CUDA torch is GBs): then its process group is killed


def _run(argv: Sequence[str]) -> proc.Finished:
    """pip under envcheck's pip rule (piprun: in an empty private folder of its own, an index URL's secret in a file
    there; the machine-wide pip configuration applies, PIP_CONFIG_FILE's does not)."""
    return piprun.run(argv, DOWNLOAD_S, env=piprun.environment(os.environ))


class Incomplete(Exception):
    """pip or git could not get a part of the bundle: the message says which; nothing is written."""


def make_bundle(request: BundleRequest, *, say: Callable[[str], None] = lambda text: None, runner: Runner = _run) -> int:
    """Write the bundle; 0 when it holds everything it should, 1 when pip or git could not get a part of it (then
    nothing is left at -o). It is built in a folder beside -o and moved there when complete."""
    packages, notes = select_packages(request.lock.packages, request.platform.environment(), request.without, request.present)
    for note in notes:
        say(f"left out {note}")
    output = check_output(request.output)
    as_tar = output.suffix == ".tar"
    stage = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
    try:
        files = _download_locked(stage, request, packages, say, runner) + [_add_lock(stage, request)]
        cutlass = next((p for p in packages if p.vcs is not None), None)
        entry = None
        if cutlass is not None and not request.skip_cutlass:
            more, entry = _add_cutlass(stage, request, cutlass, say, runner)
            files += more
    except Incomplete as exc:
        say(str(exc))
        shutil.rmtree(stage, ignore_errors=True)
        return EXIT_FAILED
    manifest = Manifest(
        profile=request.profile, platform=request.platform, files=tuple(files), cutlass=entry,
        without=request.without, created_by=f"envcheck {__version__}", notes=notes,
    )
    write_manifest(manifest, stage)
    if not as_tar:
        if output.exists():
            output.rmdir()  # empty, checked above
        stage.replace(output)
        say(f"wrote {output}: {len(manifest.files)} files, {manifest.size / 2**20:.1f} MiB")
        return 0
    try:
        _tar(stage, output)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    say(f"wrote {output}: {len(manifest.files)} files, {output.stat().st_size / 2**20:.1f} MiB")
    if request.split:
        index = split(output, request.split)
        say(f"split into {len(index.parts)} parts of at most {request.split / 2**20:.1f} MiB; index "
            f"{output.name}.parts.json (reassembled and checked by `{shell.line(('envcheck', 'fix', '--bundle', f'{output.name}.parts.json'))}`)")
    return 0


def check_output(given: Path) -> Path:
    """-o as an absolute path, when the bundle can be written there: FILE.tar that is not a folder, or a folder that
    is new or empty; never a link (to a folder, the tar's rename would replace it; a folder bundle moved onto it
    would land elsewhere), in a folder that exists (none is made). Else a UsageError naming -o."""
    output = Path(given).absolute()
    existing_folder(output, f"-o {given}")
    if output.is_symlink():
        raise UsageError(f"-o {given}: a symbolic link: expected a new folder, or FILE.tar (name the place itself)")
    if output.suffix == ".tar":
        try:
            refuse_folder(output)
        except IsADirectoryError:
            raise UsageError(f"-o {given}: a folder: expected FILE.tar, a file to write the bundle to") from None
    elif output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise UsageError(f"-o {given}: exists and is not an empty folder: choose a new one")
    return output


def _recorded(path: Path, stage: Path, role: str) -> BundleFile:
    return BundleFile(path.relative_to(stage).as_posix(), path.stat().st_size, sha256_of(path), role)


def _download_locked(stage: Path, request: BundleRequest, packages, say, runner) -> list[BundleFile]:
    """Every locked wheel for the platform, by hash: exactly one per package."""
    from ..lock.export import requirements

    wheels = stage / WHEELS
    wheels.mkdir()
    listed = [p for p in packages if p.vcs is None and p.directory is None and p.archive is None]
    if listed:
        locked = dataclasses.replace(request.lock, packages=list(packages))
        with tempfile.TemporaryDirectory(prefix="envcheck-bundle-") as scratch:
            req = Path(scratch) / "requirements.txt"
            req.write_text(requirements(locked, request.lock_dir, request.platform.environment(), what="the bundle's lock"), encoding="utf-8")
            argv = pip_download_argv(sys.executable, ["-r", str(req)], wheels, request.platform,
                                     index_url=request.index_url, no_index=request.no_index, find_links=request.find_links)
            say(f"downloading {len(listed)} wheels for {request.platform.text} (every hash checked)")
            done = runner(argv)
        if done.returncode != 0:
            raise Incomplete("pip download failed:\n" + "\n".join((done.stderr or done.stdout or "").strip().splitlines()[-8:]))
    got: dict[str, list[Path]] = {}
    for path in sorted(wheels.iterdir()):
        try:
            got.setdefault(canonicalize_name(parse_wheel_filename(path.name)[0]), []).append(path)
        except ValueError:
            raise Incomplete(f"pip left something that is not a wheel: {path.name}") from None
    missing = [p.name for p in listed if p.name not in got]
    doubled = [n for n, paths in got.items() if len(paths) > 1]
    if missing or doubled:
        raise Incomplete(f"the download does not match the lock: missing {missing or 'none'}, "
                         f"more than one wheel for {doubled or 'none'}")
    return [_recorded(path, stage, "wheel") for paths in got.values() for path in paths]


def _add_lock(stage: Path, request: BundleRequest) -> BundleFile:
    path = stage / LOCK_NAME
    path.write_text(request.lock_text, encoding="utf-8")
    return _recorded(path, stage, "lock")


def _add_cutlass(stage: Path, request: BundleRequest, cutlass: Package, say, runner) -> tuple[list[BundleFile], CutlassEntry]:
    """The pinned commit as a git bundle, and the build backend that installs it editable (the target may have none
    and no index to get one from)."""
    wheels = stage / WHEELS
    before = set(wheels.iterdir())
    argv = pip_download_argv(sys.executable, list(BUILD_REQUIREMENTS), wheels, request.platform,
                             index_url=request.index_url, no_index=request.no_index, find_links=request.find_links)
    done = runner(argv)
    if done.returncode != 0:
        raise Incomplete(f"could not download {', '.join(BUILD_REQUIREMENTS)} to build {cutlass.name} with: "
                         + " ".join((done.stderr or done.stdout or "").strip().splitlines()[-2:]))
    files = [_recorded(path, stage, "build") for path in sorted(set(wheels.iterdir()) - before)]
    vcs = cutlass.vcs
    # the manifest travels with the bundle: it names the source without the lock's credentials, if it had any
    entry = CutlassEntry(GIT_BUNDLE, without_credentials(vcs.url or ""), vcs.requested_revision or "", vcs.commit_id,
                         vcs.subdirectory or "")
    say(f"packing {cutlass.name} at {vcs.commit_id[:12]} ({entry.subdir}) from {request.cutlass_url or vcs.url} as a git bundle")
    try:
        make_git_bundle(entry, request.cutlass_url or vcs.url or "", stage / GIT_BUNDLE)
    except Exception as exc:  # noqa: BLE001 - git's failure is reported, the bundle is not written
        raise Incomplete(f"could not pack {cutlass.name}: {getattr(exc, 'stderr', '') or exc}") from None
    return files + [_recorded(stage / GIT_BUNDLE, stage, "git-bundle")], entry


def _tar(stage: Path, output: Path) -> None:
    """An uncompressed tar (wheels are compressed already) of the bundle, in a fixed order with neutral owners,
    written whole (atomic.replacing: a new file renamed over -o, never written through a link planted beside it)."""

    def neutral(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        return info

    with replacing(output) as out, tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in [stage / MANIFEST] + sorted(p for p in stage.rglob("*") if p.is_file() and p.name != MANIFEST):
            tar.add(path, arcname=path.relative_to(stage).as_posix(), recursive=False, filter=neutral)
