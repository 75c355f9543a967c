"""The lock on disk: written with its header and read back through packaging.pylock, or read and validated."""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.pylock import Pylock

from .. import __version__
from ..errors import UsageError
from .build import LockResult, validate
from .toml import to_toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


HEADER = """\
PEP 751 lock for profile {profile}, written by envcheck {version} from the target interpreter's installed stack.
Install (pip 26.1 and later):  pip install --no-deps -r pylock.toml
Install (any pip):             envcheck lock --from pylock.toml --format requirements -o requirements.txt
                               pip install --no-deps --require-hashes -r requirements.txt{cutlass}
Check an environment:          envcheck verify --lock pylock.toml --python PATH"""


def write_lock(result: LockResult, path: Path) -> str:
    """Write the lock and read it back through packaging.pylock; returns the text written."""
    profile = result.data["tool"]["envcheck"]["profile"]
    source = result.data["tool"]["envcheck"].get("cutlass")  # absent: the profile needs no CUTLASS checkout
    cutlass = (f"\n                               ({source['distribution']} is a VCS package: fetch the commit and "
               f"`pip install --no-deps -e` it.)") if source else ""
    text = to_toml(result.data, HEADER.format(profile=profile, version=__version__, cutlass=cutlass))
    again = validate(tomllib.loads(text), f"{path} (as written)")
    if again != result.pylock:  # pragma: no cover - a bug in the TOML writer
        raise RuntimeError(f"{path}: the written lock does not read back as the lock that was built")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write the lock: {exc.strerror or exc}") from None
    return text


def read_lock(path: Path, flag: str = "--lock") -> Pylock:
    """A lock file, validated. Every way it can be unusable is a UsageError naming the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot read the lock: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{flag} {path}: not valid TOML: {exc}") from None
    return validate(data, f"{flag} {path}")
