"""Facts about the CUDA toolkit: every nvcc a build could pick, in the order it would pick them."""

from __future__ import annotations

import os
import re
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Mapping, Optional, Sequence

from ..model import Interpreter, Nvcc, Toolkit
from ..proc import run

__all__ = ["gather_toolkit", "early_nvcc", "nvcc_locations", "parse_nvcc_version"]

_RELEASE = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
# Where the nvidia-cuda-nvcc wheels put nvcc, relative to site-packages (CUDA 12 and CUDA 13 layouts).
_WHEEL_NVCC = ("nvidia/cuda_nvcc/bin/nvcc", "nvidia/cu13/bin/nvcc")
SYSTEM_CUDA = "/usr/local/cuda"  # where the CUDA installers put the toolkit


def parse_nvcc_version(text: str) -> Optional[str]:
    """'Cuda compilation tools, release 13.0, V13.0.88' -> '13.0.88'."""
    match = _RELEASE.search(text)
    return match[2] if match else None


def nvcc_locations(
    env: Mapping[str, str], interpreter: Optional[Interpreter], system_cuda: str = SYSTEM_CUDA
) -> list[tuple[str, str]]:
    """(path, how it was found) for each nvcc, most preferred first, without duplicates."""
    found: list[tuple[str, str]] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            found.append((os.path.join(env[var], "bin", "nvcc"), var))
    on_path = shutil.which("nvcc", path=env.get("PATH", ""))
    if on_path:
        found.append((on_path, "PATH"))
    found.append((os.path.join(system_cuda, "bin", "nvcc"), system_cuda))
    if interpreter is not None:
        for site in interpreter.site_dirs:
            for relative in _WHEEL_NVCC:
                found.append((os.path.join(site, relative), "nvidia-cuda-nvcc wheel"))
    unique, seen = [], set()
    for path, source in found:
        if not os.path.isfile(path):
            if source in ("CUDA_HOME", "CUDA_PATH"):
                unique.append((path, source))  # a variable that points nowhere is worth reporting
            continue
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            unique.append((path, source))
    return unique


def _run_nvcc(path: str, source: str, timeout: float) -> Nvcc:
    if not os.path.isfile(path):
        return Nvcc(path=path, source=source, error="no nvcc there")
    try:
        done = run([path, "--version"], timeout)
    except OSError as exc:
        return Nvcc(path=path, source=source, error=f"could not run: {exc.strerror or exc}")
    if done.timed_out:
        return Nvcc(path=path, source=source, error=f"--version did not finish within {timeout:g} s (it was killed)")
    version = parse_nvcc_version(done.stdout)
    if version is None:
        return Nvcc(path=path, source=source, error=f"--version printed no release (exit {done.returncode})")
    return Nvcc(path=path, source=source, version=version)


def _ask(locations: Sequence[tuple[str, str]], timeout: float) -> dict[tuple[str, str], Future]:
    """`nvcc --version` started now for each (path, how it was found), all at once."""
    pool = ThreadPoolExecutor(max_workers=max(1, len(locations)), thread_name_prefix="nvcc")
    asked = {location: pool.submit(_run_nvcc, *location, timeout) for location in locations}
    pool.shutdown(wait=False)
    return asked


def early_nvcc(env: Mapping[str, str], timeout: float = 10.0, system_cuda: str = SYSTEM_CUDA) -> dict[tuple[str, str], Future]:
    """Each nvcc found without the interpreter (CUDA_HOME, CUDA_PATH, PATH, the system toolkit) asked its version now,
    by (path, how it was found), for gather_toolkit to take: doctor starts them with the probe."""
    return _ask(nvcc_locations(env, None, system_cuda), timeout)


def gather_toolkit(
    env: Mapping[str, str], interpreter: Optional[Interpreter], timeout: float = 10.0, system_cuda: str = SYSTEM_CUDA,
    started: Optional[Mapping[tuple[str, str], Future]] = None,
) -> Toolkit:
    """Every nvcc, each asked its version (all at once); an nvcc found the same way as one in `started` (early_nvcc)
    is not asked again. What `nvcc --version` says depends only on the nvcc, not on `env`."""
    started = started or {}
    locations = nvcc_locations(env, interpreter, system_cuda)
    asked = {**_ask([location for location in locations if location not in started], timeout), **started}
    return Toolkit(candidates=tuple(asked[location].result() for location in locations))
