"""What the smoke child really loaded, and whether that is one consistent CUDA stack: `smoke.libraries`.

The child records the shared libraries mapped into it (libcuda, the CUDA runtime, cuBLAS, NVRTC, the DSL's own
.so files) and the files the stack's modules were imported from (envcheck/inside/loaded.py, process_record). Here
that record is read back from the result line (untrusted JSON: anything malformed is left out) and judged. Pure.
"""

from __future__ import annotations

import os
from typing import Optional

from ..model import Finding, Interpreter, LoadedLibrary, ProcessRecord, Remedy, Report, SmokeResult, Status
from ..inside.loaded import CUDA_FAMILY  # the child reads the versions of these; one list

__all__ = ["process_from", "judge_process", "libraries_finding", "CHECK_ID"]

CHECK_ID = "smoke.libraries"
TITLE = "What the smoke run really loaded"
LABELS = {"libcuda": "libcuda", "cudart": "CUDA runtime", "cublas": "cuBLAS", "cublasLt": "cuBLASLt", "nvrtc": "NVRTC"}


def process_from(result: Optional[dict]) -> Optional[ProcessRecord]:
    """The child's record from its result line; None when it has none (an older child, a crash before the end)."""
    raw = (result or {}).get("process")
    if not isinstance(raw, dict):
        return None
    libraries = []
    for item in raw.get("libraries") or []:
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str) or not isinstance(item.get("path"), str):
            continue
        version = item.get("version")
        major = item.get("cuda_major")
        libraries.append(LoadedLibrary(
            item["kind"], item["path"], version if isinstance(version, str) else None,
            major if isinstance(major, int) and not isinstance(major, bool) else None,
        ))
    modules = raw.get("modules") if isinstance(raw.get("modules"), dict) else {}
    return ProcessRecord(
        tuple(libraries),
        tuple((str(k), v if isinstance(v, str) else None) for k, v in sorted(modules.items())),
    )


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root.rstrip("/") or path.startswith(root.rstrip("/") + "/") for root in roots if root)


def problems(record: ProcessRecord, torch_cuda: Optional[str], roots: tuple[str, ...]) -> tuple[str, ...]:
    """Every inconsistency of the loaded stack, one sentence each. Pure.

    torch_cuda: torch's CUDA build ("13.0"); roots: the target environment's directories (its site directories,
    and its prefix when it is a virtual environment), as given and with links resolved."""
    found = []
    runtimes = {}
    for library in record.libraries:
        if library.kind in CUDA_FAMILY and library.cuda_major is not None:
            runtimes.setdefault(library.cuda_major, []).append(library)
    if len(runtimes) > 1:
        listed = "; ".join(
            f"CUDA {major}: " + ", ".join(l.path for l in libs) for major, libs in sorted(runtimes.items())
        )
        found.append(f"CUDA libraries of {len(runtimes)} different majors are loaded in one process ({listed}).")
    if roots:
        outside = [l for l in record.libraries if l.kind not in ("libcuda", "dsl", "tvm-ffi") and not _under(l.path, roots)]
        if outside:
            found.append(
                "CUDA libraries were loaded from outside the target environment ("
                + ", ".join(l.path for l in outside)
                + "): LD_LIBRARY_PATH or a system toolkit put them ahead of the ones torch brought."
            )
    major = _major(torch_cuda)
    if major is not None:
        other = [l for l in record.of("dsl") if l.cuda_major is not None and l.cuda_major != major]
        if other:
            flavours = sorted({l.cuda_major for l in other})
            found.append(
                f"The DSL's CUDA {'/'.join(map(str, flavours))} libraries are loaded in a CUDA {major} process ("
                + ", ".join(l.path for l in other)
                + f"): install nvidia-cutlass-dsl[cu{major}] and remove "
                + ", ".join(f"nvidia-cutlass-dsl-libs-cu{f}" for f in flavours)
                + "."
            )
    return tuple(found)


def _major(version: Optional[str]) -> Optional[int]:
    try:
        return int(str(version).split(".")[0]) if version else None
    except ValueError:
        return None


def summary(record: ProcessRecord) -> str:
    """"libcuda 580.159.04, CUDA runtime 13, cuBLAS 13, NVRTC 13, 5 DSL libraries" for the record."""
    parts = []
    for kind, label in LABELS.items():
        versions = sorted({l.version or "?" for l in record.of(kind)})
        if versions:
            parts.append(f"{label} {' and '.join(versions)}")
    dsl = record.of("dsl")
    if dsl:
        parts.append(f"{len(dsl)} DSL librar{'y' if len(dsl) == 1 else 'ies'}")
    return ", ".join(parts) or "no CUDA library"


def judge_process(record: Optional[ProcessRecord], torch_cuda: Optional[str], roots: tuple[str, ...],
                  ran: bool = True) -> Finding:
    """smoke.libraries: pass when the loaded stack is consistent, warn for each mismatch, skip without a record.
    ran: whether the smoke child ran at all (a smoke skipped before it, with no GPU, has nothing to judge)."""
    if not ran:
        return Finding(CHECK_ID, TITLE, Status.SKIP, "the smoke did not run, so nothing it loaded can be judged")
    if record is None or not record.libraries:
        return Finding(CHECK_ID, TITLE, Status.SKIP, "the smoke run recorded no loaded libraries (it ended before its "
                       "report, or this is not Linux)")
    details = tuple(f"{l.kind}: {l.path}" for l in record.libraries) + tuple(
        f"module {name}: {path or '(no file)'}" for name, path in record.modules
    )
    found = problems(record, torch_cuda, roots)
    if not found:
        return Finding(CHECK_ID, TITLE, Status.PASS, summary(record), details=details)
    return Finding(
        CHECK_ID, TITLE, Status.WARN, " ".join(found), wanted="one CUDA major, from the target environment",
        why="A process that mixes CUDA majors, or takes CUDA libraries from outside its environment, runs other code "
        "than the one installed: crashes and wrong results follow from it, not from the versions doctor reads.",
        remedy=Remedy(text="Unset LD_LIBRARY_PATH entries that point at a CUDA toolkit, and install one CUDA major's "
                      "packages (`envcheck doctor` lists them)."),
        details=details,
    )


def libraries_finding(smoke: SmokeResult, report: Report) -> Finding:
    """smoke.libraries: what the smoke child really loaded, judged against the target environment."""
    interpreter = report.facts.interpreter if report.facts is not None else None
    roots: tuple[str, ...] = ()
    torch_cuda = None
    if isinstance(interpreter, Interpreter):
        folders = interpreter.site_dirs + ((interpreter.prefix,) if interpreter.in_venv else ())
        roots = tuple(dict.fromkeys(folders + tuple(os.path.realpath(f) for f in folders)))
        torch_cuda = interpreter.torch.cuda if interpreter.torch else None
    # The child ran where it left a record or its time is known; a smoke skipped before it (no GPU) has neither.
    ran = smoke.process is not None or smoke.elapsed_s is not None
    return judge_process(smoke.process, torch_cuda, roots, ran=ran)
