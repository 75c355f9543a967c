"""cuda.paths: the CUDA folders on PATH and LD_LIBRARY_PATH, judged from their names: several toolkits on PATH, CUDA
libraries of several releases on LD_LIBRARY_PATH, and a libcuda.so.1 there that the stack's driver calls would load
instead of the driver's own (one of another release than the running driver's, or CUDA's stub)."""

from __future__ import annotations

import os
from typing import Optional

from ..model import CudaFolder, Failure, Finding, Remedy, Status
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
       "_load_global_deps), and the DSL carries its compiler statically (_cutlass_ir.cuN.so: RPATH $ORIGIN only). "
       "A libcuda.so.1 there that is a file of the running driver's release (libcuda.so.580.159.04 on driver "
       "580.159.04, as NVML reports it) is the driver's own: the container runtime mounts it where NVIDIA's CUDA "
       "images point LD_LIBRARY_PATH (/usr/local/nvidia/lib:/usr/local/nvidia/lib64). One of another release is not: "
       "cuInit refuses a user-mode driver that does not match the kernel module's "
       "(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, cuda/bindings/cydriver.pxd), forward compatibility's cuda-compat "
       "package apart.")


def _named(folder: CudaFolder) -> str:
    return f"{folder.path} (CUDA {folder.version or 'of unknown release'})"


def _release(version: str) -> Optional[tuple[int, ...]]:
    """580.159.04 -> (580, 159, 4); None: not a release of numbers."""
    parts = version.split(".")
    return tuple(map(int, parts)) if all(p.isdigit() for p in parts) else None


def _running_driver(ctx: Context) -> tuple[Optional[str], str]:
    """The running driver's release, the one a libcuda.so.1 is compared with, or why there is none to compare with."""
    if ctx.no_gpu:
        return None, "--no-gpu"
    driver = ctx.facts.driver
    if isinstance(driver, Failure):
        return None, f"no driver read: {driver.message}"
    if _release(driver.version) is None:
        return None, f"the driver's version, {driver.version!r}, is not a release of numbers"
    return driver.version, ""


def _driver_library(folder: CudaFolder, running: Optional[str], unknown: str) -> tuple[Status, str]:
    """One folder's libcuda.so.1 against the running driver: the verdict, and its words with {where} for the folder
    (folders that are judged alike are said together)."""
    parts = os.path.normpath(folder.path).split(os.sep)
    if "stubs" in parts:
        return Status.FAIL, ("LD_LIBRARY_PATH holds CUDA's stub libcuda.so.1 ({where}): every driver call through it "
                             "fails (CUDA_ERROR_STUB_LIBRARY), the DSL's and cutlass.operators' included")
    if "compat" in parts:
        return Status.PASS, ("forward compatibility: libcuda.so.1 from {where} is loaded before the driver's "
                             "(datacenter GPUs only; see cuda.driver)")
    loaded = ("is loaded before the driver's own by every driver call of the DSL and cutlass.operators (cuda-bindings "
              "dlopens it by name)")
    if folder.libcuda is None:  # the loader passes over a name it cannot open (ENOENT) to the next folder
        return Status.PASS, ("libcuda.so.1 in {where} is a link that leads to no file: the loader passes over it, "
                             "and which driver it was for could not be read")
    name, release = os.path.basename(folder.libcuda), folder.libcuda_version
    ours = _release(release) if release else None
    if ours is None:
        return Status.WARN, (f"libcuda.so.1 in {{where}}, on LD_LIBRARY_PATH, names no driver release (its file is "
                             f"{folder.libcuda}), so it could not be told from the driver's own; it {loaded}")
    theirs = _release(running) if running else None
    if theirs is None:
        return Status.PASS, (f"libcuda.so.1 in {{where}} is driver {release}'s ({name}), not compared with the running "
                             f"driver ({unknown})")
    if ours == theirs:
        return Status.PASS, f"libcuda.so.1 in {{where}} is the running driver's own ({name}, driver {running})"
    older = "older" if ours < theirs else "newer"
    return Status.WARN, (f"libcuda.so.1 in {{where}}, on LD_LIBRARY_PATH, is driver {release}'s ({name}), {older} than "
                         f"the running driver {running}, and {loaded}")


def _together(judged: dict[str, tuple[Status, str]]) -> list[tuple[Status, str]]:
    """The folders' verdicts, those with the same words said once: "in A and B"."""
    alike: dict[tuple[Status, str], list[str]] = {}
    for path, verdict in judged.items():
        alike.setdefault(verdict, []).append(path)
    return [(status, words.replace("{where}", " and ".join(filter(None, (", ".join(paths[:-1]), paths[-1])))))
            for (status, words), paths in alike.items()]


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
    running, unknown = _running_driver(ctx)
    drivers = {f.path: _driver_library(f, running, unknown) for f in libraries if "libcuda.so.1" in f.libraries}
    said.extend(_together(drivers))
    runtime = [f for f in libraries if any(not n.startswith("libcuda.so") for n in f.libraries)]
    mixed = list(dict.fromkeys(f.version or "?" for f in runtime))
    if len(mixed) > 1:
        said.append((Status.WARN, f"LD_LIBRARY_PATH holds CUDA libraries of {len(mixed)} releases: "
                     + ", ".join(map(_named, runtime)) + ": a library loaded by name comes from the first that has "
                     "it, whatever its release"))
    status = worst([s for s, _ in said]) if said else Status.PASS
    listed = tuple(f"{f.variable}[{f.position}]: {_named(f)}" + (": nvcc" if f.nvcc else "")
                   + (f": {', '.join(f.libraries)}" if f.libraries else "")
                   + (f": libcuda.so.1 -> {f.libcuda}" if f.libcuda else "") for f in paths.folders)
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
        keep = [f.path for f in libraries if f.path not in drivers or drivers[f.path][0] is Status.PASS]
        remedy = Remedy(
            "Keep one CUDA toolkit's bin folder on PATH (the one the profile wants, see cuda.toolkit), and take CUDA "
            "library folders that are not the driver's off LD_LIBRARY_PATH: the stack's wheels carry their own. "
            + (f"For example: export LD_LIBRARY_PATH={os.pathsep.join(keep[:1])}" if keep[:1] else
               "For example: unset LD_LIBRARY_PATH"),
        )
    return Finding("cuda.paths", TITLE, status, found, WANTED, WHY, remedy, listed)
