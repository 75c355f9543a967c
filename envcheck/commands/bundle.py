"""`envcheck bundle`: read the flags, find the lock, choose what goes in, and write the bundle."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, Optional, Sequence

from .. import shell
from ..bundle.make import BundleRequest, check_output, make_bundle
from ..bundle.manifest import Platform
from ..bundle.parts import parse_size
from ..errors import UsageError
from ..lock.resolve import Target
from ..model import is_distribution_name

__all__ = ["run_bundle"]


def run_bundle(
    output: Path,
    *,
    profile: Optional[Path] = None,
    lock: Optional[Path] = None,
    python_version: Optional[str] = None,
    platform: Optional[str] = None,
    without: Sequence[str] = (),
    only_missing: bool = False,
    python: Optional[str] = None,
    split: Optional[str] = None,
    index_url: Optional[str] = None,
    no_index: bool = False,
    find_links: Sequence[str] = (),
    cutlass_url: Optional[str] = None,
    gpu_capabilities: tuple[tuple[int, int], ...] = (),
    err: Callable[[str], None] = lambda text: print(text, file=sys.stderr, flush=True),
) -> int:
    from packaging.utils import canonicalize_name

    from ..fix.pipconfig import config_files, read_secrets
    from ..gitsafe import checked_index_url, checked_url
    from ..profile import candidates
    from ..redact import Redactor, url_secrets
    from ..render.text import profile_line

    # bundle's pip (sys.executable's, under piprun's rule) reads the machine-wide pip files: their URLs' secrets too
    pip_reads = read_secrets(config_files(sys.prefix, os.environ))
    told, redact = err, Redactor(paths=False, also=(*url_secrets(index_url, cutlass_url), *pip_reads))

    def err(text: str) -> None:  # what bundle says names URLs, and pip's words: masked, the URLs' parts too
        told(redact(text))

    if only_missing and python is None:
        raise UsageError("--only-missing needs --python PY: the interpreter whose missing packages the bundle carries")
    if python is not None and not only_missing:
        raise UsageError("--python is read only with --only-missing")
    if gpu_capabilities and not only_missing:
        raise UsageError("--gpu-capability is read only with --only-missing (it judges what the target lacks)")
    part_size = None
    if split is not None:
        try:
            part_size = parse_size(split)
        except ValueError as exc:
            raise UsageError(f"--split {exc}") from None
        if Path(output).suffix != ".tar":
            raise UsageError(f"--split needs -o FILE.tar (got -o {output}): a folder cannot be cut into parts")
    if python_version is not None and (not python_version.count(".") == 1
                                       or not all(p.isdigit() for p in python_version.split("."))):
        raise UsageError(f"--python-version {python_version!r}: expected MAJOR.MINOR such as 3.12")
    named_platform = _named_platform(platform, python_version)
    check_output(Path(output))  # before any resolving or download
    if index_url is not None:
        checked_index_url(index_url, "--index-url")
    if cutlass_url is not None:
        cutlass_url = checked_url(cutlass_url, "--cutlass-url")
    links = []
    for link in find_links:
        if not Path(link).is_dir():
            raise UsageError(f"--find-links {link}: expected a directory of wheels")
        links.append(str(Path(link).absolute()))
    for name in without:
        if not is_distribution_name(name):
            raise UsageError(f"--without {name!r}: expected a package name such as torch")
    named = candidates(profile)  # read first: a profile that cannot be used is refused before the target runs
    target = _target(python)  # --only-missing --python PY: its torch (as doctor reads it), its Python and machine
    wheels_for, resolve_for = _platform_of(target, python, python_version, named_platform)
    policy, choice = named.select(target.torch_version if target else None, target=target is not None,
                                  python=target.version_text if target else resolve_for.python_version)
    err(f"envcheck bundle: {profile_line(choice)}")
    dropped = tuple(canonicalize_name(n) for n in without)
    with tempfile.TemporaryDirectory(prefix="envcheck-bundle-lock-") as scratch:
        pylock, lock_path = _lock_for(
            policy, lock, Path(scratch), resolve_for, without=dropped,
            index_url=index_url, no_index=no_index, find_links=links, err=err,
        )
        locked_profile = ((pylock.tool or {}).get("envcheck") or {}).get("profile")
        if locked_profile and locked_profile != policy.id:
            raise UsageError(f"--lock {lock_path}: is a lock of profile {locked_profile!r}, not {policy.id!r}: "
                             f"name its profile (--profile {shell.word(str(locked_profile))})")
        present: frozenset[str] = frozenset()
        skip_cutlass = False
        if only_missing:
            present, skip_cutlass = _present(python, policy, err, gpu_capabilities)
        request = BundleRequest(
            lock=pylock, lock_text=lock_path.read_text(encoding="utf-8"), lock_dir=lock_path.parent.absolute(),
            profile=policy.id, output=Path(output), platform=wheels_for,
            without=dropped, present=present, skip_cutlass=skip_cutlass, split=part_size, index_url=index_url,
            no_index=no_index, find_links=tuple(links), cutlass_url=cutlass_url,
        )
        return make_bundle(request, say=lambda text: err(f"envcheck bundle: {text}"))


def _target(python: Optional[str]):
    """The target's facts (--only-missing --python PY); None: no target."""
    if python is None:
        return None
    from ..gather.target import read_target

    return read_target(python)


