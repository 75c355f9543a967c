"""Why a smoke run failed, and what to do about it: every known failure signature maps to a cause and a remedy.

Pure: `diagnose` reads what the child left behind (its result line, its log, how it ended) and a Context made from
the gathered facts and the policy; `preflight` reads the facts alone, for the causes known before any compile.
Nothing here starts a process or reads a file, so the tests feed it real outputs captured on a GPU machine.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, replace
from typing import Callable, Optional

from ..judge.cuda import driver_remedy
from ..judge.cutlass import fetch_remedy
from ..model import Facts, Failure, Interpreter, Remedy, Status, Step
from ..profile import Policy
from .table import SignatureRow, load_signatures

__all__ = [
    "Cause", "Context", "Evidence", "Signature", "SIGNATURES", "context_from", "diagnose", "explain_match", "preflight",
]

RECIPE_LINK = "https://github.com/NVIDIA/cutlass/tree/cutlass_api/python/cutlass_api"
DSL_LIBS_PREFIX = "nvidia-cutlass-dsl-libs-"
TVM_FFI_FOR_NEW_DSL = "apache-tvm-ffi>=0.1.15"  # the first seen to work with DSL 4.8 (STACK.md section 6)


@dataclass(frozen=True)
class Cause:
    """One explained outcome: a stable id, a sentence for people, the evidence line, and what to do."""

    id: str
    text: str
    remedy: Optional[Remedy] = None
    evidence: str = ""  # the line of output that shows it
    status: Status = Status.FAIL


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


@dataclass(frozen=True)
class Signature:
    """A failure as it shows in output (a row of the shared table), and how to explain a match of it."""

    row: SignatureRow
    explain: Callable[[str, Context], tuple[str, Optional[Remedy]]]  # (the match's first group, or the match)

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def checks(self) -> tuple[str, ...]:
        return self.row.checks

    def search(self, text: str) -> Optional["re.Match[str]"]:
        return self.row.search(text)


# --------------------------------------------------------------------------------------------------------------
# Remedies, built from the policy so that a later profile changes them without code


def _pip(ctx: Context, *args: str) -> tuple[str, ...]:
    return (ctx.python, "-m", "pip", *args)


def _dsl_remedy(ctx: Context, text: str) -> Remedy:
    requirement = ctx.policy.cutedsl.requirement
    return Remedy(
        text=text,
        commands=(_pip(ctx, "install", requirement),),
        steps=(Step("pip-install", (requirement,), why="the policy's CuTeDSL", reinstall=True),),
        link=ctx.policy.link or RECIPE_LINK,
    )


def _cutlass_api_remedy(ctx: Context, text: str) -> Remedy:
    remedy = fetch_remedy(ctx.policy.cutlass, ctx.python, f"{ctx.library} has no wheel", text)
    return replace(remedy, link=ctx.policy.link or RECIPE_LINK)


# --------------------------------------------------------------------------------------------------------------
# The explanations, one per signature


def _dsl_too_new(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    found = f"nvidia-cutlass-dsl {ctx.cutedsl_version}" if ctx.cutedsl_version else "the installed nvidia-cutlass-dsl"
    return (
        f"{found} is too new for cutlass_api: DSL 4.4.0 removed cute.arch.ProxyKind, which the cutlass_api branch "
        f"still calls (pytorch/pytorch#188477). The policy wants {ctx.policy.cutedsl.requirement}.",
        _dsl_remedy(ctx, f"Install the DSL the policy names ({ctx.policy.cutedsl.requirement})."),
    )


def _tvm_ffi_too_old(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    found = f"nvidia-cutlass-dsl {ctx.cutedsl_version}" if ctx.cutedsl_version else "the installed nvidia-cutlass-dsl"
    requirement = TVM_FFI_FOR_NEW_DSL
    return (
        f"{found} calls apache-tvm-ffi with `{said}`, which apache-tvm-ffi 0.1.7 (cutlass_api's declared pin) does "
        f"not know: DSL >= 4.8 needs a newer tvm-ffi. Seen on an H200: with {requirement} the same stack compiles "
        f"and runs. Or go back to the policy's DSL ({ctx.policy.cutedsl.requirement}), which works with 0.1.7.",
        Remedy(
            text=f"Install {requirement} (against cutlass_api's declared ==0.1.7 pin), or the policy's DSL.",
            commands=(_pip(ctx, "install", requirement), _pip(ctx, "install", ctx.policy.cutedsl.requirement)),
            steps=(Step("pip-install", (requirement,), why="DSL >= 4.8 needs tvm-ffi >= 0.1.15"),),
            link=ctx.policy.link or RECIPE_LINK,
        ),
    )


def _dsl_libs_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    major = (ctx.torch_cuda or "13").split(".")[0]
    flavor = f"cu{major}" if major in ("12", "13") else "cu13"
    version = f"=={ctx.cutedsl_version}" if ctx.cutedsl_version else ""
    requirement = f"nvidia-cutlass-dsl[{flavor}]{version}"
    which = (f"torch here is a CUDA {ctx.torch_cuda} build, so the {flavor} flavour is the one" if ctx.torch_cuda
             else "a CUDA 13 torch (cu130) wants the cu13 flavour, a CUDA 12 torch the cu12 one")
    return (
        "nvidia-cutlass-dsl is installed without its CUDA libraries: DSL >= 4.4 ships its compiler in "
        f"nvidia-cutlass-dsl-libs-cu12 / -libs-cu13, and neither is there ({said[:200]}); {which}.",
        Remedy(
            text=f"Install {requirement} (the extra brings nvidia-cutlass-dsl-libs-{flavor}).",
            commands=(_pip(ctx, "install", requirement),),
            steps=(Step("pip-install", (requirement,), why=f"the DSL's {flavor} libraries"),),
        ),
    )


def _cutlass_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    module = said
    if ctx.split_packages:
        names = ", ".join(ctx.split_packages)
        requirement = ctx.policy.cutedsl.requirement
        return (
            f"`import {module}` fails: split packages of a newer DSL ({names}) are left behind and break the "
            f"{ctx.cutedsl_version or 'installed'} nvidia-cutlass-dsl's `cutlass` module.",
            Remedy(
                text="Remove the split packages, then reinstall the policy's DSL.",
                commands=(_pip(ctx, "uninstall", "-y", *ctx.split_packages), _pip(ctx, "install", "--force-reinstall", requirement)),
                steps=(
                    Step("pip-uninstall", ctx.split_packages, why="stale split packages of DSL 4.4+"),
                    Step("pip-install", (requirement,), reinstall=True),
                ),
            ),
        )
    if ctx.cutedsl_version is not None and not _in_site_dir(ctx.cutedsl_location, ctx.site_dirs):
        return (
            f"`import {module}` fails although nvidia-cutlass-dsl {ctx.cutedsl_version} is installed, at "
            f"{ctx.cutedsl_location}: that is not a site directory, so Python never reads the wheel's .pth file "
            "that puts `cutlass` on the path (a `pip install --target` plus PYTHONPATH install).",
            _dsl_remedy(ctx, "Install the DSL into the interpreter's own site-packages (no --target), and drop the "
                        "--target directory from PYTHONPATH."),
        )
    if not ctx.known:
        return (
            f"`import {module}` fails: nvidia-cutlass-dsl is not installed, or installed with `pip install --target` "
            "(its .pth file, which puts `cutlass` on the path, is read only in site directories), or broken by "
            "split packages (nvidia-cutlass-dsl-libs-*) of another DSL version. `--python PY` tells which.",
            _dsl_remedy(ctx, "Install the DSL the policy names into the interpreter's own site-packages."),
        )
    if ctx.cutedsl_version is not None:
        return (
            f"`import {module}` fails although nvidia-cutlass-dsl {ctx.cutedsl_version} is installed: its files or "
            "its .pth file are damaged or shadowed.",
            _dsl_remedy(ctx, "Reinstall the DSL the policy names."),
        )
    return (
        f"`import {module}` fails: nvidia-cutlass-dsl (CuTeDSL, the `cutlass` module) is not installed.",
        _dsl_remedy(ctx, "Install the DSL the policy names."),
    )


def _cutlass_api_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    said = f"{ctx.library} is not importable in the target interpreter, so Inductor's NVGEMM backend offers no kernels."
    source = ctx.policy.cutlass
    if source is not None and source.module == ctx.library:
        return said, _cutlass_api_remedy(ctx, f"Install {source.distribution} from the CUTLASS repository (branch "
                                         f"{source.branch}); `envcheck fix` does it.")
    rule = next((r for r in ctx.policy.packages if r.module == ctx.library), None)
    if rule is None:
        return said, None
    return said, Remedy(
        text=f"Install {rule.requirement}; `envcheck fix` does it.",
        commands=(("envcheck", "fix", "--python", ctx.python), _pip(ctx, "install", rule.requirement)),
        steps=(Step("pip-install", (rule.requirement,), why=rule.why),),
        link=ctx.policy.link or RECIPE_LINK,
    )


def library_cause_id(library: str) -> str:
    """The stable cause id of a kernel library that is not importable: cutlass_api -> cutlass-api-missing."""
    return re.sub(r"[^a-z0-9]+", "-", library.lower()).strip("-") + "-missing"


def _torch_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = str(ctx.policy.torch_requirement)
    index = ("--index-url", ctx.policy.torch_index_url) if ctx.policy.torch_index_url else ()
    return (
        f"torch is not importable in {ctx.python}: the smoke run needs it there.",
        Remedy(
            text=f"Install {requirement} (a CUDA {ctx.policy.torch_cuda} build).",
            commands=(_pip(ctx, "install", *index, requirement),),
            steps=(Step("pip-install", (requirement,), index_url=ctx.policy.torch_index_url),),
        ),
    )


def _no_cuda(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    if "not compiled with CUDA" in said or "CUDA build None" in said:
        return _cpu_torch(ctx)
    listed = f" although NVML lists {ctx.gpu or 'a GPU'}" if ctx.known else ""
    return (
        f"torch sees no CUDA device{listed}: CUDA_VISIBLE_DEVICES hides it, the "
        "device nodes are not in this container, or the driver cannot start CUDA.",
        Remedy(text="Check CUDA_VISIBLE_DEVICES and `nvidia-smi`; in a container, run it with the GPU (--gpus all).",
               commands=(("nvidia-smi",),)),
    )


def _cpu_torch(ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = str(ctx.policy.torch_requirement)
    index = ("--index-url", ctx.policy.torch_index_url) if ctx.policy.torch_index_url else ()
    return (
        "torch is a CPU-only build: it cannot run a CUDA GEMM.",
        Remedy(
            text=f"Replace it with a CUDA {ctx.policy.torch_cuda} build of {requirement}.",
            commands=(_pip(ctx, "install", "--force-reinstall", *index, requirement),),
            steps=(Step("pip-install", (requirement,), index_url=ctx.policy.torch_index_url, reinstall=True),),
        ),
    )


def _driver(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    if "804" in said or "COMPAT_NOT_SUPPORTED" in said or "forward compatibility" in said:
        text = (f"CUDA forward compatibility is not supported on {ctx.gpu or 'this GPU'} (error 804): the "
                "cuda-compat package works only on datacenter GPUs, so the driver itself is too old.")
    else:
        text = f"The NVIDIA driver is too old for the CUDA this stack uses ({said})."
    return text, driver_remedy(ctx.policy, (ctx.gpu,) if ctx.gpu else ())


def _out_of_memory(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"The GPU ran out of memory during a tiny GEMM: other processes hold {ctx.gpu or 'the GPU'}'s memory.",
        Remedy(text="Free the GPU (see `nvidia-smi` for what holds it) and run again.", commands=(("nvidia-smi",),)),
    )


def _no_valid_choices(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    backends = [b.strip().upper() for b in ctx.backends.split(",") if b.strip()]
    cc = ctx.capability
    cc_text = f"{cc[0]}.{cc[1]}" if cc else "unknown"
    if not ctx.cutlass_api_found and "NVGEMM" in backends:
        return _cutlass_api_missing(said, ctx)
    if "CUTEDSL" in backends and "NVGEMM" not in backends and (cc is None or cc[0] != 10):
        return (
            f"Inductor found no kernel: the CUTEDSL backend is a BF16 grouped-mm template for compute capability "
            f"10.x only, and this GPU is {cc_text}.",
            Remedy(text="Use the NVGEMM backend on this GPU (max_autotune_gemm_backends=\"NVGEMM\")."),
        )
    if cc is not None and cc < ctx.policy.gpu_below.capability:
        return (
            f"Inductor found no kernel: {ctx.library} offers none for compute capability {cc_text} (it needs "
            f"{ctx.policy.gpu_below.capability[0]}.{ctx.policy.gpu_below.capability[1]} or newer).",
            Remedy(text="Run on a GPU of compute capability 8.0 or newer."),
        )
    if not ctx.known:
        return (
            "Inductor found no CuteDSL kernel: cutlass_api is not importable, the GPU's compute capability has no "
            "kernels, the dtype or layout is not supported, or the CUTEDSL backend (Blackwell, CC 10.x only) was "
            "asked for on another GPU. `--python PY` on the machine that ran it tells which.",
            _dsl_remedy(ctx, "Check the stack with `envcheck doctor`; an earlier error in the log names the candidate "
                        "that failed."),
        )
    if ctx.dtype not in ("bfloat16", "float16"):
        return (
            f"Inductor found no kernel: {ctx.library} has no {ctx.dtype} GEMM for compute capability {cc_text}.",
            Remedy(text="Use bfloat16 or float16 inputs."),
        )
    return (
        f"Inductor found no CuteDSL kernel for this {ctx.dtype} GEMM on compute capability {cc_text}, although "
        f"{ctx.library} is importable: every candidate failed to compile or was rejected. The log shows each "
        "candidate's error.",
        _dsl_remedy(ctx, "Check that nvidia-cutlass-dsl and cutlass_api are the versions the policy names "
                    "(`envcheck doctor`), then read the log."),
    )


def _fell_back(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "The GEMM did not run through the CuteDSL backend: Inductor's code computes it some other way "
        f"({said.split(':', 1)[-1].strip() or 'not nv_universal_gemm'}).",
        Remedy(text="Unset TORCHINDUCTOR_* variables that change the GEMM backends, and run `envcheck doctor`."),
    )


def _wrong_result(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "The CuteDSL kernel ran but its result does not match the fp32 reference: a miscompiled or mismatched "
        "kernel (DSL and cutlass_api versions), or faulty hardware.",
        _dsl_remedy(ctx, "Install the versions the policy names, then run again with --fresh (a stale cache)."),
    )


EXPLANATIONS: dict[str, Callable[[str, Context], tuple[str, Optional[Remedy]]]] = {
    "dsl-too-new": _dsl_too_new,
    "tvm-ffi-too-old": _tvm_ffi_too_old,
    "dsl-libs-missing": _dsl_libs_missing,
    "torch-missing": _torch_missing,
    "cutlass-api-missing": _cutlass_api_missing,
    "cutlass-not-importable": _cutlass_missing,
    "cuda-driver": _driver,
    "cuda-out-of-memory": _out_of_memory,
    "no-cuda": _no_cuda,
    "no-valid-choices": _no_valid_choices,
    "fell-back": _fell_back,
    "wrong-result": _wrong_result,
}

# The table's order is priority (envcheck/smoke/signatures.toml); each row gets its explanation here by id.
SIGNATURES: tuple[Signature, ...] = tuple(Signature(row, EXPLANATIONS[row.id]) for row in load_signatures())


def explain_match(signature: Signature, found: "re.Match[str]", text: str, ctx: Context) -> Cause:
    """The Cause one signature's match stands for, its evidence the line it was found on."""
    said, remedy = signature.explain(found.group(1) if found.re.groups else found.group(0), ctx)
    return Cause(signature.id, said, remedy, evidence=_line_of(text, found))


