"""What a smoke run proved (SmokeResult), the record of what its child loaded and of the environment it ran in, and
how doctor --smoke holds the checks against it (Reconciliation). Imported where first named: a doctor run without
--smoke never creates these classes (envcheck.model names them lazily; its start-up is a measured goal)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .candidates import GemmCandidates, lost_text
from .findings import Remedy, Status
from .plain import plain

__all__ = ["EnvironmentRecord", "CompileWay", "REMEDY", "YOURS", "CLEARED", "GemmProof", "LoadedLibrary", "ProcessRecord", "SmokeResult",
           "Contradiction", "Reconciliation"]


@dataclass(frozen=True)
class EnvironmentRecord:
    """What a child run (smoke's, bench's) made of the caller's environment (envcheck/runner.py ENVIRONMENT says why
    each variable is cleared or kept): (name, value) pairs, values redacted."""

    cleared: tuple[tuple[str, str], ...] = ()  # the caller's, not passed on (or replaced by envcheck's own value)
    kept: tuple[tuple[str, str], ...] = ()  # the caller's, passed on as they are
    assigned: tuple[tuple[str, str], ...] = ()  # what envcheck set for the run: its caches and settings
    # of `kept`, the caller's settings that change what the run compiles (Inductor's NVGEMM settings: how many
    # choices a GEMM gets), named in the result's text
    settings: tuple[tuple[str, str], ...] = ()

    @property
    def settings_said(self) -> str:
        """The settings passed on, as the result's text names them ("" : none)."""
        if not self.settings:
            return ""
        return (", ".join(f"{name}={value}" for name, value in self.settings)
                + ", passed on from your environment: the run compiled as your process does")

    def to_dict(self) -> dict:
        return {"cleared": dict(self.cleared), "kept": dict(self.kept), "set": dict(self.assigned),
                "settings": dict(self.settings)}


REMEDY, YOURS, CLEARED = "remedy", "yours", "cleared"  # the ways a child compiles (CompileWay.way)


@dataclass(frozen=True)
class CompileWay:
    """Which way a child run (smoke's, bench's) compiled: with the caller's compile target, this GPU's own (REMEDY: the
    remedy, as the caller's process has it), as the caller's process does without one (YOURS), or without the
    caller's value, which names another target or one of a GPU not known (CLEARED: not as the caller's process)."""

    variable: str  # "CUTE_DSL_ARCH"
    way: str  # REMEDY, YOURS or CLEARED
    value: Optional[str] = None  # what the child compiled with; None: not set
    target: Optional[str] = None  # this GPU's own target; None: not known (no GPU seen, or the profile names none)
    yours: Optional[str] = None  # the caller's value (redacted); None: not set

    @property
    def said(self) -> str:
        if self.way == REMEDY:
            return f"with the remedy: {self.variable}={self.value}, this GPU's own target, passed on from your environment"
        if self.way == YOURS:
            own = f" (this GPU's target: {self.target})" if self.target else ""
            return f"as your process compiles: {self.variable} is not set in your environment{own}"
        why = f"it is not this GPU's target ({self.target})" if self.target else "this GPU's target is not known"
        return (f"without your {self.variable}={self.yours}: {why}, so envcheck cleared it; your own process compiles "
                "for it")

    def to_dict(self) -> dict:
        return {"variable": self.variable, "way": self.way, "value": self.value, "target": self.target,
                "yours": self.yours, "said": self.said}


@dataclass(frozen=True)
class LoadedLibrary:
    """One shared library mapped into the smoke child, from /proc/self/maps."""

    kind: str  # libcuda, cudart, cublas, cublasLt, nvrtc, nvrtc-builtins, nvjitlink, cudnn, nccl, dsl, tvm-ffi
    path: str
    version: Optional[str] = None  # from the file name: "580.159.04", "13"
    cuda_major: Optional[int] = None  # a CUDA library's major, or the CUDA a DSL library was built for


@dataclass(frozen=True)
class ProcessRecord:
    """What the smoke child really loaded: its CUDA libraries and the files the stack's modules came from
    (judged by smoke/forensics.py)."""

    libraries: tuple[LoadedLibrary, ...] = ()
    modules: tuple[tuple[str, Optional[str]], ...] = ()  # (module, file it was imported from)

    def of(self, kind: str) -> tuple[LoadedLibrary, ...]:
        return tuple(library for library in self.libraries if library.kind == kind)

    def to_dict(self) -> dict:
        return {
            "libraries": [
                {"kind": l.kind, "path": l.path, "version": l.version, "cuda_major": l.cuda_major} for l in self.libraries
            ],
            "modules": dict(self.modules),
        }


@dataclass(frozen=True)
class GemmProof:
    """One GEMM a smoke run proved: the layout of B it was built in, and what ran it."""

    layout: str  # "linear" (nn.Linear's weight as stored, x @ W.T) or "row-major" (inside/gemm.py LAYOUTS)
    kernel: Optional[str] = None
    call: Optional[str] = None
    compile_s: Optional[float] = None
    run_s: Optional[float] = None
    max_error: Optional[float] = None

    def to_dict(self) -> dict:
        return {"layout": self.layout, "kernel": self.kernel, "call": self.call, "compile_s": self.compile_s,
                "run_s": self.run_s, "max_error": self.max_error}


