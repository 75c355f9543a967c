"""The known failures: each signature of the shared table (signatures.toml, read by table.py) with the explanation of
what it means for a target, as a sentence and a remedy built from the profile, so that a later profile changes them
without code. Pure: nothing here starts a process or reads a file but the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence

from ..judge._common import fix_command, pip_command, satisfies
from ..judge.cuda import driver_remedy
from ..judge.cutlass import fetch_remedy
from ..model import Remedy, Step
from ..profile import spec_text
from .context import Cause, Context
from .remedies import (RECIPE_LINK, TVM_FFI_FLOOR, TVM_FFI_RAN, below_remedy, check_remedy,
                       dsl_remedy as _dsl_remedy, package_rule)
from .gemmops import GEMM_OP_EXPLANATIONS
from .stack import STACK_EXPLANATIONS
from .upstream import UPSTREAM_EXPLANATIONS
from .table import SignatureRow, load_signatures

__all__ = ["EXPLANATIONS", "SIGNATURES", "Signature", "explain_match", "explain_said", "library_cause_id"]

TVM_FFI_FOR_NEW_DSL = f"apache-tvm-ffi>={TVM_FFI_FLOOR}"


@dataclass(frozen=True)
class Signature:
    """A failure as it shows in output (a row of the shared table), and how to explain a match of it."""

    row: SignatureRow
    # (the match's first group, or the match) -> the sentence and remedy; None: the match is no such failure on this
    # target (an op NVGEMM serves here: the generic row below it explains the log)
    explain: Callable[[str, Context], Optional[tuple[str, Optional[Remedy]]]]

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def checks(self) -> tuple[str, ...]:
        return self.row.checks

    def search(self, text: str, before: Sequence[str] = ()) -> Optional["re.Match[str]"]:
        return self.row.search(text, before)


# --------------------------------------------------------------------------------------------------------------
# Remedies, built from the policy so that a later profile changes them without code


def _cutlass_api_remedy(ctx: Context, text: str) -> Remedy:
    remedy = fetch_remedy(ctx.policy.cutlass, ctx.python, f"{ctx.library} has no wheel", text)
    return replace(remedy, link=ctx.policy.link or RECIPE_LINK)


# --------------------------------------------------------------------------------------------------------------
# The explanations, one per signature


def dsl_too_new(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    rule = ctx.policy.cutedsl
    keeps = rule.runtime_on_version  # the DSLs that still have ProxyKind where it is called (<4.6), if the profile says
    if ctx.cutedsl_version and (satisfies(ctx.cutedsl_version, rule.specifier)
                                or keeps is not None and satisfies(ctx.cutedsl_version, keeps)):
        # doctor's own tests (judge/cutedsl.py): the DSL here is the profile's, or one that still exports ProxyKind
        within = (f"within the profile's {spec_text(rule.specifier)} (doctor's cutedsl.version passes)"
                  if satisfies(ctx.cutedsl_version, rule.specifier) else
                  f"one that still exports it ({spec_text(keeps)}: the SM100 kernels run there)")
        return (
            f"The log's DSL has no cute.arch.ProxyKind (removed in DSL 4.6.0; "
            f"https://github.com/pytorch/pytorch/issues/188477 dated it to 4.4, "
            f"whose wheels still have it), but nvidia-cutlass-dsl {ctx.cutedsl_version} here is {within}: the log "
            "comes from another environment, or another `cutlass` is imported before this DSL's (see "
            "cutedsl.importable).",
            Remedy(text="See which `cutlass` this interpreter imports, and from where (cutedsl.importable).",
                   commands=(("envcheck", "doctor", "--python", ctx.python, "-v"),), link=ctx.policy.link or RECIPE_LINK),
        )
    found = f"nvidia-cutlass-dsl {ctx.cutedsl_version}" if ctx.cutedsl_version else "the installed nvidia-cutlass-dsl"
    return (
        f"{found} is too new for cutlass_api: DSL 4.6.0 removed cute.arch.ProxyKind and SharedSpace, which the "
        "cutlass_api branch's SM100 kernels (compute capability 10.x and 11.0) still pass to fence_proxy "
        f"(https://github.com/pytorch/pytorch/issues/188477; 4.4.x and 4.5.x still export both). "
        f"Profile {ctx.policy.id} takes {rule.requirement}.",
        _dsl_remedy(ctx, f"Install the profile's DSL ({rule.requirement})."),
    )


def tvm_ffi_too_old(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    found = f"nvidia-cutlass-dsl {ctx.cutedsl_version}" if ctx.cutedsl_version else "the installed nvidia-cutlass-dsl"
    requirement = TVM_FFI_FOR_NEW_DSL
    return (
        f"{found} calls apache-tvm-ffi with `{said}`, which apache-tvm-ffi 0.1.9 and older (0.1.7 is cutlass_api's "
        f"declared pin) do not know: a DSL >= 4.6 needs apache-tvm-ffi >= {TVM_FFI_FLOOR}. Seen on an H200: with "
        f"{TVM_FFI_RAN} the same stack compiles and runs. Or go back to the profile's DSL "
        f"({ctx.policy.cutedsl.requirement}) if it is older than 4.6.",
        Remedy(
            text=f"Install {requirement} (against cutlass_api's declared ==0.1.7 pin), or the profile's DSL.",
            commands=(pip_command(ctx.python, "install", requirement), pip_command(ctx.python, "install", ctx.policy.cutedsl.requirement)),
            steps=(Step("pip-install", (requirement,), why=f"DSL >= 4.6 needs tvm-ffi >= {TVM_FFI_FLOOR}"),),
            link=ctx.policy.link or RECIPE_LINK,
        ),
    )


def dsl_libs_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
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
            commands=(pip_command(ctx.python, "install", requirement),),
            steps=(Step("pip-install", (requirement,), why=f"the DSL's {flavor} libraries"),),
        ),
    )


def cutlass_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    module = said
    if ctx.split_packages:
        names = ", ".join(ctx.split_packages)
        requirement = ctx.policy.cutedsl.requirement
        return (
            f"`import {module}` fails: split packages of a newer DSL ({names}) are left behind and break the "
            f"{ctx.cutedsl_version or 'installed'} nvidia-cutlass-dsl's `cutlass` module.",
            Remedy(
                text=f"Remove the split packages, then reinstall the profile's DSL ({requirement}).",
                commands=(pip_command(ctx.python, "uninstall", "-y", *ctx.split_packages), pip_command(ctx.python, "install", "--force-reinstall", requirement)),
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
            _dsl_remedy(ctx, f"Install the profile's DSL ({ctx.policy.cutedsl.requirement}) into the interpreter's own "
                        "site-packages."),
        )
    if ctx.cutedsl_version is not None:
        return (
            f"`import {module}` fails although nvidia-cutlass-dsl {ctx.cutedsl_version} is installed: its files or "
            "its .pth file are damaged or shadowed.",
            _dsl_remedy(ctx, f"Reinstall the profile's DSL ({ctx.policy.cutedsl.requirement})."),
        )
    return (
        f"`import {module}` fails: nvidia-cutlass-dsl (CuTeDSL, the `cutlass` module) is not installed.",
        _dsl_remedy(ctx, f"Install the profile's DSL ({ctx.policy.cutedsl.requirement})."),
    )


def cutlass_api_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    said = f"{ctx.library} is not importable in the target interpreter, so Inductor's NVGEMM backend offers no kernels."
    source = ctx.policy.cutlass
    if source is not None and source.module == ctx.library:
        return said, _cutlass_api_remedy(ctx, f"Install {source.distribution} from the CUTLASS repository (branch "
                                         f"{source.branch}); `envcheck fix` does it.")
    rule = package_rule(ctx, ctx.library)
    if rule is None:
        return said, None
    return said, Remedy(
        text=f"Install {rule.requirement}; `envcheck fix` does it.",
        commands=(fix_command(ctx.python), pip_command(ctx.python, "install", rule.requirement)),
        steps=(Step("pip-install", (rule.requirement,), why=rule.why),),
        link=ctx.policy.link or RECIPE_LINK,
    )


def library_cause_id(library: str) -> str:
    """The stable cause id of a kernel library that is not importable: cutlass_api -> cutlass-api-missing."""
    return re.sub(r"[^a-z0-9]+", "-", library.lower()).strip("-") + "-missing"


def torch_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = str(ctx.policy.torch_requirement)
    index = ("--index-url", ctx.policy.torch_index_url) if ctx.policy.torch_index_url else ()
    return (
        f"torch is not importable in {ctx.python}: the smoke run needs it there.",
        Remedy(
            text=f"Install {requirement} (a CUDA {ctx.policy.torch_cuda} build).",
            commands=(pip_command(ctx.python, "install", *index, requirement),),
            steps=(Step("pip-install", (requirement,), index_url=ctx.policy.torch_index_url),),
        ),
    )


def no_cuda(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    if "not compiled with CUDA" in said or "CUDA build None" in said:
        return cpu_torch(ctx)
    listed = f" although NVML lists {ctx.gpu or 'a GPU'}" if ctx.known else ""
    return (
        f"torch sees no CUDA device{listed}: CUDA_VISIBLE_DEVICES hides it, the "
        "device nodes are not in this container, or the driver cannot start CUDA.",
        Remedy(text="Check CUDA_VISIBLE_DEVICES and `nvidia-smi`; in a container, run it with the GPU (--gpus all).",
               commands=(("nvidia-smi",),)),
    )


def cpu_torch(ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = str(ctx.policy.torch_requirement)
    index = ("--index-url", ctx.policy.torch_index_url) if ctx.policy.torch_index_url else ()
    return (
        "torch is a CPU-only build: it cannot run a CUDA GEMM.",
        Remedy(
            text=f"Replace it with a CUDA {ctx.policy.torch_cuda} build of {requirement}.",
            commands=(pip_command(ctx.python, "install", "--force-reinstall", *index, requirement),),
            steps=(Step("pip-install", (requirement,), index_url=ctx.policy.torch_index_url, reinstall=True),),
        ),
    )


def driver(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    if "804" in said or "COMPAT_NOT_SUPPORTED" in said or "forward compatibility" in said:
        text = (f"CUDA forward compatibility is not supported on {ctx.gpu or 'this GPU'} (error 804): the "
                "cuda-compat package works only on datacenter GPUs, so the driver itself is too old.")
    else:
        text = f"The NVIDIA driver is too old for the CUDA this stack uses ({said})."
    return text, driver_remedy(ctx.policy, (ctx.gpu,) if ctx.gpu else ())


def out_of_memory(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"The GPU ran out of memory during a tiny GEMM: other processes hold {ctx.gpu or 'the GPU'}'s memory.",
        Remedy(text="Free the GPU (see `nvidia-smi` for what holds it) and run again.", commands=(("nvidia-smi",),)),
    )


def no_valid_choices(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    backends = [b.strip().upper() for b in ctx.backends.split(",") if b.strip()]
    cc = ctx.capability
    cc_text = f"{cc[0]}.{cc[1]}" if cc else "unknown"
    if not ctx.cutlass_api_found and "NVGEMM" in backends:
        return cutlass_api_missing(said, ctx)
    if "CUTEDSL" in backends and "NVGEMM" not in backends and (cc is None or cc[0] != 10):
        return (
            f"Inductor found no kernel: the CUTEDSL backend is a BF16 grouped-mm template for compute capability "
            f"10.x only, and this GPU is {cc_text}.",
            Remedy(text="Use the NVGEMM backend on this GPU (max_autotune_gemm_backends=\"NVGEMM\")."),
        )
    floor = ctx.policy.gpu_below.capability
    if cc is not None and cc < floor:
        return (
            f"Inductor found no kernel: {ctx.library} offers none for compute capability {cc_text} (it needs "
            f"{floor[0]}.{floor[1]} or newer).",
            below_remedy(ctx),
        )
    if not ctx.known:
        return (
            f"Inductor found no CuteDSL kernel: {ctx.library} (the kernel library of profile {ctx.policy.id}, torch "
            f"{spec_text(ctx.policy.torch)}) is not importable, so Inductor left NVGEMM out; or the GPU is below "
            f"compute capability {floor[0]}.{floor[1]}, the dtype or layout is not supported, every candidate failed "
            "(an earlier error in the log names it), or the CUTEDSL backend (Blackwell, CC 10.x only) was asked for "
            "on another GPU. `--python PY` on the machine that ran it tells which.",
            check_remedy(ctx, "Check the stack with `envcheck doctor` in the interpreter that ran it; an earlier error "
                         "in the log names the candidate that failed."),
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
        _dsl_remedy(ctx, "Check that nvidia-cutlass-dsl and cutlass_api are the versions the profile names "
                    "(`envcheck doctor`), then read the log."),
    )


def fell_back(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "The GEMM did not run through the CuteDSL backend: Inductor's code computes it some other way "
        f"({said.split(':', 1)[-1].strip() or 'not nv_universal_gemm'}).",
        Remedy(text="Unset TORCHINDUCTOR_* variables that change the GEMM backends, and run `envcheck doctor`."),
    )


def wrong_result(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "The CuteDSL kernel ran but its result does not match the fp32 reference: a miscompiled or mismatched "
        "kernel (DSL and cutlass_api versions), or faulty hardware.",
        _dsl_remedy(ctx, "Install the versions the profile names, then run again with --fresh (a stale cache)."),
    )


EXPLANATIONS: dict[str, Callable[[str, Context], tuple[str, Optional[Remedy]]]] = {
    "dsl-too-new": dsl_too_new,
    "tvm-ffi-too-old": tvm_ffi_too_old,
    "dsl-libs-missing": dsl_libs_missing,
    "torch-missing": torch_missing,
    "cutlass-api-missing": cutlass_api_missing,
    "cutlass-not-importable": cutlass_missing,
    "cuda-driver": driver,
    "cuda-out-of-memory": out_of_memory,
    "no-cuda": no_cuda,
    "no-valid-choices": no_valid_choices,
    "fell-back": fell_back,
    "wrong-result": wrong_result,
    **STACK_EXPLANATIONS,
    **UPSTREAM_EXPLANATIONS,
    **GEMM_OP_EXPLANATIONS,
}

# The table's order is priority (causes/signatures.toml); each row gets its explanation here by id.
SIGNATURES: tuple[Signature, ...] = tuple(Signature(row, EXPLANATIONS[row.id]) for row in load_signatures())


def explain_match(signature: Signature, found: "re.Match[str]", text: str, ctx: Context) -> Optional[Cause]:
    """The Cause one signature's match stands for, its evidence the line it was found on; None where the match is no
    such failure on this target."""
    return explain_said(signature, found.group(1) if found.re.groups else found.group(0), _line_of(text, found), ctx)


def explain_said(signature: Signature, said: str, evidence: str, ctx: Context) -> Optional[Cause]:
    """The Cause of a signature that named `said` (its first group, or the match) on the evidence line; None where
    its explanation says the match is no such failure on this target."""
    explained = signature.explain(said, ctx)
    if explained is None:
        return None
    text, remedy = explained
    return Cause(signature.id, text, remedy, evidence=evidence, status=signature.row.status)


def _line_of(text: str, found: "re.Match[str]") -> str:
    start = text.rfind("\n", 0, found.start()) + 1
    end = text.find("\n", found.end())
    return text[start : end if end >= 0 else len(text)].strip()[:300]


def _in_site_dir(location: Optional[str], site_dirs: tuple[str, ...]) -> bool:
    if not location:
        return True  # unknown: do not claim the .pth trap
    clean = location.rstrip("/")
    return any(clean == d.rstrip("/") for d in site_dirs)
