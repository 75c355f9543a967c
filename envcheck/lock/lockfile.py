"""The lock on disk: written with its header and read back through packaging.pylock, or read and validated; and
which of its packages apply to an environment."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from packaging.pylock import Package, Pylock

from .. import __version__
from ..userfile import read_toml, tomllib, write_text
from .build import LockResult, validate
from .toml import to_toml


HEADER = """\
PEP 751 lock for profile {profile}, written by envcheck {version} {origin}.
{install}
Check an environment:          envcheck verify --lock pylock.toml --python PATH"""
INSTALL_WITH_PIP = """\
Install (pip 26.1 and later):  pip install --no-deps -r pylock.toml
Install (any pip):             envcheck lock --from pylock.toml --format requirements -o requirements.txt
                               pip install --no-deps --require-hashes -r requirements.txt"""
INSTALL_WITH_VCS = """\
Install:                       envcheck lock --from pylock.toml --format requirements -o requirements.txt
                               pip install --no-deps --require-hashes -r requirements.txt
                               then fetch {distribution}'s commit and `pip install --no-deps -e` it. (pip 26.1's
                               `-r pylock.toml` refuses this file: it cannot hash-check a VCS package.)"""


def write_lock(result: LockResult, path: Path) -> str:
    """Write the lock and read it back through packaging.pylock; returns the text written."""
    profile = result.data["tool"]["envcheck"]["profile"]
    source = result.data["tool"]["envcheck"].get("cutlass")  # absent: the profile needs no CUTLASS checkout
    install = INSTALL_WITH_VCS.format(distribution=source["distribution"]) if source else INSTALL_WITH_PIP
    resolved = result.data["tool"]["envcheck"].get("resolved")
    origin = (f"for CPython {resolved['python-version']} on {resolved['platform']} ({resolved['resolver']})" if resolved
              else "from the target interpreter's installed stack")
    text = to_toml(result.data, HEADER.format(profile=profile, version=__version__, install=install, origin=origin))
    again = validate(tomllib.loads(text), f"{path} (as written)")
    if again != result.pylock:  # pragma: no cover - a bug in the TOML writer
        raise RuntimeError(f"{path}: the written lock does not read back as the lock that was built")
    write_text(path, text, f"-o {path} (the lock)")
    return text


def read_lock(path: Path, flag: str = "--lock") -> Pylock:
    """A lock file, validated. Every way it can be unusable is a UsageError naming the file."""
    return validate(read_toml(path, f"{flag} {path}"), f"{flag} {path}")


def applies(package: Package, environment: Mapping[str, str]) -> bool:
    """Whether a package of the lock is for this environment (PEP 508 markers: `python_version`, `sys_platform`...):
    no marker, or its marker true there."""
    return package.marker is None or package.marker.evaluate(dict(environment, extra=""))
