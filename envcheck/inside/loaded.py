"""What the process really loaded, for the smoke child's result line (envcheck/smoke/forensics.py judges it).

Installed is not loaded: the shared libraries mapped into this process (/proc/self/maps on Linux) say which libcuda,
CUDA runtime, cuBLAS and NVRTC ran, and from where; sys.modules says which cutlass and cutlass_api files were
imported. Each library is {"kind", "path", "version", "cuda_major"}: version is what its file name says
(libcuda.so.580.159.04: "580.159.04"; libcudart.so.13: "13"), cuda_major the CUDA major of a CUDA library, or of a
DSL library built for one (_cutlass_ir.cu12...so: 12).

Standard library only, Python 3.8 syntax (copied into the run folder as envcheck_loaded.py).
"""

from __future__ import annotations

import re
import sys

_LIBRARY_KINDS = (  # (kind, file name pattern), the first that matches names it
    ("libcuda", re.compile(r"^libcuda\.so(?:\.(\d[\d.]*))?$")),
    ("cudart", re.compile(r"^libcudart\.so(?:\.(\d[\d.]*))?$")),
    ("cublasLt", re.compile(r"^libcublasLt\.so(?:\.(\d[\d.]*))?$")),
    ("cublas", re.compile(r"^libcublas\.so(?:\.(\d[\d.]*))?$")),
    ("nvrtc", re.compile(r"^libnvrtc\.so(?:\.(\d[\d.]*))?$")),
    ("nvrtc-builtins", re.compile(r"^libnvrtc-builtins\.so(?:\.(\d[\d.]*))?$")),
    ("nvjitlink", re.compile(r"^libnvJitLink\.so(?:\.(\d[\d.]*))?$")),
    ("cudnn", re.compile(r"^libcudnn\w*\.so(?:\.(\d[\d.]*))?$")),
    ("nccl", re.compile(r"^libnccl\.so(?:\.(\d[\d.]*))?$")),
)
CUDA_FAMILY = ("cudart", "cublasLt", "cublas", "nvrtc", "nvrtc-builtins", "nvjitlink")  # versioned with CUDA
_DSL_PATH = re.compile(r"/(?:nvidia_cutlass_dsl[^/]*|cutlass/_mlir)/")
_DSL_FLAVOR = re.compile(r"(?:^|[^a-z0-9])cu(1[0-9])(?:[^0-9]|$)")
_TVM_FFI_PATH = re.compile(r"/tvm_ffi/")
MAX_MAPS = 8 << 20  # bytes of /proc/self/maps read at most
MODULES = ("cutlass", "cutlass_api", "cutlass.operators", "tvm_ffi")


def mapped_files(maps_text):
    """The paths of the files mapped in a /proc/<pid>/maps text, each once, in address order (as listed). Pure."""
    seen = []
    known = set()
    for line in maps_text.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6 or not fields[5].startswith("/"):
            continue  # anonymous memory, [heap], [stack], [vdso]
        path = fields[5].strip()
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        if path not in known:
            known.add(path)
            seen.append(path)
    return seen


def classify_library(path):
    """{"kind", "path", "version", "cuda_major"} for a library the forensics records, or None. Pure."""
    name = path.rsplit("/", 1)[-1]
    for kind, pattern in _LIBRARY_KINDS:
        matched = pattern.match(name)
        if matched:
            version = matched.group(1)
            major = int(version.split(".")[0]) if version and kind in CUDA_FAMILY else None
            return {"kind": kind, "path": path, "version": version, "cuda_major": major}
    if ".so" not in name:
        return None
    if _DSL_PATH.search(path):
        flavor = _DSL_FLAVOR.search(path[_DSL_PATH.search(path).start():])
        return {"kind": "dsl", "path": path, "version": None, "cuda_major": int(flavor.group(1)) if flavor else None}
    if _TVM_FFI_PATH.search(path):
        return {"kind": "tvm-ffi", "path": path, "version": None, "cuda_major": None}
    return None


def loaded_libraries(maps_text):
    """The recorded libraries of a maps text, in address order. Pure."""
    found = (classify_library(path) for path in mapped_files(maps_text))
    return [library for library in found if library is not None]


def imported_modules(modules):
    """{name: file} of the stack's modules in a sys.modules-like mapping (None: imported without a file)."""
    found = {}
    for name in MODULES:
        module = modules.get(name)
        if module is not None:
            found[name] = getattr(module, "__file__", None)
    return found


def read_maps(path="/proc/self/maps"):
    """This process's maps text (bounded), or "" where there is none (not Linux)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_MAPS).decode("utf-8", "replace")
    except OSError:
        return ""


def process_record():
    """This process's record: {"libraries": [LIBRARY...], "modules": {name: file}}."""
    return {"libraries": loaded_libraries(read_maps()), "modules": imported_modules(sys.modules)}
