"""The explanations of the environment messages read from the upstream sources themselves (issue 25): torch's NVGEMM
path (torch 2.11-2.15), nvidia-cutlass-operators 0.1-0.3 and the DSL 4.3-4.8.1, each that names an architecture, a
CUDA or driver version, a library, an environment variable, a missing module or a package version. Each is keyed by
its id in signatures.toml, where the row names the wheel's file and line; tests/data/upstream-messages.toml holds
every message's real text. explanations.py adds them to its table. Pure."""

from __future__ import annotations

from typing import Callable, Optional

from ..judge._common import pip_command
from ..model import Remedy
from .context import Context
from .remedies import check_remedy, dsl_remedy, fresh_smoke, install_remedy, package_rule, requirement_for
from .stack import OPERATORS

__all__ = ["UPSTREAM_EXPLANATIONS"]

Explanation = Callable[[str, Context], "tuple[str, Optional[Remedy]]"]
ARCH_EXAMPLES = "sm_90a on an H100/H200 (9.0), sm_100a on a B200 (10.0), sm_103a on a B300 (10.3)"


def _own_arch(ctx: Context) -> str:
    """The compile target of the GPU judged for (`sm_90a`), or how to spell one where none is known."""
    if ctx.capability is None:
        return f"this GPU's own target (sm_<major><minor>a: {ARCH_EXAMPLES})"
    major, minor = ctx.capability
    return f"sm_{major}{minor}{'a' if major >= 9 else ''} (compute capability {major}.{minor})"