def diagnose(evidence: Evidence, ctx: Context) -> Cause:
    """The cause of a failed smoke run: the first signature, in the table's order, found in the error, its
    traceback or the whole log. Specific signatures come first, so a ProxyKind error printed while autotuning wins
    over the NoValidChoicesError it leads to."""
    error = evidence.error
    if evidence.timed_out:
        return _timeout(evidence, ctx)
    if evidence.returncode is not None and evidence.returncode < 0 and evidence.result is None:
        return _killed(-evidence.returncode, evidence, ctx)
    head = f"{error.get('type', '')}: {error.get('message', '')}" if error else ""
    for signature in SIGNATURES:
        for text in (head, error.get("traceback", ""), evidence.log):
            found = signature.search(text or "")
            if found:
                return explain_match(signature, found, text, ctx)
    if evidence.result is None:
        tail = _last_lines(evidence.log, 1)
        return Cause(
            "no-result",
            f"The smoke child exited with status {evidence.returncode} without a result"
            f"{' during ' + evidence.last_phase if evidence.last_phase else ''}"
            f"{': ' + tail if tail else ''}.",
            Remedy(text="Read the log; run the same interpreter by hand to see whether it starts at all."),
            evidence=tail,
        )
    said = head or "the smoke run failed without an error"
    return Cause(
        "unexplained",
        f"The smoke run failed with an error envcheck does not know: {said[:300]}",
        Remedy(text="Read the log; if this is a new failure of the stack, report it with the log attached."),
        evidence=said[:300],
    )


