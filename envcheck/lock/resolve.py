"""Resolving a profile's stack for a target platform, on any machine: no torch, GPU or CUTLASS checkout needed.

The resolver is uv (`uv pip compile --format pylock.toml`), not one of our own. Why uv rather than pip's
`install --dry-run --report`:

- *target markers*: uv's `--python-version` and `--python-platform` evaluate every environment marker for the
  target (`python_version`, `sys_platform`, `platform_machine`). pip's `--python-version/--platform` choose wheel
  tags only; its markers stay those of the interpreter running it, so a lock made on macOS or with Python 3.11
  would carry the wrong conditional dependencies. pip also takes a platform tag literally (`manylinux_2_28_x86_64`
  does not admit the `manylinux_2_17` wheels torch's dependencies ship), and before pip 23.3 it downloads every
  candidate wheel in full to read its metadata (gigabytes for torch).
- *the lock itself*: uv writes PEP 751 with every wheel's URL, size and sha256, which packaging.pylock reads as is.
- *isolation and speed*: `--no-config` keeps a machine's uv configuration out of the lock; the stack resolves in
  about 15 s cold, under 2 s from uv's cache.

uv comes with envcheck's `lock` extra (`uv.find_uv_bin()`), or from PATH; without either, `lock --profile` says so
(exit 2). A live lock (`--from-env`) needs no uv.
What uv cannot resolve stays envcheck's: a CUTLASS source the profile pins (cutlass_api has no wheel) becomes a VCS
package, and the profile's facts go to `[tool.envcheck]` (build.py).

`resolve(policy, target)` is the function other parts call (a bundle wants `Resolution.wheels`).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from packaging.pylock import Pylock, PylockValidationError
from packaging.version import Version

from .. import proc
from ..errors import UsageError
from ..model import canonical_name
from ..profile import Policy
from ..redact import without_credentials
from ..userfile import tomllib
from .sources import PYPI
from .stack import Root, stack_roots

__all__ = ["Target", "Wheel", "Resolution", "requirements_for", "resolve", "uv_binary"]

TIMEOUT = 900.0
_PLATFORM = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_PYTHON_VERSION = re.compile(r"^3\.\d{1,2}(\.\d{1,3})?$")
# The PEP 508 environment a uv platform name stands for: (sys_platform, platform_machine) by name fragment.
_SYSTEMS = (("windows", "win32"), ("macos", "darwin"), ("apple-darwin", "darwin"), ("linux", "linux"))
_MACHINES = ("x86_64", "aarch64", "arm64", "ppc64le", "s390x")
_MACHINE_NAMES = {("darwin", "aarch64"): "arm64", ("win32", "x86_64"): "AMD64", ("win32", "aarch64"): "ARM64"}
# uv's glibc Linux names (`uv help pip compile`, --python-platform): each alias as the manylinux name it stands for.
_ALIASES = {"linux": "x86_64-manylinux_2_28", "x86_64-unknown-linux-gnu": "x86_64-manylinux_2_28",
            "aarch64-unknown-linux-gnu": "aarch64-manylinux_2_28"}
_MANYLINUX = re.compile(r"^(?P<machine>x86_64|aarch64)-manylinux(?:2014|_2_(?P<glibc>1[7-9]|[2-9]\d))$")


@dataclass(frozen=True)
class Target:
    """Where the locked stack will run: a CPython version and a uv platform name (`uv help pip compile`)."""

    python_version: str = "3.12"
    platform: str = "x86_64-manylinux_2_28"

    def check(self) -> None:
        if not _PYTHON_VERSION.match(self.python_version):
            raise UsageError(f"--python-version {self.python_version!r}: expected a CPython version such as 3.12")
        if not _PLATFORM.match(self.platform):
            raise UsageError(f"--platform {self.platform!r}: expected a uv platform such as x86_64-manylinux_2_28 or aarch64-manylinux_2_28")

    @property
    def manylinux(self) -> Optional[tuple[str, int]]:
        """(machine, glibc minor) where this platform is glibc Linux, as uv reads its names: X-manylinux_2_NN,
        X-manylinux2014 (2.17), X-unknown-linux-gnu and `linux` (x86_64) for 2.28; None for any other (macOS,
        Windows, musl, Android: no manylinux wheel runs there)."""
        found = _MANYLINUX.match(_ALIASES.get(self.platform, self.platform))
        if found is None:
            return None
        machine, glibc = found["machine"], found["glibc"]
        return machine, int(glibc) if glibc else 17

    @property
    def markers(self) -> dict[str, str]:
        """The PEP 508 markers this target fixes (those the platform name does not say are left out)."""
        found = {"implementation_name": "cpython", "python_version": ".".join(self.python_version.split(".")[:2])}
        system = next((value for fragment, value in _SYSTEMS if fragment in self.platform), None)
        if system:
            found["sys_platform"] = system
        machine = next((m for m in _MACHINES if self.platform.startswith(m)), None)
        if machine:
            found["platform_machine"] = _MACHINE_NAMES.get((system or "", machine), machine)
        return found

    @property
    def environment(self) -> str:
        """The lock's `environments` entry: a marker that holds exactly where this target runs."""
        keys = ("sys_platform", "platform_machine", "implementation_name", "python_version")
        markers = self.markers
        return " and ".join(f'{key} == "{markers[key]}"' for key in keys if key in markers)


