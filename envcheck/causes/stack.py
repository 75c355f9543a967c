"""The explanations of the known failures of the operators stack (torch >= 2.14, nvidia-cutlass-operators, the DSL's
split packages and toolkit flavours, tvm-ffi, the driver), each keyed by its id in signatures.toml; facts-17 section
10 has each message's source. explanations.py adds them to EXPLANATIONS. Pure."""

from __future__ import annotations

from typing import Callable, Optional

from packaging.version import InvalidVersion, Version

from ..judge.target import DSL_ARCH, target_remedy
from ..model import Remedy
from .context import Context
from .remedies import TVM_FFI_FLOOR, TVM_FFI_RAN, dsl_remedy, fresh_smoke, install_remedy, requirement_for

__all__ = ["STACK_EXPLANATIONS", "OPERATORS", "OPERATORS_DSL"]

OPERATORS = "nvidia-cutlass-operators"
OPERATORS_DSL = "nvidia-cutlass-dsl[cu13]>=4.8.0"  # operators 0.3.0 METADATA: Requires-Dist nvidia-cutlass-dsl>=4.8.0
GATED_FROM = Version("4.6")  # the DSL whose `cutlass` first admits cutlass.operators (_APPROVED_CUTLASS_SIBLINGS)
# The way out below 9.0 where the profile names none (doctor's, from the operators profile's [gpu-below]).
BELOW_HOPPER = ("On this GPU use torch 2.11 to 2.13 with the recipe (profile torch-2.11-nvgemm: cutlass_api keeps its "
                "Sm80 kernels there), or leave NVGEMM out of torch._inductor.config.max_autotune_gemm_backends on it.")

Explanation = Callable[[str, Context], "tuple[str, Optional[Remedy]]"]


def _dsl_older_than_gate(version: Optional[str]) -> bool:
    try:
        return version is not None and Version(version) < GATED_FROM
    except InvalidVersion:
        return False


