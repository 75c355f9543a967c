"""The smoke run itself: compiles one GEMM with torch.compile, restricted to the CuteDSL backend, in the target
interpreter, and proves from Inductor's generated code which kernel ran.

It is copied into the run directory as smoke_child.py and run by path in a child process (`python smoke_child.py
--m 256 ...`) by envcheck.smoke, never imported by envcheck's own process except by tests of its pure helpers. So:
standard library only at module level, Python 3.8 syntax; torch (and through Inductor, cutlass and cutlass_api) are
imported inside main().

The protocol: progress lines `envcheck-smoke: phase NAME +SECONDS` on stderr while it works, and exactly one line
`ENVCHECK-SMOKE-RESULT {json}` on stdout at the end, whatever happened, so that a log can surround it. The JSON
(RESULT_SCHEMA below) says ok or not, what ran, how long it took, and on failure the exception's type, message and
traceback. The exit status is 0 when ok, 1 otherwise; a crash in native code (a signal) or a hang leaves no result
line, and the parent says so.

Debug hook: ENVCHECK_SMOKE_PROFILE=PATH writes a cProfile of the run to PATH.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
import time
import traceback

RESULT_PREFIX = "ENVCHECK-SMOKE-RESULT "
PHASE_PREFIX = "envcheck-smoke: phase "
PROTOCOL = 1

# The fields of the result line (all present; null where not known).
RESULT_SCHEMA = (
    "protocol",  # PROTOCOL
    "ok",  # bool: the GEMM ran through the CuteDSL backend and matched the fp32 reference
    "phase",  # the last phase reached: start, import-torch, cuda, import-cutlass, inputs, kernel-lookup, compile,
    # check, run, done
    "kernel",  # "cutedsl.Sm80TensorOpGemmKernel_..." as named in the generated code
    "call",  # "nv_universal_gemm_fused_mm_<hash>": the kernel Inductor defined with async_compile.nv_universal_gemm
    "gpu",  # {"name", "capability": [major, minor], "index"}
    "compile_s",  # the first call of the compiled function: Dynamo, Inductor, autotuning and the kernel's own JIT
    "run_s",  # median time of one call afterwards, measured with CUDA events
    "max_error",  # max |out - ref| against the fp32 reference
    "tolerance",  # {"atol", "rtol"}
    "cache",  # Inductor's counters: {"fxgraph_hit", "fxgraph_miss", "autotune_local_hit"...}
    "versions",  # {"torch", "torch_cuda", "nvidia-cutlass-dsl", "cutlass_api", ...}
    "timings",  # [[phase, seconds since start], ...]
    "code",  # where the generated code was written, or null
    "kernel_lookup",  # "inductor": cutlass_api enumerated in full; "seeded": from a verified marker (see below)
    "library",  # --library runs: the module called directly (no Inductor), else null
    "tried",  # --library runs: [{"kernel", "error"}] for each candidate that failed before the one that ran
    "error",  # null, or {"type", "message", "traceback"}
    "process",  # what the process really loaded: {"libraries": [LIBRARY...], "modules": {name: file}} (below)
)

# Tolerances against the fp32 reference. Inputs are rounded to the dtype before the reference is taken, and the
# kernels accumulate in fp32, so what is left is the rounding of the output (2^-8 for bf16, 2^-11 for fp16) plus
# the order of summation.
TOLERANCES = {"bfloat16": (1e-2, 1.6e-2), "float16": (1e-2, 2e-3)}  # dtype: (atol, rtol)

_CALL = re.compile(r"async_compile\.nv_universal_gemm\(\s*['\"]([A-Za-z0-9_]+)['\"]")
_NAME_VAR = re.compile(r"_[A-Z0-9_]*KERNEL_NAME\s*=\s*['\"]([^'\"]+)['\"]")
_CUTEDSL = re.compile(r"\bcutedsl\.[A-Za-z0-9_]+")
_FALLBACKS = (
    ("extern_kernels.mm", "cuBLAS (extern_kernels.mm)"),
    ("extern_kernels.addmm", "cuBLAS (extern_kernels.addmm)"),
    ("extern_kernels.bmm", "cuBLAS (extern_kernels.bmm)"),
    ("async_compile.triton(", "Triton"),
)


class SmokeError(Exception):
    """A failure the smoke run itself detects; its class name is the protocol's error type."""


