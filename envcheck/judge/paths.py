"""cuda.paths: the CUDA folders on PATH and LD_LIBRARY_PATH, judged without a GPU: several toolkits on PATH, CUDA
libraries of several releases on LD_LIBRARY_PATH, and a libcuda.so.1 there that the stack's driver calls would load
instead of the driver's own."""

from __future__ import annotations

import os

from ..model import CudaFolder, Finding, Remedy, Status
from ..words import counted
from ._common import Context, worst

__all__ = ["cuda_paths"]

TITLE = "CUDA on PATH and LD_LIBRARY_PATH"
WANTED = ("one CUDA toolkit on PATH; on LD_LIBRARY_PATH CUDA libraries of one release and no libcuda.so.1 but the "
          "driver's")
WHY = ("nvcc, and every build that runs it (torch's C++ extensions, the CUTLASS C++ backend), takes the first toolkit on "
       "PATH. The dynamic loader searches LD_LIBRARY_PATH before a library's RUNPATH: cuda-bindings, through which the "
       "DSL and cutlass.operators reach the driver, dlopens libcuda.so.1 by name, and cusparse and cudnn load "
       "nvJitLink and nvrtc by name "
       "(https://github.com/pytorch/pytorch/issues/138460, https://github.com/pytorch/pytorch/issues/145580). "
       "torch itself loads its own wheels' CUDA "
       "libraries (an RPATH to them, torch/lib/libtorch_global_deps.so, and its preloads, torch/__init__.py "
       "_load_global_deps), and the DSL carries its compiler statically (_cutlass_ir.cuN.so: RPATH $ORIGIN only).")


def _named(folder: CudaFolder) -> str:
    return f"{folder.path} (CUDA {folder.version or 'of unknown release'})"


def _driver_library(folder: CudaFolder) -> tuple[Status, str]:
    parts = os.path.normpath(folder.path).split(os.sep)
    if "stubs" in parts:
        return Status.FAIL, (f"LD_LIBRARY_PATH holds CUDA's stub libcuda.so.1 ({folder.path}): every driver call "
                             "through it fails (CUDA_ERROR_STUB_LIBRARY), the DSL's and cutlass.operators' included")
    if "compat" in parts:
        return Status.PASS, (f"forward compatibility: libcuda.so.1 from {folder.path} is loaded before the driver's "
                             "(datacenter GPUs only; see cuda.driver)")
    return Status.WARN, (f"libcuda.so.1 in {folder.path}, on LD_LIBRARY_PATH, is loaded before the driver's own by every "
                         "driver call of the DSL and cutlass.operators (cuda-bindings dlopens it by name)")


def cuda_paths(ctx: Context) -> Finding:
    paths = ctx.facts.paths
    if paths is None:
        return Finding("cuda.paths", TITLE, Status.SKIP, "not read (a report of an envcheck that did not read them)",
                       WANTED, WHY)
    said: list[tuple[Status, str]] = []
    toolkits = [f for f in paths.on("PATH") if f.nvcc]
    releases = list(dict.fromkeys(f.version or "?" for f in toolkits))
    if len(toolkits) > 1 and len(releases) > 1:
        said.append((Status.WARN, f"PATH holds {len(toolkits)} CUDA toolkits: " + ", then ".join(map(_named, toolkits))
                     + f"; nvcc and every build use the first ({releases[0]})"))
    libraries = paths.on("LD_LIBRARY_PATH")
    for folder in libraries:
        if "libcuda.so.1" in folder.libraries:
            said.append(_driver_library(folder))
    runtime = [f for f in libraries if any(not n.startswith("libcuda.so") for n in f.libraries)]
    mixed = list(dict.fromkeys(f.version or "?" for f in runtime))
    if len(mixed) > 1:
        said.append((Status.WARN, f"LD_LIBRARY_PATH holds CUDA libraries of {len(mixed)} releases: "
                     + ", ".join(map(_named, runtime)) + ": a library loaded by name comes from the first that has "
                     "it, whatever its release"))
    status = worst([s for s, _ in said]) if said else Status.PASS
    listed = tuple(f"{f.variable}[{f.position}]: {_named(f)}" + (": nvcc" if f.nvcc else "")
                   + (f": {', '.join(f.libraries)}" if f.libraries else "") for f in paths.folders)
    torch = ctx.interpreter.torch if ctx.interpreter is not None else None
    if torch is not None and torch.cuda and libraries:
        listed += (f"torch {torch.version} (a CUDA {torch.cuda} build) loads its own wheels' libraries first; a "
                   "folder above matters to what loads a CUDA library by name (the driver, nvJitLink, nvrtc)",)
    if not paths.folders:
        return Finding("cuda.paths", TITLE, Status.PASS, "no CUDA folder on PATH or LD_LIBRARY_PATH", WANTED, WHY)
    found = "; ".join(text for s, text in said if s is not Status.PASS) or (
        f"{counted(len(toolkits), 'CUDA toolkit')} on PATH, {counted(len(libraries), 'CUDA library folder')} on LD_LIBRARY_PATH"
        + "".join(f"; {text}" for s, text in said))
    remedy = None
    if status is not Status.PASS:
        keep = [f.path for f in libraries if "libcuda.so.1" not in f.libraries or "compat" in f.path.split(os.sep)]
        remedy = Remedy(
            "Keep one CUDA toolkit's bin folder on PATH (the one the profile wants, see cuda.toolkit), and take CUDA "
            "library folders that are not the driver's off LD_LIBRARY_PATH: the stack's wheels carry their own. "
            + (f"For example: export LD_LIBRARY_PATH={os.pathsep.join(keep[:1])}" if keep[:1] else
               "For example: unset LD_LIBRARY_PATH"),
        )
    return Finding("cuda.paths", TITLE, status, found, WANTED, WHY, remedy, listed)