def target_sm_invalid(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    number, kind = int(said[:-1]), said[-1]
    cc = (number // 10, number % 10)
    if kind == "f":
        return (f"cutlass.operators refuses the compile target {said}: a family-portable (f) target needs Blackwell "
                "(sm100) or newer.", Remedy(text="Compile for the device's own target (f\"{major}{minor}a\") or leave "
                                              "target_sm unset; unset CUTE_DSL_ARCH where it names another GPU."))
    rule = ctx.policy.gpu_below
    way_out = rule.remedy if rule.remedy and cc < rule.capability else BELOW_HOPPER
    return (
        f"NVGEMM breaks torch.compile on this GPU with torch >= 2.14 (TargetSm {said}): torch asks cutlass.operators "
        f"for target_sm f\"{{cc}}a\" ({said} on compute capability {cc[0]}.{cc[1]}), which every operators release "
        "refuses below 9.0 (ArchConditional targets must be Hopper (sm90) or newer), so its Sm80 operators are never "
        "reached.",
        Remedy(text=way_out),
    )


def operators_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirements = (requirement_for(ctx, "cutlass.operators", OPERATORS), OPERATORS_DSL)
    remedy = install_remedy(ctx, f"Install {' and '.join(requirements)} (operators 0.3.0 needs DSL >= 4.8).", *requirements,
                            why="torch >= 2.14's NVGEMM kernel library")
    part = f" ({said}: a part of it)" if said != "cutlass.operators" else ""
    if _dsl_older_than_gate(ctx.cutedsl_version):
        return (f"`import {said}` fails because nvidia-cutlass-dsl {ctx.cutedsl_version} is older than 4.6: its "
                "`cutlass` package admits cutlass.operators only from 4.6 (_APPROVED_CUTLASS_SIBLINGS), so the "
                f"module is not found even where {OPERATORS} is installed. It is not a broken DSL.", remedy)
    return (
        f"`import {said}` fails: {OPERATORS} (torch >= 2.14's NVGEMM kernel library) is not installed{part}, or the "
        "DSL is older than 4.6, whose `cutlass` does not admit it. cutlass_api (the torch 2.11 recipe's library) is a "
        "different package, not an old name of it (https://github.com/pytorch/pytorch/issues/191130); "
        "Inductor only looks for it and, without "
        "it, leaves NVGEMM out silently.",
        remedy,
    )


def common_efc(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"torch 2.14.x imports {said} when it reloads an SM100 fused-epilogue (EFC) kernel from Inductor's disk cache "
        f"(a warm run, or the subprocess precompile), and {OPERATORS} 0.2.0 and later call that module evt.efc.",
        Remedy(text="Use torch 2.15, which imports either name "
             "(https://github.com/pytorch/pytorch/issues/193940); with torch 2.14.x, clear "
                    "Inductor's CuteDSL cache ($TORCHINDUCTOR_CACHE_DIR/cutedsl_compile_cache) when a warm run fails so."),
    )


def tvm_ffi_not_initialized(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "The DSL compiled a kernel this GPU cannot run, so it built no launcher (TVM FFI function is not "
        "initialized): a target of another architecture (target_sm \"80\" on a 9.0 device), CUTE_DSL_ARCH naming "
        "another GPU, or an artifact cached on another GPU.",
        Remedy(text="Compile for the device's own target (f\"{major}{minor}a\", or leave target_sm unset), unset "
                    "CUTE_DSL_ARCH, and run again with fresh caches.", commands=(fresh_smoke(ctx),)),
    )


def tvm_ffi_needed(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = f"apache-tvm-ffi>={said}"
    return (
        f"The DSL could not import tvm_ffi.utils.kwargs_wrapper: apache-tvm-ffi is missing, broken or older than it "
        f"needs (it asks for >= {said}; a DSL >= 4.6 needs >= {TVM_FFI_FLOOR}; {TVM_FFI_RAN} ran on the H200).",
        install_remedy(ctx, f"Install {requirement}.", requirement, why="the DSL's kwargs wrapper"),
    )


def operators_tvm_ffi_conflict(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "CUTLASS_OPERATORS_USE_TVM_FFI and CUTE_DSL_ENABLE_TVM_FFI are both set, to opposite values, and "
        "cutlass.operators refuses to pick a launch path (its config.py). envcheck's smoke and bench runs clear both.",
        Remedy(text="Unset one of the two variables, or set both to the same value."),
    )


def nvmmh_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = f"{OPERATORS}[heuristics]"
    return (
        f"get_operators(..., heuristic=NvMatmulHeuristics()) needs nvidia-matmul-heuristics >= {said}, which is not "
        "installed or has another API. Inductor ranks NVGEMM kernels with its own heuristics and never asks for it.",
        install_remedy(ctx, f"Install {requirement}, or call get_operators without heuristic=.", requirement,
                       why="cutlass.operators' nvMatmulHeuristics ranking"),
    )


def _flavour(ctx: Context, text: str, flavour: str, reinstall: bool = False, why: str = "") -> Remedy:
    """A DSL flavour package of the DSL's own version: without that version (explain without --python) the text
    only, since an unpinned -libs-cuN would pull the newest, another version than -libs-base."""
    name = f"nvidia-cutlass-dsl-libs-{flavour}"
    if not ctx.cutedsl_version:
        return Remedy(text=text.format(requirement=name) + " Its version must be the DSL's own (`pip show "
                      "nvidia-cutlass-dsl`; `envcheck explain --python PY` names it).")
    requirement = f"{name}=={ctx.cutedsl_version}"
    return install_remedy(ctx, text.format(requirement=requirement), requirement, reinstall=reinstall, why=why)


def dsl_flavor_incompatible(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"Every toolkit flavour of the DSL installed here ({said}) needs a newer CUDA than the driver supports: e.g. "
        "only -libs-cu13 on a driver below 580 (CUDA 12.x).",
        _flavour(ctx, "Install {requirement} beside it, or update the driver (580.65.06 or newer for CUDA 13).",
                 "cu12", why="the DSL's CUDA 12 flavour, which this driver runs"),
    )


def dsl_install_incomplete(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"The DSL's cu{said} flavour is half there: its compiler module is installed but its runtime library "
        "(libcute_dsl_runtime.so) is not (an interrupted install, or -libs-base and -libs-cuN of different versions).",
        _flavour(ctx, "Reinstall {requirement}.", f"cu{said}", reinstall=True, why=f"the DSL's cu{said} flavour"),
    )


def cutlass_mlir_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"`import cutlass` found the DSL's Python part without its compiler ({said}): from DSL 4.6 cutlass/_mlir ships "
        "in nvidia-cutlass-dsl-libs-base and cutlass/__init__.py in -libs-core, so -libs-base is missing or of "
        "another version; or a CuTeDSL source tree or editable install was not prepared "
        "(https://github.com/NVIDIA/cutlass/issues/3416).",
        dsl_remedy(ctx, f"Reinstall the profile's DSL ({ctx.policy.cutedsl.requirement}), every -libs-* package of "
                   "one version."),
    )


def dsl_driver_dependency(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "DSL 4.4.x starts CUDA while `import cutlass` imports its jax support (when jax is installed): without an "
        "NVIDIA driver that fails (https://github.com/NVIDIA/cutlass/issues/3083). DSL 4.5 and later no longer do.",
        dsl_remedy(ctx, f"Install the profile's DSL ({ctx.policy.cutedsl.requirement}; not 4.4.x), uninstall jax, "
                   "or import cutlass where a driver is."),
    )


def no_libcuda(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    if "STUB" in said.upper():
        return (
            "The libcuda.so.1 that was loaded is the CUDA toolkit's stub (its lib64/stubs folder on LD_LIBRARY_PATH or "
            "in the linker's cache), not the driver's: a machine or container without the driver, or a stub ahead of "
            "it. CUDA cannot start.",
            Remedy(text="Take the toolkit's stubs folder off LD_LIBRARY_PATH; run on a GPU node with the driver mounted "
                        "(`envcheck doctor` names the libcuda.so.1 in the way: cuda.paths).",
                   commands=(("nvidia-smi",),)),
        )
    return (
        "The NVIDIA driver's library libcuda.so.1 is not here: a machine or container without the driver (a "
        "container needs --gpus all and the NVIDIA container toolkit); on aarch64 a DSL <= 4.5 needs it even for "
        "`import cutlass` (https://github.com/NVIDIA/cutlass/issues/3110).",
        Remedy(text="Run on a GPU node with the driver mounted; for a CPU-only aarch64 build, do not import cutlass.",
               commands=(("nvidia-smi",),)),
    )


def no_kernel_image(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"A kernel has no image for {ctx.gpu or 'this GPU'}: torch's build lacks its architecture "
        "(torch.cuda.get_arch_list()), or a CuteDSL kernel was compiled for another one (CUTE_DSL_ARCH, or an "
        "artifact cached on another GPU).",
        Remedy(text="Unset CUTE_DSL_ARCH and run again with fresh caches; if torch's own kernels fail, install a torch "
                    "build that lists this GPU's architecture.", commands=(fresh_smoke(ctx),)),
    )


def dsl_arch_mismatch(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    """The DSL's 'expects arch to be sm_90a, but got sm_100a': doctor's cutedsl.arch remedy for the target the kernel
    needs (the message's group), whatever profile explains the log (explain without --python takes the recipe)."""
    rule = ctx.policy.compile_target
    variable = rule.variable if rule is not None else DSL_ARCH
    fallback = f"its fallback {rule.fallback}" if rule is not None else "its fallback (sm_100a in DSL 4.8.1)"
    return (
        f"A CuteDSL candidate was compiled for another GPU's target: its kernel needs {said}. torch >= 2.14 compiles "
        f"NVGEMM candidates in Inductor's compile workers, which cannot read the GPU, so the DSL compiles there for "
        f"{variable}, or else for {fallback}. Inductor drops each such candidate from autotuning (an error-level "
        "traceback each): NVGEMM's pick is made without them, and the compile takes longer. "
        "(TORCHINDUCTOR_COMPILE_THREADS=1 avoids it too, by compiling without workers, more slowly.)",
        target_remedy(variable, said),
    )


STACK_EXPLANATIONS: dict[str, Explanation] = {
    "target-sm-invalid": target_sm_invalid,
    "dsl-arch-mismatch": dsl_arch_mismatch,
    "cutlass-operators-missing": operators_missing,
    "common-efc": common_efc,
    "tvm-ffi-not-initialized": tvm_ffi_not_initialized,
    "tvm-ffi-needed": tvm_ffi_needed,
    "operators-tvm-ffi-conflict": operators_tvm_ffi_conflict,
    "nvmmh-missing": nvmmh_missing,
    "dsl-flavor-incompatible": dsl_flavor_incompatible,
    "dsl-install-incomplete": dsl_install_incomplete,
    "cutlass-mlir-missing": cutlass_mlir_missing,
    "dsl-driver-dependency": dsl_driver_dependency,
    "no-libcuda": no_libcuda,
    "no-kernel-image": no_kernel_image,
}