def _timeout(evidence: Evidence, ctx: Context) -> Cause:
    phase = evidence.last_phase or "start-up"
    hint = {
        "import-torch": "importing torch hung (a network file system, or a broken CUDA library)",
        "cuda": "starting CUDA hung (the driver, or a GPU in a bad state)",
        "compile": "the compile did not finish (a cold compile takes 25-35 s on an H200, a warm one 2-3 s)",
    }.get(phase, f"it was in phase {phase}")
    return Cause(
        "timeout",
        f"The smoke run did not finish within {evidence.timeout_s:g} s: {hint}. Its process group was killed.",
        Remedy(
            text="Run again with a longer --timeout; if it hangs again, read the log to see where.",
            commands=(("envcheck", "smoke", "--python", ctx.python, "--timeout", str(int(max(evidence.timeout_s, 60) * 2))),),
        ),
        evidence=f"last phase: {phase}",
    )


def _killed(number: int, evidence: Evidence, ctx: Context) -> Cause:
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    where = f" during {evidence.last_phase}" if evidence.last_phase else ""
    if number == signal.SIGKILL:
        why = "killed from outside: the kernel's out-of-memory killer, or a job limit"
    elif number in (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGABRT):
        why = "a crash in native code (the CUDA driver, the DSL's compiler, or a mismatched extension module)"
    else:
        why = "stopped by a signal"
    return Cause(
        "killed-by-signal",
        f"The smoke child died from {name}{where}: {why}.",
        Remedy(
            text="Read the log's last lines; run again with --fresh in case a cache is corrupt, and check that "
            "torch, nvidia-cutlass-dsl and cutlass_api are the versions the policy names (`envcheck doctor`).",
            commands=(("envcheck", "smoke", "--python", ctx.python, "--fresh"),),
        ),
        evidence=_last_lines(evidence.log, 1),
    )