class SmokeNoCuda(SmokeError):
    """torch sees no CUDA device."""


class SmokeFellBack(SmokeError):
    """Inductor's code does not call the CuteDSL kernel: something else computed the GEMM."""


class SmokeWrongResult(SmokeError):
    """The CuteDSL kernel ran and its result does not match the fp32 reference."""


class SmokeNoKernel(SmokeError):
    """The library offers no kernel for this GEMM on this GPU, or none of the ones tried compiled and ran."""


def find_kernel(code, call_pattern=None, kernel_pattern=None):
    """(call, kernel, fallbacks) named in Inductor's generated code. Pure: the tests feed it real generated code.

    call: the name passed to async_compile.nv_universal_gemm; kernel: the library's kernel name the generated
    module looks up (the `_GEMM_KERNEL_NAME = "cutedsl..."` assignment, else any cutedsl.* name); fallbacks: what
    else computes a GEMM there (cuBLAS, Triton). A profile may give its own patterns: call_pattern's group 1 is the
    call, kernel_pattern's group 1 (or the whole match when it has no group) is the kernel.
    """
    call = re.compile(call_pattern).search(code) if call_pattern else _CALL.search(code)
    kernel = None
    if kernel_pattern:
        named = re.compile(kernel_pattern).search(code)
        if named is not None:
            kernel = named.group(1) if named.re.groups else named.group(0)
    else:
        named = _NAME_VAR.search(code) or _CUTEDSL.search(code)
        if named is not None:
            kernel = named.group(1) if named.re is _NAME_VAR else named.group(0)
    fallbacks = [label for needle, label in _FALLBACKS if needle in code]
    return (call.group(1) if call else None), kernel, fallbacks


def within_tolerance(max_error, max_ref, dtype):
    """Whether an error is acceptable for dtype: |out - ref| <= atol + rtol * |ref| at the worst element."""
    atol, rtol = TOLERANCES[dtype]
    return max_error <= atol + rtol * max_ref


# --------------------------------------------------------------------------------------------------------------
# What the process really loaded. Installed is not loaded: the shared libraries mapped into this process
# (/proc/self/maps on Linux) say which libcuda, CUDA runtime, cuBLAS and NVRTC ran, and from where; sys.modules says
# which cutlass and cutlass_api files were imported. Each library is {"kind", "path", "version", "cuda_major"}:
# version is what its file name says (libcuda.so.580.159.04: "580.159.04"; libcudart.so.13: "13"), cuda_major the
# CUDA major of a CUDA library, or of a DSL library built for one (_cutlass_ir.cu12...so: 12).

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
_CUDA_FAMILY = ("cudart", "cublasLt", "cublas", "nvrtc", "nvrtc-builtins", "nvjitlink")  # versioned with CUDA
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
            major = int(version.split(".")[0]) if version and kind in _CUDA_FAMILY else None
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
    return {"libraries": loaded_libraries(read_maps()), "modules": imported_modules(sys.modules)}


class _Run:
    """The result line being built, and the phases reached."""

    def __init__(self):
        self.start = time.perf_counter()
        self.result = dict.fromkeys(RESULT_SCHEMA)
        self.result.update(protocol=PROTOCOL, ok=False, phase="start", timings=[], versions={}, cache={})

    def phase(self, name):
        now = round(time.perf_counter() - self.start, 3)
        self.result["phase"] = name
        self.result["timings"].append([name, now])
        sys.stderr.write("%s%s +%.3f\n" % (PHASE_PREFIX, name, now))
        sys.stderr.flush()

    def emit(self):
        sys.stdout.flush()
        sys.stderr.flush()
        line = "\n" + RESULT_PREFIX + json.dumps(self.result, default=str) + "\n"
        os.write(1, line.encode("utf-8"))  # one write, so nothing the process prints can land inside it


def _versions():
    from importlib import metadata

    found = {}
    for name in ("torch", "triton", "nvidia-cutlass-dsl", "cutlass_api", "nvidia-cutlass-operators", "apache-tvm-ffi",
                 "nvidia-matmul-heuristics"):
        try:
            found[name] = metadata.version(name)
        except Exception:  # not installed: leave it out
            pass
    return found


def _counters():
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return {}
    inductor = counters.get("inductor", {})
    return {key: int(value) for key, value in inductor.items() if "cache" in key or "autotune" in key}


