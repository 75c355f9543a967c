"""The CUDA folders on PATH and LD_LIBRARY_PATH: which hold an nvcc, which hold CUDA libraries and of which release.
Read as names only (a folder listing, a version.json beside it, the file a libcuda.so.1 links to): nothing there is
run or loaded."""

from __future__ import annotations

import json
import os
import re
from typing import Mapping, Optional

from ..model import CudaFolder, SearchPaths

__all__ = ["read_search_paths", "CUDA_LIBRARIES"]

# The libraries a process of the stack loads by soname: the driver (cuda-bindings dlopens libcuda.so.1), the runtime,
# the JIT linker and compiler (loaded by name by cusparse and cudnn: pytorch/pytorch#138460, #145580), cuBLAS.
CUDA_LIBRARIES = ("libcuda", "libcudart", "libnvrtc", "libnvJitLink", "libcublas", "libcublasLt")
_LIBRARY = re.compile(r"^(" + "|".join(CUDA_LIBRARIES) + r")\.so(\.\d+)+$")
# A library whose file name carries the CUDA release it belongs to: libcudart.so.13.0.96, libnvrtc.so.13.0.88.
_RELEASE_NAMED = re.compile(r"^lib(?:cudart|nvrtc|nvJitLink)\.so\.(\d+\.\d+)\.\d+$")
_FOLDER_NAMED = re.compile(r"cuda-(\d+\.\d+)(?:/|$)")
# The driver's user-mode library names its release: libcuda.so.1 -> libcuda.so.580.159.04 (the version NVML reports).
_DRIVER_NAMED = re.compile(r"^libcuda\.so\.(\d+\.\d+(?:\.\d+)*)$")
MAX_ENTRIES = 64  # folders read per variable
MAX_FILES = 4096  # names read per folder


def _release_beside(folder: str) -> Optional[str]:
    """The CUDA release a toolkit folder belongs to: version.json of its toolkit (bin/.. or lib64/..), else a
    cuda-X.Y in its path."""
    for root in (os.path.dirname(folder.rstrip("/")), os.path.dirname(os.path.dirname(folder.rstrip("/")))):
        path = os.path.join(root, "version.json")
        try:
            if os.path.isfile(path) and os.path.getsize(path) < 1 << 16:
                with open(path, encoding="utf-8") as handle:
                    version = json.load(handle).get("cuda", {}).get("version")
                if isinstance(version, str) and re.match(r"^\d+\.\d+", version):
                    return ".".join(version.split(".")[:2])
        except (OSError, ValueError, AttributeError):
            continue
    named = _FOLDER_NAMED.search(folder)
    return named.group(1) if named else None


def _driver_library(folder: str) -> tuple[Optional[str], Optional[str]]:
    """The file libcuda.so.1 in a folder resolves to and the driver release its name carries, read from the names
    (the link, not the library: nothing is loaded); (None, None) where the link leads to no file."""
    real = os.path.realpath(os.path.join(folder, "libcuda.so.1"))
    if not os.path.isfile(real):
        return None, None
    named = _DRIVER_NAMED.match(os.path.basename(real))
    return real, named.group(1) if named else None


def _read_folder(path: str, variable: str, position: int) -> Optional[CudaFolder]:
    try:
        with os.scandir(path) as entries:
            names = [e.name for _, e in zip(range(MAX_FILES), entries)]
    except OSError:
        return None
    nvcc = variable == "PATH" and "nvcc" in names
    libraries = tuple(sorted(n for n in names if _LIBRARY.match(n))) if variable == "LD_LIBRARY_PATH" else ()
    if not nvcc and not libraries:
        return None
    named = next((m.group(1) for m in map(_RELEASE_NAMED.match, libraries) if m), None)
    libcuda, libcuda_version = _driver_library(path) if "libcuda.so.1" in libraries else (None, None)
    return CudaFolder(path, variable, position, named or _release_beside(path), libraries, nvcc, libcuda,
                      libcuda_version)


def read_search_paths(env: Mapping[str, str]) -> SearchPaths:
    """The CUDA folders of PATH and LD_LIBRARY_PATH, in each variable's order (an empty entry, the working folder, is
    not read)."""
    folders = []
    for variable in ("PATH", "LD_LIBRARY_PATH"):
        entries = [e for e in (env.get(variable) or "").split(os.pathsep) if e][:MAX_ENTRIES]
        for position, entry in enumerate(dict.fromkeys(entries)):
            folder = _read_folder(entry, variable, position)
            if folder is not None:
                folders.append(folder)
    return SearchPaths(tuple(folders))
