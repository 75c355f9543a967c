"""What explaining a failure knows of the target (Context, from the gathered facts and the profile), how a child
run ended (Evidence), and the explained outcome (Cause): the values causes/ passes around. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..model import Facts, Interpreter, Remedy, Status
from ..profile import Policy

__all__ = ["Cause", "Context", "Evidence", "OpFailure", "context_from", "context_for_log", "DSL_LIBS_PREFIX"]

DSL_LIBS_PREFIX = "nvidia-cutlass-dsl-libs-"


@dataclass(frozen=True)
class Cause:
    """One explained outcome: a stable id, a sentence for people, the evidence line, and what to do."""

    id: str
    text: str
    remedy: Optional[Remedy] = None
    evidence: str = ""  # the line of output that shows it
    status: Status = Status.FAIL


@dataclass(frozen=True)
class OpFailure:
    """A compile that stopped for want of any GEMM choice for one aten op: the op (`addmm`) and the cause id
    (nvgemm-no-kernel-for-op where NVGEMM has no kernel for it on the target's stack and GPU, else no-valid-choices)."""

    op: str
    cause_id: str


@dataclass(frozen=True)
class Context:
    """What the facts and the policy say about the target, as far as explaining a failure needs."""

    python: str
    policy: Policy
    capability: Optional[tuple[int, int]] = None
    gpu: str = ""
    cutlass_api_found: bool = True  # the kernel library (`library`) is importable
    library: str = "cutlass_api"  # the module of the profile's kernel library ([smoke] library)
    cutlass_found: bool = True
    cutedsl_version: Optional[str] = None
    cutedsl_location: Optional[str] = None
    torch_cuda: Optional[str] = None  # torch's CUDA build, "13.0"; None: a CPU build or not known
    site_dirs: tuple[str, ...] = ()
    split_packages: tuple[str, ...] = ()  # nvidia-cutlass-dsl-libs-* installed
    backends: str = "NVGEMM"
    dtype: str = "bfloat16"
    known: bool = True  # the target's facts were gathered; False (a log read alone): claim nothing about it


@dataclass(frozen=True)
class Evidence:
    """How the child ended: its result line (None if it printed none), its whole log, its exit."""

    result: Optional[dict]
    log: str
    returncode: Optional[int]
    timed_out: bool = False
    timeout_s: float = 0.0
    last_phase: Optional[str] = None

    @property
    def error(self) -> dict:
        return (self.result or {}).get("error") or {}


def context_from(facts: Facts, policy: Policy, python: str, backends: str = "", dtype: str = "bfloat16") -> Context:
    interpreter = facts.interpreter if isinstance(facts.interpreter, Interpreter) else None
    gpus = facts.gpus  # those given with --gpu-capability win over what NVML sees, as in doctor
    first = gpus[0] if gpus else None
    dsl = interpreter.dist(policy.cutedsl.name) if interpreter else None
    library = policy.smoke.library or (policy.cutlass.module if policy.cutlass is not None else "")
    api = interpreter.module(library) if interpreter and library else None
    cutlass = interpreter.module(policy.cutedsl_module) if interpreter else None
    return Context(
        python=python,
        policy=policy,
        capability=first.capability if first else None,
        gpu=f"{first.name} ({first.capability_text})" if first else "",
        cutlass_api_found=bool(api and api.origin) if interpreter and library else True,
        library=library,
        cutlass_found=bool(cutlass and cutlass.origin) if interpreter else True,
        cutedsl_version=dsl.version if dsl else None,
        cutedsl_location=dsl.location if dsl else None,
        torch_cuda=interpreter.torch.cuda if interpreter and interpreter.torch else None,
        site_dirs=interpreter.site_dirs if interpreter else (),
        split_packages=tuple(sorted({d.name for d in interpreter.distributions if d.name.startswith(DSL_LIBS_PREFIX)}))
        if interpreter
        else (),
        backends=backends or ",".join(policy.smoke.backends),
        dtype=dtype,
    )


def context_for_log(policy: Policy, python: str = "python3") -> Context:
    """What explaining a log read alone knows: the profile (its kernel library and backends) and the interpreter the
    remedies run (the one the log's paths name, else python3), nothing of a target."""
    library = policy.smoke.library or (policy.cutlass.module if policy.cutlass is not None else "")
    return Context(python=python, policy=policy, known=False, library=library,
                   backends=",".join(policy.smoke.backends))