def dsl_toolkit_refuses_gpu(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    version = f"=={ctx.cutedsl_version}" if ctx.cutedsl_version else ""
    requirement = f"nvidia-cutlass-dsl[cu13]{version}"
    return (
        f"The DSL's CUDA 12.9 build (nvidia-cutlass-dsl-libs-cu12, a plain `pip install nvidia-cutlass-dsl`) cannot "
        f"compile for {said}: Rubin (compute capability 10.7) needs its CUDA 13 build, which only nvidia-cutlass-dsl"
        "[cu13] brings (DSL 4.8.1 base_dsl/dsl.py:308-315 refuses a Rubin target under a toolkit <= 13.3).",
        install_remedy(ctx, f"Install {requirement} (the -libs-cu13 flavour, which the DSL loads on a CUDA 13 driver; "
                       "compute capability 10.7 needs it).", requirement, why="the DSL's CUDA 13 build (Rubin)"),
    )


def dsl_arch_unsupported(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    arch = said if said.startswith("sm_") else "a target"
    return (
        f"A CuteDSL kernel was compiled for {arch}, which its code does not support (the DSL's arch check: "
        "CONFIG_UNSUPPORTED_ARCH in DSL 4.6-4.8, 'invalid arch, expected one of ...' in 4.3-4.5; an instruction's own: "
        "a Blackwell tcgen05 MMA on any other target, a TMA copy below sm_90): CUTE_DSL_ARCH or the compile target "
        "names another GPU, or a compile worker that cannot query the GPU fell back to sm_100a. On a GPU below 9.0 the "
        "Hopper and Blackwell kernels cannot be built at all.",
        Remedy(text=f"Compile for {_own_arch(ctx)}: set CUTE_DSL_ARCH to it (or unset it where it names another "
                    "GPU), and run again with fresh caches.", commands=(fresh_smoke(ctx),)),
    )


def dsl_arch_invalid(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"{said!r} is not a compute target the DSL or cutlass.operators can read (CUTE_DSL_ARCH, or a target_sm): "
        "they take sm_<major><minor> with an optional a or f, such as sm_90a or sm_100f (operators' TargetSm: '90a', "
        "'100f').",
        Remedy(text=f"Set CUTE_DSL_ARCH to {_own_arch(ctx)}, or unset it: the DSL then asks the GPU."),
    )


def env_value_invalid(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"The environment variable {said} holds a value its reader refuses (a boolean wants 1/0, true/false, yes/no "
        "or on/off; a number a base-10 integer): the DSL or cutlass.operators stops at its import.",
        Remedy(text=f"Unset {said}, or give it a value of its kind."),
    )


def tvm_ffi_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = requirement_for(ctx, "tvm_ffi", "apache-tvm-ffi")
    return (
        "TVM FFI was asked for (CUTE_DSL_ENABLE_TVM_FFI, CUTLASS_OPERATORS_USE_TVM_FFI, or the compile options) but "
        "apache-tvm-ffi is not installed: the DSL or cutlass.operators refuses rather than run without it.",
        install_remedy(ctx, f"Install {requirement} (the profile's), or unset the variable that asks for TVM FFI.",
                       requirement, why="the kernels' TVM FFI launch path"),
    )


def tvm_ffi_disabled(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = requirement_for(ctx, "tvm_ffi", "apache-tvm-ffi")
    return (
        "apache-tvm-ffi is not installed, so cutlass.operators launches its kernels without TVM FFI: they run, with "
        "3-10x the host overhead per call (its config.py), which decode-sized GEMMs feel.",
        install_remedy(ctx, f"Install {requirement}; or set CUTLASS_OPERATORS_USE_TVM_FFI=0 to say it is meant.",
                       requirement, why="the kernels' TVM FFI launch path"),
    )


def operators_too_old(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = requirement_for(ctx, "cutlass.operators", f"{OPERATORS}>=0.2.0")
    return (
        f"torch 2.15 imports cutlass.operators.providers.cutedsl.evt.efc on every dense GEMM (its vendored EFC "
        f"template), which {OPERATORS} 0.2.0 introduced: an {OPERATORS} 0.1.x is too old for it (torch 2.15.0 "
        "kernel_cache.py:220, :235 -> dense_gemm_efc_kernel.py:13).",
        install_remedy(ctx, f"Install {requirement} (0.2.0 or later beside torch 2.15).", requirement,
                       why="torch 2.15 imports evt.efc"),
    )


def operators_kernel_names(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    rule = package_rule(ctx, "cutlass.operators")
    verified = f" (the profile verified {rule.verified})" if rule is not None and rule.verified else ""
    return (
        f"The installed {OPERATORS} names its EFC kernels in a way this torch does not know (torch reads the tile "
        "from the name, 'tileMxNxK', nv_universal_gemm.py:610-633): an operators release newer than the torch, "
        f"or older{verified}.",
        check_remedy(ctx, f"Install the {OPERATORS} this torch was released with (`envcheck doctor` names the "
                          "profile's), or a torch that knows the new names."),
    )


def kernel_not_found(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"Inductor asked {ctx.library} for the kernel {said}, which the installed {ctx.library} does not offer: the "
        "name comes from Inductor's cache or generated code of another kernel-library or DSL version, or of another "
        "GPU.",
        Remedy(text="Empty Inductor's caches (TORCHINDUCTOR_CACHE_DIR, and its cutedsl_compile_cache) and compile "
                    "again; `envcheck smoke --fresh` does so for its own.", commands=(fresh_smoke(ctx),)),
    )


def dsl_provider_unavailable(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"cutlass.operators cannot load its CuteDSL provider ({said}): a module the provider imports is missing, the "
        "DSL (nvidia-cutlass-dsl, the `cutlass` package) or torch (the message names only the DSL; run here without "
        "torch it says the same), so no operator is offered. The `No module named ...` before it names which.",
        dsl_remedy(ctx, f"Install the profile's DSL ({ctx.policy.cutedsl.requirement}); `envcheck doctor` shows why "
                   "`import cutlass` fails."),
    )


def nvmmh_gpu(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "cutlass.operators' nvMatmulHeuristics ranking knows only Blackwell (SM100) GPUs, and this one is not one "
        "(heuristics/nvmatmul/_provider.py:76, ranker.py:160). Inductor ranks with its own heuristics.",
        Remedy(text="Call get_operators without heuristic= on this GPU (compute capability 10.x needed for it)."),
    )


def nvdisasm_missing(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "SASS output was asked for (CUTE_DSL_KEEP with sass, or a dump option) and the DSL found no usable nvdisasm: "
        "not the nvidia-cuda-nvdisasm wheel, nor a CUDA toolkit on CUDA_HOME/CUDA_PATH or PATH.",
        install_remedy(ctx, "Install nvidia-cutlass-dsl[sass], or drop sass from CUTE_DSL_KEEP.", "nvidia-cutlass-dsl[sass]",
                       why="the DSL's nvdisasm"),
    )


def dsl_cuda_version(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "The DSL could not read the CUDA version it was built with (base_dsl/version_info.py): its compiler library "
        "is damaged or of another version than its Python part.",
        dsl_remedy(ctx, f"Reinstall the profile's DSL ({ctx.policy.cutedsl.requirement}), every "
                   "nvidia-cutlass-dsl-libs-* of one version."),
    )


def tvm_ffi_not_installed(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = requirement_for(ctx, "tvm_ffi", "apache-tvm-ffi")
    return (
        f"`import {said}` fails: apache-tvm-ffi is not installed (or is broken). torch 2.15's NVGEMM block-scaled "
        "(FP8, FP4) GEMMs launch through it at every run (its dense_blockscaled_gemm_kernel.py), the DSL's TVM FFI "
        f"launch path needs it, and {OPERATORS} requires it.",
        install_remedy(ctx, f"Install {requirement} (the profile's).", requirement,
                       why="the kernels' TVM FFI launch path"),
    )


def torch_gpu_unsupported(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    requirement = str(ctx.policy.torch_requirement)
    index = ("--index-url", ctx.policy.torch_index_url) if ctx.policy.torch_index_url else ()
    return (
        f"torch itself was built without kernels for this GPU ({said}; torch.cuda.get_arch_list() lists what it "
        "has): its own operations, and Inductor's code around NVGEMM, cannot run there, whatever the kernel library "
        "offers. The warning names the torch builds that have them.",
        Remedy(text=f"Install a torch build whose architectures include this GPU's (the warning's pip line, or "
                    f"{requirement} from the index the profile names).",
               commands=(pip_command(ctx.python, "install", *index, requirement),)),
    )


def tvm_ffi_dlpack_addon(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "apache-tvm-ffi could not build its optional torch DLPack addon (a torch without the DLPack C exchange API, "
        "older than 2.10, and no torch-c-dlpack-ext or no compiler): tensors still pass, without its fast path "
        "(EnvTensorAllocator off). torch 2.10 and later carry the API themselves and never get this warning.",
        Remedy(text="Use the profile's torch (2.11 or later); on an older torch install torch-c-dlpack-ext."),
    )


def max_active_clusters(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "torch could not ask cutlass.operators for an operator's cluster occupancy (get_max_active_clusters, which "
        "asks the CUDA driver through cuda-bindings): the precompile workers then build it without that number. "
        "cuda-bindings cannot reach the driver (libcuda.so.1), or no CUDA device is visible to the process.",
        check_remedy(ctx, "Check the driver and CUDA_VISIBLE_DEVICES (`envcheck doctor`, cuda.driver)."),
    )


def operator_from_metadata(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"An NVGEMM precompile worker could not rebuild the chosen operator from the main process's metadata and "
        f"searched {ctx.library} by arguments instead (slower; a worker whose {ctx.library} or DSL import differs from "
        "the main process's, or a DSL error in the worker).",
        check_remedy(ctx, "Check that one environment runs both (`envcheck doctor`); the traceback after this line "
                          "names the error."),
    )


def precompile_pool_unusable(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        "Inductor's compile worker pool failed (a worker died: out of memory, a crash in the DSL, a signal), so the "
        "NVGEMM candidates are compiled one by one in the main process: the compile takes many times longer.",
        Remedy(text="Read the worker's error above this line; TORCHINDUCTOR_COMPILE_THREADS=1 compiles without "
                    "workers from the start."),
    )


def dsl_enum_deprecated(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (
        f"Code written for DSL 4.3 passes {said} enum members where DSL 4.4 and 4.5 take strings: it still runs "
        "(a DeprecationWarning), and DSL 4.6 removes those names (cutlass_api's SM100 kernels then fail with "
        "AttributeError: ... 'ProxyKind').",
        dsl_remedy(ctx, "Keep the DSL below 4.6 for that code (the profile's DSL)."),
    )


def dsl_setting_deprecated(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return (f"{said} is deprecated: the DSL reads it still, as a CUTE_DSL_KEEP token.",
            Remedy(text=f"Use CUTE_DSL_KEEP=<token> instead of {said} (the warning names the token)."))


def dsl_log_settings(said: str, ctx: Context) -> tuple[str, Optional[Remedy]]:
    return ("CUTE_DSL_LOG_LEVEL is set, but the DSL logs nowhere: neither CUTE_DSL_LOG_TO_CONSOLE nor "
            "CUTE_DSL_LOG_TO_FILE is on.",
            Remedy(text="Set CUTE_DSL_LOG_TO_CONSOLE=1 (or CUTE_DSL_LOG_TO_FILE) beside CUTE_DSL_LOG_LEVEL, or unset it."))


UPSTREAM_EXPLANATIONS: dict[str, Explanation] = {
    "dsl-toolkit-refuses-gpu": dsl_toolkit_refuses_gpu,
    "dsl-arch-unsupported": dsl_arch_unsupported,
    "dsl-arch-invalid": dsl_arch_invalid,
    "env-value-invalid": env_value_invalid,
    "tvm-ffi-missing": tvm_ffi_missing,
    "tvm-ffi-disabled": tvm_ffi_disabled,
    "operators-too-old": operators_too_old,
    "operators-kernel-names": operators_kernel_names,
    "kernel-not-found": kernel_not_found,
    "dsl-provider-unavailable": dsl_provider_unavailable,
    "nvmmh-gpu": nvmmh_gpu,
    "nvdisasm-missing": nvdisasm_missing,
    "dsl-cuda-version": dsl_cuda_version,
    "max-active-clusters": max_active_clusters,
    "operator-from-metadata": operator_from_metadata,
    "precompile-pool-unusable": precompile_pool_unusable,
    "dsl-enum-deprecated": dsl_enum_deprecated,
    "dsl-setting-deprecated": dsl_setting_deprecated,
    "dsl-log-settings": dsl_log_settings,
    "tvm-ffi-not-installed": tvm_ffi_not_installed,
    "torch-gpu-unsupported": torch_gpu_unsupported,
    "tvm-ffi-dlpack-addon": tvm_ffi_dlpack_addon,
}