def _line_of(text: str, found: "re.Match[str]") -> str:
    start = text.rfind("\n", 0, found.start()) + 1
    end = text.find("\n", found.end())
    return text[start : end if end >= 0 else len(text)].strip()[:300]


def _last_lines(text: str, count: int) -> str:
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return " | ".join(lines[-count:])[:300]


def _in_site_dir(location: Optional[str], site_dirs: tuple[str, ...]) -> bool:
    if not location:
        return True  # unknown: do not claim the .pth trap
    clean = location.rstrip("/")
    return any(clean == d.rstrip("/") for d in site_dirs)


# --------------------------------------------------------------------------------------------------------------
# From the facts


def context_from(facts: Facts, policy: Policy, python: str, backends: str = "", dtype: str = "bfloat16") -> Context:
    interpreter = facts.interpreter if isinstance(facts.interpreter, Interpreter) else None
    gpus = getattr(facts.driver, "gpus", ()) or ()
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


def preflight(facts: Facts, policy: Policy, ctx: Context) -> Optional[Cause]:
    """A cause known from the facts alone: a skip (no GPU) or a failure no compile could fix. None: go ahead."""
    driver = facts.driver
    if isinstance(driver, Failure):
        return Cause("no-gpu", f"No GPU to run on: {driver.message}.", status=Status.SKIP)
    if not driver.gpus:
        return Cause("no-gpu", "No GPU to run on: the NVIDIA driver reports no devices.", status=Status.SKIP)
    interpreter = facts.interpreter
    if isinstance(interpreter, Failure):
        return Cause(
            "interpreter",
            f"The target interpreter could not be examined: {interpreter.message}.",
            Remedy(text="Pass a working interpreter with --python PATH."),
        )
    if interpreter.torch is None:
        said, remedy = _torch_missing("torch", ctx)
        return Cause("torch-missing", said, remedy)
    if interpreter.torch.cuda is None:
        said, remedy = _cpu_torch(ctx)
        return Cause("torch-cpu-build", said, remedy, evidence=f"torch {interpreter.torch.version}, cuda = None")
    if ctx.capability is not None and ctx.capability < policy.gpu_below.capability:
        floor = policy.gpu_below.capability
        return Cause(
            "gpu-unsupported",
            f"{ctx.gpu} is below compute capability {floor[0]}.{floor[1]}: {policy.gpu_below.kernels}.",
            Remedy(text=f"Run on a GPU of compute capability {floor[0]}.{floor[1]} or newer."),
        )
    if not ctx.cutlass_found:
        said, remedy = _cutlass_missing(policy.cutedsl_module, ctx)
        return Cause("cutlass-not-importable", said, remedy, evidence=f"find_spec({policy.cutedsl_module!r}) is None")
    if not ctx.cutlass_api_found:
        said, remedy = _cutlass_api_missing(ctx.library, ctx)
        return Cause(library_cause_id(ctx.library), said, remedy, evidence=f"find_spec({ctx.library!r}) is None")
    return None
