"""The facts a bug report names of the machine, as torch's collect_env gives them: the OS, the kernel and machine,
libc, a C compiler, the CPU. Files read (/etc/os-release, /proc/cpuinfo, each capped), one `--version` of the first C
compiler on PATH under a time limit; never a judgement."""

from __future__ import annotations

import os
import shutil
from typing import Mapping, Optional

from ..model import System
from ..proc import run

__all__ = ["gather_system", "COMPILERS"]

COMPILERS = ("gcc", "cc", "clang")  # as collect_env looks for one; $CC is named, never run
_CAP = 1 << 20


def _read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(_CAP).decode("utf-8", "replace")
    except OSError:
        return ""


def _os_release(text: str) -> Optional[str]:
    fields = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    name = fields.get("PRETTY_NAME") or fields.get("NAME")
    return name.strip().strip('"').strip("'") if name else None


def _cpu(text: str) -> Optional[str]:
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model") and value.strip():
            return value.strip()
    return None


def _libc() -> Optional[str]:
    try:
        found = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.35", from the running libc
    except (ValueError, OSError, AttributeError):
        found = None
    return found or None


def _compiler(env: Mapping[str, str], timeout: float) -> Optional[str]:
    for name in COMPILERS:
        path = shutil.which(name, path=env.get("PATH", ""))
        if path is None:
            continue
        try:
            done = run([path, "--version"], timeout)
        except OSError:
            continue
        first = next((line.strip() for line in done.stdout.splitlines() if line.strip()), "")
        if done.returncode == 0 and first:
            return f"{first} ({path})"
    return None


def gather_system(env: Mapping[str, str], timeout: float = 5.0, os_release: str = "/etc/os-release",
                  cpuinfo: str = "/proc/cpuinfo") -> System:
    uname = os.uname() if hasattr(os, "uname") else None
    return System(
        os=_os_release(_read(os_release) or _read("/usr/lib/os-release")),
        kernel=uname.release if uname else None,
        machine=uname.machine if uname else None,
        libc=_libc(),
        compiler=_compiler(env, timeout),
        cc=env.get("CC") or None,
        cpu=_cpu(_read(cpuinfo)),
        cpus=os.cpu_count(),
    )