def _named_platform(platform: Optional[str], python_version: Optional[str]) -> Optional[Target]:
    """--platform NAME, read as lock reads it (a uv platform: lock.Target.check), and one of glibc Linux, where
    `envcheck fix --bundle` installs the bundle (lock.Target.manylinux); None where none is named."""
    if platform is None:
        return None
    named = Target(python_version or Target.python_version, platform)
    named.check()
    if named.manylinux is None:
        raise UsageError(f"--platform {platform!r}: a bundle is for glibc Linux, where `envcheck fix --bundle` installs "
                         "it: expected x86_64-manylinux_2_28, aarch64-manylinux_2_28 or another of uv's "
                         "MACHINE-manylinux_2_NN names")
    return named


def _platform_of(target, python: Optional[str], asked: Optional[str], named: Optional[Target]) -> tuple[Platform, Target]:
    """(the platform the bundle's wheels are for, the one its lock is resolved for). The CPython version: the
    target's own (a 3.11 target gets cp311 wheels, which fix then installs), else --python-version (default 3.12).
    The machine and glibc: --platform's (its wheels only), else the target's machine, else x86_64, with the wheels
    of any glibc up to ANY_GLIBC (the lock resolved for manylinux_2_28). A --python-version or a --platform's
    machine other than the target's is refused: fix would refuse every wheel of it there."""
    version, machine = asked or Target.python_version, "x86_64"
    if target is not None:
        own = ".".join(target.version_text.split(".")[:2])
        if asked is not None and asked != own:
            raise UsageError(f"--python-version {asked}: the target --python {python} is Python {own}, and fix there "
                             f"installs only wheels for {own}: leave --python-version out, or give it as {own}")
        version, machine = own, dict(target.markers).get("platform_machine") or "x86_64"
    if named is None:
        return Platform.linux(version, machine), Target(version, f"{machine}-manylinux_2_28")
    wanted, glibc = named.manylinux
    if target is not None and wanted != machine:
        raise UsageError(f"--platform {named.platform}: the target --python {python} runs on {machine}, and fix there "
                         f"installs only wheels for {machine}: leave --platform out, or name a {machine} one")
    return Platform.linux(version, wanted, glibc), Target(version, named.platform)


def _lock_for(policy, lock: Optional[Path], scratch: Path, resolve_for: Target, *,
              without: tuple[str, ...], index_url: Optional[str], no_index: bool, find_links: list[str], err) -> tuple:
    """(the lock, its file): --lock FILE as given, or the profile resolved for `resolve_for` the way `envcheck lock
    --profile` does it (uv, no live stack), written to scratch. --without names that are the profile's own roots
    are left out of the resolution too; every --without is applied to what the bundle carries."""
    from packaging.utils import canonicalize_name

    from ..lock import read_lock

    if lock is not None:
        return read_lock(lock, "--lock"), Path(lock)
    from ..lock.build import build_resolved_lock
    from ..lock.lockfile import write_lock
    from ..lock.resolve import resolve as resolve_stack
    from ..lock.sources import PYPI
    from ..lock.stack import stack_roots

    roots = {root.name for root in stack_roots(policy)}
    torch = canonicalize_name(policy.torch_requirement.name)
    err(f"envcheck bundle: resolving profile {policy.id} for CPython {resolve_for.python_version} on "
        f"{resolve_for.platform} (no --lock given)")
    resolution = resolve_stack(
        policy, resolve_for,
        index_url=index_url or PYPI,
        torch_index_url="" if torch in without else None,  # torch left out: its own index is not asked
        find_links=[Path(f) for f in find_links], no_index=no_index, without=[n for n in without if n in roots],
        exclude=without,
    )
    result = build_resolved_lock(policy, resolution, [n for n in without if n in roots])
    path = scratch / "pylock.toml"
    write_lock(result, path)
    return result.pylock, path


def _present(python: str, policy, err,
             gpu_capabilities: tuple[tuple[int, int], ...] = ()) -> tuple[frozenset[str], bool]:
    """What the target already has and doctor does not flag (a package a failing check's remedy would install is
    flagged), and whether cutlass_api passes doctor there (then no git bundle is needed)."""
    from packaging.requirements import InvalidRequirement, Requirement

    from ..diagnose import diagnose
    from ..model import Interpreter, canonical_name

    report = diagnose(python, None, policy, no_gpu=True, gpu_capabilities=gpu_capabilities)
    interpreter = report.facts.interpreter if report.facts else None
    if not isinstance(interpreter, Interpreter):
        raise UsageError(f"--python {python}: could not be read: {getattr(interpreter, 'message', '?')}")
    flagged = set()
    for finding in report.findings:
        if finding.status.is_problem and finding.remedy is not None:
            for step in finding.remedy.steps:
                for text in step.args if step.kind == "pip-install" else ():
                    try:
                        flagged.add(canonical_name(Requirement(text).name))
                    except InvalidRequirement:
                        continue
    present = frozenset(d.name for d in interpreter.distributions) - flagged
    finding = report.finding("cutlass-api.install")
    ready = finding is not None and finding.status.value == "pass"
    if ready:
        err(f"envcheck bundle: {policy.cutlass.distribution} passes doctor in {python}: no git bundle")
    return present, ready