def _compile_and_capture(torch, compiled, a, b, backends):
    """Run the compiled GEMM once, with Inductor's settings for the smoke; return (out, generated code)."""
    from torch._inductor import config as inductor_config
    from torch._inductor.utils import run_and_get_code

    settings = {"max_autotune": True, "max_autotune_gemm_backends": backends, "fx_graph_cache": True}
    for optional, value in (("autotune_local_cache", True), ("autotune_fallback_to_aten", False)):
        if hasattr(inductor_config, optional):  # not every torch has every knob
            settings[optional] = value
    with inductor_config.patch(settings):
        out, codes = run_and_get_code(compiled, a, b)
        torch.cuda.synchronize()
    return out, "\n".join(codes)


def _time_calls(torch, fn, a, b, runs):
    for _ in range(3):
        fn(a, b)
    times = []
    for _ in range(runs):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        fn(a, b)
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) / 1000.0)
    times.sort()
    return times[len(times) // 2]


# --------------------------------------------------------------------------------------------------------------
# Inductor's kernel lookup (torch 2.11-2.13): the generated code finds its kernel with
# kernel_cache.get_kernel_by_name(), whose first call enumerates every kernel cutlass_api can generate (130,816 at
# the pinned commit, nearly all SM100) in every new process: about 8 s of pure Python on an H200 host. A smoke run
# lets Inductor do that in full, and when it worked it writes a marker for this exact stack (versions, and the size
# and time of every cutlass_api source file). A later run on the same stack and a GPU below compute capability 10.0
# then fills that lookup with cutlass_api.get_kernels(cc=cc) instead: the same candidates there (every kernel that
# is not SM80 has min_cc 100 and is filtered out by Inductor anyway), found in a fraction of a second. Any change
# to the stack, and --fresh, brings the full enumeration back.


def stack_key(versions):
    """A digest of the stack the full kernel enumeration ran on: versions plus cutlass_api's source files."""
    import hashlib
    import importlib.util

    digest = hashlib.sha256(json.dumps(versions, sort_keys=True).encode("utf-8"))
    spec = importlib.util.find_spec("cutlass_api")
    for root in sorted((spec.submodule_search_locations or []) if spec else []):
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(f for f in files if f.endswith(".py")):
                path = os.path.join(folder, name)
                info = os.stat(path)
                digest.update(("%s:%d:%d;" % (os.path.relpath(path, root), info.st_size, info.st_mtime_ns)).encode())
    return digest.hexdigest()


def _seed_kernel_lookup(capability, marker, versions):
    """'seeded' when Inductor's kernel lookup was filled for this GPU from a verified marker, else 'inductor'."""
    if tuple(capability) >= (10, 0):
        return "inductor"
    try:
        with open(marker, encoding="utf-8") as handle:
            known = json.load(handle)
        from torch._inductor.codegen.nv_universal_gemm import kernel_cache
    except Exception:  # no marker yet, or a torch without this module: Inductor's own way
        return "inductor"
    if known.get("key") != stack_key(versions) or getattr(kernel_cache, "_kernel_by_name_cache", 0) is not None:
        return "inductor"
    import cutlass_api

    cc = capability[0] * 10 + capability[1]
    kernel_cache._kernel_by_name_cache = {k.metadata.kernel_name: k for k in cutlass_api.get_kernels(cc=cc)}
    return "seeded"


def _record_full_lookup(marker, versions):
    try:
        from torch._inductor.codegen.nv_universal_gemm import kernel_cache

        kernels = getattr(kernel_cache, "_kernel_by_name_cache", None)
        if not kernels:
            return
        with open(marker, "w", encoding="utf-8") as handle:
            json.dump({"key": stack_key(versions), "kernels": len(kernels), "versions": versions}, handle)
    except Exception:  # a marker is an optimisation: never a reason to fail
        pass


def _cuda_device(torch, result):
    """Device 0, recorded in the result; SmokeNoCuda when torch sees none."""
    result["versions"] = _versions()
    result["versions"]["torch_cuda"] = torch.version.cuda
    if not torch.cuda.is_available():
        raise SmokeNoCuda(
            "torch %s (CUDA build %s) sees no CUDA device (torch.cuda.is_available() is False)"
            % (torch.__version__, torch.version.cuda)
        )
    device = torch.device("cuda", 0)
    result["gpu"] = {
        "index": 0,
        "name": torch.cuda.get_device_name(device),
        "capability": list(torch.cuda.get_device_capability(device)),
    }
    return device


def _inputs(torch, args, device):
    dtype = getattr(torch, args.dtype)
    generator = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(args.m, args.k, device=device, dtype=dtype, generator=generator)
    b = torch.randn(args.k, args.n, device=device, dtype=dtype, generator=generator)
    return a, b


def _check(torch, out, a, b, args, result):
    """Compare out with the fp32 reference of a @ b; SmokeWrongResult outside the dtype's tolerance."""
    reference = a.float() @ b.float()
    max_error = (out.float() - reference).abs().max().item()
    max_ref = reference.abs().max().item()
    atol, rtol = TOLERANCES[args.dtype]
    result["max_error"] = max_error
    result["tolerance"] = {"atol": atol, "rtol": rtol}
    if not (max_error == max_error and within_tolerance(max_error, max_ref, args.dtype)):  # NaN fails too
        raise SmokeWrongResult(
            "max |out - ref| = %.4g exceeds %s's tolerance atol=%g + rtol=%g * max|ref| (%.4g)"
            % (max_error, args.dtype, atol, rtol, max_ref)
        )


def smoke(args, run):
    """The GEMM through torch.compile, restricted to the CuteDSL backend, proved from the generated code."""
    result = run.result
    run.phase("import-torch")
    import torch

    run.phase("cuda")
    device = _cuda_device(torch, result)
    if "NVGEMM" in args.backends.split(",") and not args.no_import_check:
        # Inductor only looks for these with find_spec; importing them here surfaces the real error (a broken
        # .pth, an API mismatch) instead of a bare "no choices".
        run.phase("import-cutlass")
        for module in _names(args.modules):
            importlib.import_module(module)

    run.phase("inputs")
    a, b = _inputs(torch, args, device)

    def gemm(x, y):
        return torch.mm(x, y)

    lookup = "inductor"
    if args.lookup_marker and "NVGEMM" in args.backends.split(","):
        run.phase("kernel-lookup")
        lookup = _seed_kernel_lookup(tuple(result["gpu"]["capability"]), args.lookup_marker, result["versions"])
    result["kernel_lookup"] = lookup

    run.phase("compile")
    began = time.perf_counter()
    compiled = torch.compile(gemm, fullgraph=True, dynamic=False)
    out, code = _compile_and_capture(torch, compiled, a, b, args.backends)
    result["compile_s"] = round(time.perf_counter() - began, 3)
    result["cache"] = _counters()
    if args.code_out:
        with open(args.code_out, "w", encoding="utf-8") as handle:
            handle.write(code)
        result["code"] = args.code_out
    call, kernel, fallbacks = find_kernel(code, args.call_pattern, args.kernel_pattern)
    result["call"], result["kernel"] = call, kernel
    if call is None:
        raise SmokeFellBack(
            "Inductor's generated code has no %s call%s"
            % (args.call_pattern or "async_compile.nv_universal_gemm",
               ": the GEMM ran on " + " and ".join(fallbacks) if fallbacks else "")
        )

    run.phase("check")
    _check(torch, out, a, b, args, result)

    run.phase("run")
    result["run_s"] = _time_calls(torch, compiled, a, b, args.runs)
    result["cache"] = _counters()
    if lookup == "inductor" and args.lookup_marker:
        _record_full_lookup(args.lookup_marker, result["versions"])
    result["ok"] = True
    run.phase("done")


def _library_module():
    """envcheck/smoke/library.py: imported as envcheck.smoke.library in envcheck's own process (tests), and as
    smoke_library beside this script in a run directory."""
    try:
        from . import library  # type: ignore
    except ImportError:
        import smoke_library as library  # type: ignore
    return library


def library_smoke(args, run):
    """The GEMM through the profile's kernel library directly, no Inductor: candidates are tried in the library's
    order until one compiles, runs and matches the fp32 reference (at most --tries of them)."""
    library = _library_module()
    result = run.result
    result["library"] = args.library
    result["tried"] = []
    run.phase("import-torch")
    import torch

    run.phase("cuda")
    device = _cuda_device(torch, result)
    run.phase("import-library")
    for module in _names(args.modules) or [args.library]:
        importlib.import_module(module)
    result["versions"][args.library] = library.library_version(args.library)

    run.phase("inputs")
    a, b = _inputs(torch, args, device)
    out = torch.empty(args.m, args.n, device=device, dtype=a.dtype)

    run.phase("kernel-lookup")
    capability = tuple(result["gpu"]["capability"])
    kernels = library.candidates(args.library, a, b, out, capability)
    if not kernels:
        raise SmokeNoKernel(
            "%s offers no kernel for a %dx%dx%d %s GEMM on compute capability %d.%d"
            % ((args.library, args.m, args.n, args.k, args.dtype) + capability)
        )
    for kernel in kernels[: max(1, args.tries)]:
        run.phase("compile")
        began = time.perf_counter()
        try:
            compiled = kernel.compile()
            result["compile_s"] = round(time.perf_counter() - began, 3)
            run.phase("check")
            out.zero_()
            kernel.run(compiled)
            torch.cuda.synchronize()
            _check(torch, out, a, b, args, result)
        except Exception as exc:  # this candidate failed: the next one may work; all are reported
            result["tried"].append({"kernel": kernel.name, "error": "%s: %s" % (type(exc).__name__, str(exc)[:2000])})
            continue
        result["kernel"] = kernel.name
        break
    else:
        raise SmokeNoKernel(
            "none of the first %d of %d kernels %s offers compiled, ran and matched the reference: %s"
            % (len(result["tried"]), len(kernels), args.library, result["tried"][-1]["error"])
        )

    run.phase("run")
    result["run_s"] = _time_calls(torch, lambda x, y: kernel.run(compiled), a, b, args.runs)
    result["ok"] = True
    run.phase("done")


def _names(text):
    return [name for name in (text or "").split(",") if name]


def parse_args(argv):
    parser = argparse.ArgumentParser(description="envcheck's smoke run (one CuteDSL GEMM through torch.compile).")
    parser.add_argument("--m", type=int, default=256)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--k", type=int, default=256)
    parser.add_argument("--dtype", choices=sorted(TOLERANCES), default="bfloat16")
    parser.add_argument("--backends", default="NVGEMM", help="max_autotune_gemm_backends, comma-separated")
    parser.add_argument("--runs", type=int, default=20, help="timed calls after the compile")
    parser.add_argument("--code-out", default=None, help="write Inductor's generated code here")
    parser.add_argument("--no-import-check", action="store_true", help="leave importing cutlass to Inductor")
    parser.add_argument("--lookup-marker", default=None, help="where the full kernel enumeration is recorded")
    parser.add_argument("--modules", default="cutlass,cutlass_api", help="modules imported first, comma-separated")
    parser.add_argument("--call-pattern", default=None, help="regex: the kernel call in the generated code (group 1)")
    parser.add_argument("--kernel-pattern", default=None, help="regex: the kernel name in the generated code")
    parser.add_argument("--library", default=None, help="call this kernel library directly instead of Inductor")
    parser.add_argument("--tries", type=int, default=4, help="--library: candidates tried before giving up")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    run = _Run()
    profile_path = os.environ.get("ENVCHECK_SMOKE_PROFILE")
    profiler = None
    if profile_path:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    try:
        (library_smoke if args.library else smoke)(args, run)
    except BaseException as exc:  # noqa: BLE001 - every failure, Ctrl-C included, becomes the result line
        kind = type(exc)
        text = traceback.format_exc()
        sys.stderr.write(text)
        run.result["error"] = {
            "type": kind.__name__ if kind.__module__ in ("__main__", "builtins") else kind.__module__ + "." + kind.__qualname__,
            "message": str(exc)[:8000],
            "traceback": text[-12000:],
        }
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile_path)
    try:
        run.result["process"] = process_record()
    except Exception as exc:  # forensics is a record, never a reason to fail
        run.result["process"] = {"libraries": [], "modules": {}, "error": str(exc)[:300]}
    run.emit()
    return 0 if run.result["ok"] else 1


if __name__ == "__main__":
    status = main()
    # The result is out. Skip the interpreter's teardown (seconds of atexit work in torch, CUDA and the DSL); every
    # cache is written when it is filled, and envcheck ends whatever this process leaves in its group.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