@dataclass(frozen=True)
class SmokeResult:
    """What one smoke run proved, or why it could not."""

    status: Status
    summary: str  # one line for people
    kernel: Optional[str] = None  # "cutedsl.Sm80TensorOpGemmKernel_..."
    call: Optional[str] = None  # "nv_universal_gemm_fused_mm_<hash>"
    gpu: Optional[str] = None  # "NVIDIA H200 (9.0)"
    compile_s: Optional[float] = None  # first call of the compiled GEMM (compile, autotune, kernel JIT, run)
    run_s: Optional[float] = None  # one call afterwards (median, CUDA events)
    elapsed_s: Optional[float] = None  # the whole child, interpreter start-up included
    max_error: Optional[float] = None
    tolerance: Optional[str] = None
    cause: Optional[str] = None  # a sentence: why it failed or was skipped
    cause_id: Optional[str] = None  # stable: "cutlass-api-missing", "timeout", ...
    remedy: Optional[Remedy] = None
    evidence: str = ""  # the output line that shows the cause
    log: Optional[str] = None
    backends: str = ""
    shape: str = ""
    warm: Optional[bool] = None  # Inductor's FX graph cache answered (a warm run)
    kernel_lookup: Optional[str] = None  # "inductor" (full cutlass_api enumeration) or "seeded" (see child.py)
    library: Optional[str] = None  # --library: the kernel library called directly (no Inductor), e.g. "cutlass.operators"
    tried: tuple[tuple[str, str], ...] = ()  # --library: (kernel, error) of the candidates that failed first
    cache_dir: Optional[str] = None
    versions: tuple[tuple[str, str], ...] = ()
    timings: tuple[tuple[str, float], ...] = field(default=(), compare=False)  # child phases, seconds from start
    process: Optional[ProcessRecord] = None  # what the child really loaded (judged by envcheck/smoke/forensics.py)
    environment: Optional[EnvironmentRecord] = None  # the variables cleared, kept and set for the child
    layout: Optional[str] = None  # the layout of B of the last GEMM started (a failure's: the one that failed)
    gemms: tuple[GemmProof, ...] = ()  # one per layout proved, in order (kernel, call... are the first one's)
    # Inductor's NVGEMM candidates of each GEMM it autotuned in this run, read from the child's log (none: nothing was
    # autotuned here, e.g. a warm run whose caches answered)
    candidates: tuple[GemmCandidates, ...] = ()
    compile_target: Optional[CompileWay] = None  # which way the child compiled (CUTE_DSL_ARCH)

    @property
    def exit_code(self) -> int:
        """0 when the GEMM ran and was proved; a skip proved nothing, so it is 1 like a failure."""
        return 1 if self.status.is_problem or self.status is Status.SKIP else 0

    def to_dict(self) -> dict:
        return {
            "status": self.status.value,
            "summary": self.summary,
            "kernel": self.kernel,
            "call": self.call,
            "gpu": self.gpu,
            "backends": self.backends,
            "shape": self.shape,
            "timings": {"compile_s": self.compile_s, "run_s": self.run_s, "elapsed_s": self.elapsed_s,
                        "phases": [list(p) for p in self.timings]},
            "numerics": {"max_error": self.max_error, "tolerance": self.tolerance},
            "cause": None if self.cause_id is None else {"id": self.cause_id, "text": self.cause, "evidence": self.evidence},
            "remedy": plain(self.remedy),
            "cache": {"dir": self.cache_dir, "warm": self.warm, "kernel_lookup": self.kernel_lookup},
            "versions": dict(self.versions),
            "process": self.process.to_dict() if self.process is not None else None,
            "environment": self.environment.to_dict() if self.environment is not None else None,
            "compile_target": self.compile_target.to_dict() if self.compile_target is not None else None,
            "library": None if self.library is None else {
                "module": self.library, "tried": [{"kernel": k, "error": e} for k, e in self.tried]},
            "candidates": {"gemms": [g.to_dict() for g in self.candidates], "lost": lost_text(self.candidates)},
            "log": self.log,
            "layout": self.layout,
            "gemms": [g.to_dict() for g in self.gemms],
        }


@dataclass(frozen=True)
class Contradiction:
    """A check's verdict that the smoke run contradicts (doctor --smoke, judged by smoke/reconcile.py)."""

    check: str  # the check's id
    status: Status  # its verdict
    basis: str  # of a failing verdict, Finding.basis ("runtime" where unknown); "" for a pass or a warning
    outcome: str  # "overruled": a recipe deviation the passing run outranks; "disproved": a runtime failure the
    # passing run shows wrong; "missed": a pass or a warning where the smoke failed on what the check judges


@dataclass(frozen=True)
class Reconciliation:
    """The checks held against the smoke run: whether they agree, and each verdict the run contradicts."""

    status: Status  # of the smoke.verdicts finding: pass (they agree), warn, error (a runtime verdict disproved), skip
    said: str  # the finding's sentence
    smoke: Status  # the smoke's own status
    kernel: Optional[str] = None  # the kernel that ran, where it ran
    cause_id: Optional[str] = None  # the smoke's cause, where it failed
    contradictions: tuple[Contradiction, ...] = ()

    def of(self, outcome: str) -> tuple[Contradiction, ...]:
        return tuple(c for c in self.contradictions if c.outcome == outcome)