@dataclass(frozen=True)
class Wheel:
    """One wheel of a resolution: what a bundle downloads and checks."""

    name: str  # canonical
    version: str
    url: str
    sha256: str
    size: Optional[int]

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Resolution:
    """The resolver's answer: PEP 751 package tables (as packaging.pylock reads them) for a target."""

    target: Target
    requirements: tuple[str, ...]  # what was asked of the resolver
    packages: tuple[dict, ...]
    resolver: str  # "uv 0.13.9"
    indexes: tuple[str, ...] = ()  # the indexes asked, first first
    torch_index: str = ""  # the one of them searched first for torch (--torch-index-url, the profile's); "": none

    @property
    def wheels(self) -> tuple[Wheel, ...]:
        """Every wheel of every package, in package order (a package may ship several wheels for one target)."""
        found = []
        for package in self.packages:
            for wheel in package.get("wheels", ()):
                sha256 = dict(wheel.get("hashes", {})).get("sha256", "")
                url = wheel.get("url") or wheel.get("path") or ""
                found.append(Wheel(canonical_name(package["name"]), str(package["version"]), url, sha256, wheel.get("size")))
        return tuple(found)

    def version_of(self, name: str) -> Optional[str]:
        """The version the resolution pins for a package, or None."""
        key = canonical_name(name)
        return next((str(p["version"]) for p in self.packages if canonical_name(p["name"]) == key), None)


def _requirement(root: Root) -> str:
    extras = f"[{','.join(root.extras)}]" if root.extras else ""
    return f"{root.name}{extras}{root.specifier}"


def requirements_for(policy: Policy, without: Sequence[str] = ()) -> tuple[str, ...]:
    """The profile's roots as requirement strings for the resolver: torch, the DSL, every package rule (recommended
    ones too), less `without`. A CUTLASS source that is a checkout (cutlass_api) is not resolvable: build.py adds it
    as a VCS package, and its dependencies are the profile's own package rules."""
    roots = stack_roots(policy)
    known = {r.name for r in roots}
    dropped = {canonical_name(n) for n in without}
    unknown = sorted(dropped - known)
    if unknown:
        raise UsageError(f"--without {', '.join(unknown)}: not a package of profile {policy.id} (its packages: {', '.join(sorted(known))})")
    checkout = canonical_name(policy.cutlass.distribution) if policy.cutlass and policy.cutlass.commit else None
    return tuple(_requirement(r) for r in roots if r.name not in dropped and r.name != checkout)


def uv_binary() -> str:
    """The uv executable of the `lock` extra (its wheel's), else one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        import shutil

        found = shutil.which("uv")
        if found is None:
            raise UsageError(
                "lock --profile resolves with uv, which is not installed here: install envcheck's `lock` extra, "
                "or `pip install uv`"
            ) from None
        return found


def _uv_version(uv: str) -> str:
    try:
        done = proc.run([uv, "--version"], 30)
    except OSError:
        return "uv"
    return " ".join(done.stdout.split()[:2]) or "uv"


def _environment() -> dict[str, str]:
    """This process's environment without uv's and pip's settings: the lock depends on the flags alone."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_")) or k == "UV_CACHE_DIR"}


def _check_index(flag: str, url: str) -> None:
    if not url.startswith(("https://", "http://", "file://")):
        raise UsageError(f"{flag} {url!r}: expected an https, http or file URL of a simple index")


