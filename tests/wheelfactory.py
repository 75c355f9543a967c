"""Real, small wheels built by the tests, and real virtual environments to install them into."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path
from typing import Mapping, Optional, Sequence


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(
    folder: Path,
    name: str,
    version: str,
    files: Optional[Mapping[str, str]] = None,
    requires: Sequence[str] = (),
    tag: str = "py3-none-any",
    extras: Sequence[str] = (),
) -> Path:
    """Write a valid wheel of `name` holding `files` (path -> text) and return its path. extras: the extras it
    provides (their requirements go in `requires` with `; extra == "NAME"`)."""
    stem = re.sub(r"[-_.]+", "_", name)
    info = f"{stem}-{version}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Provides-Extra: {e}\n" for e in extras)
                + "".join(f"Requires-Dist: {r}\n" for r in requires))
    contents = dict(files or {})
    contents[f"{info}/METADATA"] = metadata
    contents[f"{info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: envcheck-tests\nRoot-Is-Purelib: true\nTag: {tag}\n"
    record = "".join(f"{path},{_record_hash(text.encode())},{len(text.encode())}\n" for path, text in contents.items())
    contents[f"{info}/RECORD"] = record + f"{info}/RECORD,,\n"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in contents.items():
            archive.writestr(member, text)
    return path


def make_venv(folder: Path, python: Optional[str] = None) -> Path:
    """A real virtual environment without pip of its own (pip is driven from outside with --python). Returns its python."""
    if python is None or python == sys.executable:
        venv.EnvBuilder(with_pip=False, symlinks=True).create(folder)
    else:
        subprocess.run([python, "-m", "venv", "--without-pip", str(folder)], check=True)
    return folder / "bin" / "python"


def pip(target_python: Path, *args: str, env: Optional[Mapping[str, str]] = None) -> subprocess.CompletedProcess:
    """Run this interpreter's pip against another interpreter."""
    command = [sys.executable, "-m", "pip", "--python", str(target_python), "--disable-pip-version-check", "-q", *args]
    # The machine's pip configuration (extra find-links, constraints) must not leak into the tests' environments.
    isolated = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    isolated.update({"PIP_CONFIG_FILE": os.devnull, **(env or {})})
    done = subprocess.run(command, capture_output=True, text=True, env=isolated)
    if done.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def install(target_python: Path, wheelhouse: Path, *requirements: str, extra: Sequence[str] = ()) -> None:
    pip(target_python, "install", "--no-index", "--find-links", str(wheelhouse), *extra, *requirements)