def resolve(
    policy: Policy,
    target: Target = Target(),
    *,
    index_url: str = PYPI,
    torch_index_url: Optional[str] = None,
    find_links: Sequence[Path] = (),
    no_index: bool = False,
    without: Sequence[str] = (),
    exclude: Sequence[str] = (),
    uv: Optional[str] = None,
    timeout: float = TIMEOUT,
) -> Resolution:
    """Resolve the profile's stack for `target` with uv and return every package with its files and hashes.

    torch_index_url: an index searched before index_url (uv's first-index strategy, so torch and what that index
    hosts come from it); default the profile's `torch.index-url`, "" for none. Raises UsageError for bad flags, for
    a target the profile does not support, and when the stack cannot be resolved (uv's reason is in the message).
    exclude: packages kept out of the resolution altogether (uv --excludes), with what only they would bring: a
    bundle --without torch for a target that has torch wants neither torch nor the CUDA wheels it pulls in.
    """
    target.check()
    if not policy.python.contains(Version(target.python_version), prereleases=True):
        raise UsageError(f"--python-version {target.python_version}: profile {policy.id} needs Python {policy.python}")
    torch_index = policy.torch_index_url if torch_index_url is None else torch_index_url
    if not no_index:
        _check_index("--index-url", index_url)
        if torch_index:
            _check_index("--torch-index-url", torch_index)
    for folder in find_links:
        if not Path(folder).is_dir():
            raise UsageError(f"--find-links {folder}: no such directory")
    if no_index and not find_links:
        raise UsageError("--no-index leaves nowhere to find wheels: add --find-links DIR")
    requirements = requirements_for(policy, without)
    if not requirements:
        raise UsageError("--without leaves nothing to resolve")
    uv = uv or uv_binary()
    with tempfile.TemporaryDirectory(prefix="envcheck-lock-") as scratch:
        asked = Path(scratch) / "requirements.in"
        asked.write_text("\n".join(requirements) + "\n", encoding="utf-8")
        output = Path(scratch) / "pylock.toml"
        command = [
            uv, "pip", "compile", "--no-config", "--quiet", "--no-header", "--format", "pylock.toml",
            # --python: envcheck's own interpreter, so that uv skips a slow search for one of the target's version
            # (nothing is built: binary wheels only); the target is --python-version and --python-platform.
            "--python", sys.executable, "--python-version", target.python_version, "--python-platform", target.platform,
            "--only-binary", ":all:", "-o", str(output),
        ]
        env = _environment()
        if no_index:
            command.append("--no-index")
        else:  # in uv's environment, which only its user can read, not its argv, which `ps` shows every user: an
            env["UV_INDEX_URL"] = index_url  # index URL may hold a password or a token
            if torch_index:
                env["UV_EXTRA_INDEX_URL"] = torch_index
        for folder in find_links:
            command += ["--find-links", str(Path(folder).resolve())]
        excluded = sorted({canonical_name(n) for n in (*without, *exclude)})
        if excluded:
            (Path(scratch) / "excludes.txt").write_text("\n".join(excluded) + "\n", encoding="utf-8")
            command += ["--excludes", str(Path(scratch) / "excludes.txt")]
        command += ["--", str(asked)]
        done = proc.run(command, timeout, env=env, cwd=scratch)  # out of time: uv and its children killed
        if done.timed_out:
            raise UsageError(f"resolving profile {policy.id} took longer than {timeout:.0f} s (is the index reachable?)")
        if done.returncode != 0:
            reason = "\n".join(line for line in done.stderr.strip().splitlines() if line.strip())[-3000:]
            raise UsageError(
                f"profile {policy.id} cannot be resolved for CPython {target.python_version} on {target.platform} "
                f"from {'--find-links' if no_index else ', '.join(filter(None, [torch_index, index_url]))}:\n{reason}"
            )
        try:
            data = tomllib.loads(output.read_text(encoding="utf-8"))
            Pylock.from_dict(data)
        except (OSError, tomllib.TOMLDecodeError, PylockValidationError) as exc:  # pragma: no cover - a uv bug
            raise RuntimeError(f"uv wrote a lock packaging.pylock cannot read: {exc}") from exc
    packages = tuple(_public(p) for p in data.get("packages", []))
    indexes = () if no_index else tuple(filter(None, [torch_index, index_url]))
    return Resolution(target, requirements, packages, _uv_version(uv), indexes, "" if no_index else torch_index)


def _public(package: dict) -> dict:
    """A package table with no credentials in any URL (an index token must never reach a lock)."""
    def clean(entry: dict) -> dict:
        return {**entry, "url": without_credentials(entry["url"])} if "url" in entry else entry

    out = dict(package)
    if "wheels" in out:
        out["wheels"] = [clean(w) for w in out["wheels"]]
    if "sdist" in out:
        out["sdist"] = clean(out["sdist"])
    if "index" in out:
        out["index"] = without_credentials(out["index"])
    return out
