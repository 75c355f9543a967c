"""The smoke run itself: compiles one GEMM with torch.compile, restricted to the CuteDSL backend, in the target
interpreter, and proves from Inductor's generated code which kernel ran.

It is copied into the run directory as smoke_child.py, beside its helpers (envcheck_protocol.py, envcheck_gemm.py,
envcheck_lookup.py, envcheck_loaded.py, envcheck_library.py: envcheck/runner.py copies them), and run by path in a
child process (`python smoke_child.py --m 256 ...`) by envcheck.smoke, never imported by envcheck's own process
except by tests. So: standard library only at module level, Python 3.8 syntax; torch (and through Inductor, cutlass
and cutlass_api) are imported inside main().

It speaks envcheck/inside/protocol.py: progress lines `envcheck-smoke: phase NAME +SECONDS` on stderr while it works,
and exactly one line `ENVCHECK-SMOKE-RESULT {json}` on stdout at the end, whatever happened. The JSON (RESULT_SCHEMA
below) says ok or not, what ran, how long it took, and on failure the exception's type, message and traceback. The
exit status is 0 when ok, 1 otherwise.

Debug hook: ENVCHECK_SMOKE_PROFILE=PATH writes a cProfile of the run to PATH.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

try:  # imported as envcheck.inside.smoke_child by envcheck's own process (tests)
    from . import gemm, library, loaded, lookup, protocol
except ImportError:  # run by path in its run folder, beside the envcheck_*.py copies (envcheck/runner.py)
    import envcheck_gemm as gemm, envcheck_library as library, envcheck_loaded as loaded
    import envcheck_lookup as lookup, envcheck_protocol as protocol

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
    "kernel_lookup",  # "inductor": cutlass_api enumerated in full; "seeded": from a verified marker (lookup.py)
    "library",  # --library runs: the module called directly (no Inductor), else null
    "tried",  # --library runs: [{"kernel", "error"}] for each candidate that failed before the one that ran
    "error",  # null, or {"type", "message", "traceback"}
    "process",  # what the process really loaded: {"libraries": [LIBRARY...], "modules": {name: file}} (loaded.py)
    "layout",  # the layout of B of the GEMM being proved (the last one started: on a failure, the one that failed)
    "gemms",  # one per layout proved, in order: {"layout", "kernel", "call", "compile_s", "run_s", "max_error",
    # "code"}; the top-level kernel, call, compile_s, run_s, max_error and code are the first one's
)
# What each layout's entry of "gemms" holds (the top-level fields of the same names are the first layout's)
GEMM_FIELDS = ("layout", "kernel", "call", "compile_s", "run_s", "max_error", "code")


def _compile_and_capture(torch, compiled, a, b, backends):
    """Run the compiled GEMM once, with Inductor's settings for the smoke; return (out, generated code)."""
    from torch._inductor import config as inductor_config
    from torch._inductor.utils import run_and_get_code

    with inductor_config.patch(gemm.inductor_settings(backends)):
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


def _cuda_device(torch, result):
    """Device 0, recorded in the result; SmokeNoCuda when torch sees none."""
    result["versions"] = gemm.versions(torch)
    gemm.require_cuda(torch)
    device = torch.device("cuda", 0)
    result["gpu"] = {
        "index": 0,
        "name": torch.cuda.get_device_name(device),
        "capability": list(torch.cuda.get_device_capability(device)),
    }
    return device


def _inputs(torch, args, device, layout):
    generator = torch.Generator(device=device).manual_seed(0)
    return gemm.operands(torch, args.m, args.n, args.k, getattr(torch, args.dtype), device, generator, layout)


def _proved(result, layouts, proofs, layout, **fields):
    """Record one layout's proof: in "gemms", and at the top level for the first layout."""
    entry = dict.fromkeys(GEMM_FIELDS)
    entry.update(layout=layout, **fields)
    proofs.append(entry)
    if layout == layouts[0]:
        result.update({k: v for k, v in entry.items() if k != "layout"})


def _code_path(code_out, layouts, layout):
    """Where one layout's generated code goes: code_out itself for a single layout, else code_out-LAYOUT.py."""
    if not code_out or len(layouts) == 1:
        return code_out
    stem, dot, suffix = code_out.rpartition(".")
    return "%s-%s.%s" % (stem, layout, suffix) if dot else "%s-%s" % (code_out, layout)


def _check(torch, out, a, b, args, result):
    """Compare out with the fp32 reference of a @ b; SmokeWrongResult outside the dtype's tolerance (the failing
    max error left in the result). Returns the max error."""
    reference = a.float() @ b.float()
    max_ref = reference.abs().max().item()
    max_error, ok = gemm.compare(out, reference, max_ref, args.dtype)
    atol, rtol = gemm.TOLERANCES[args.dtype]
    result["tolerance"] = {"atol": atol, "rtol": rtol}
    if not ok:
        result["max_error"] = max_error
        raise protocol.SmokeWrongResult(
            "max |out - ref| = %.4g exceeds %s's tolerance atol=%g + rtol=%g * max|ref| (%.4g)"
            % (max_error, args.dtype, atol, rtol, max_ref)
        )
    return max_error


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

    kernel_lookup = "inductor"
    if args.lookup_marker and "NVGEMM" in args.backends.split(","):
        run.phase("kernel-lookup")
        kernel_lookup = lookup.seed_kernel_lookup(tuple(result["gpu"]["capability"]), args.lookup_marker, result["versions"])
    result["kernel_lookup"] = kernel_lookup

    layouts = _names(args.layout)
    for layout in layouts:  # one GEMM per layout of B, each compiled as a function of its own
        result["layout"] = layout
        run.phase("inputs")
        a, b = _inputs(torch, args, device, layout)
        run.phase("compile")
        began = time.perf_counter()
        compiled = torch.compile(gemm.fresh_gemm(torch, layout), fullgraph=True, dynamic=False)
        out, code = _compile_and_capture(torch, compiled, a, b, args.backends)
        compile_s = round(time.perf_counter() - began, 3)
        result["cache"] = gemm.counters()
        path = _code_path(args.code_out, layouts, layout)
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(code)
        call, kernel, fallbacks = gemm.find_kernel(code, args.call_pattern, args.kernel_pattern)
        if layout == layouts[0]:
            result.update(call=call, kernel=kernel, code=path, compile_s=compile_s)
        if call is None:
            raise protocol.SmokeFellBack(
                "Inductor's generated code has no %s call%s"
                % (args.call_pattern or "async_compile.nv_universal_gemm",
                   ": the GEMM ran on " + " and ".join(fallbacks) if fallbacks else "")
            )

        run.phase("check")
        max_error = _check(torch, out, a, b, args, result)

        run.phase("run")
        _proved(result, layouts, result["gemms"], layout, kernel=kernel, call=call, compile_s=compile_s,
                run_s=_time_calls(torch, compiled, a, b, args.runs), max_error=max_error, code=path)
        result["cache"] = gemm.counters()
    if kernel_lookup == "inductor" and args.lookup_marker:
        lookup.record_full_lookup(args.lookup_marker, result["versions"])
    result["ok"] = True
    run.phase("done")


def library_smoke(args, run):
    """The GEMM through the profile's kernel library directly, no Inductor: candidates are tried in the library's
    order until one compiles, runs and matches the fp32 reference (at most --tries of them)."""
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

    layouts = _names(args.layout)
    for layout in layouts:
        result["layout"] = layout
        run.phase("inputs")
        a, b = _inputs(torch, args, device, layout)
        out = torch.empty(args.m, args.n, device=device, dtype=a.dtype)

        run.phase("kernel-lookup")
        capability = tuple(result["gpu"]["capability"])
        kernels = library.candidates(args.library, a, b, out, capability)
        if not kernels:
            raise protocol.SmokeNoKernel(
                "%s offers no kernel for a %dx%dx%d %s GEMM (B %s) on compute capability %d.%d"
                % ((args.library, args.m, args.n, args.k, args.dtype, layout) + capability)
            )
        tried = []
        for kernel in kernels[: max(1, args.tries)]:
            run.phase("compile")
            began = time.perf_counter()
            try:
                compiled = kernel.compile()
                compile_s = round(time.perf_counter() - began, 3)
                run.phase("check")
                out.zero_()
                kernel.run(compiled)
                torch.cuda.synchronize()
                max_error = _check(torch, out, a, b, args, result)
            except Exception as exc:  # this candidate failed: the next one may work; all are reported
                tried.append({"kernel": kernel.name, "error": "%s: %s" % (type(exc).__name__, str(exc)[:2000])})
                result["tried"].append(tried[-1])
                continue
            break
        else:
            raise protocol.SmokeNoKernel(
                "none of the first %d of %d kernels %s offers compiled, ran and matched the reference: %s"
                % (len(tried), len(kernels), args.library, tried[-1]["error"])
            )

        run.phase("run")
        run_s = _time_calls(torch, lambda x, y: kernel.run(compiled), a, b, args.runs)
        _proved(result, layouts, result["gemms"], layout, kernel=kernel.name, compile_s=compile_s, run_s=run_s,
                max_error=max_error)
    result["ok"] = True
    run.phase("done")


def _names(text):
    return [name for name in (text or "").split(",") if name]


def parse_args(argv):
    parser = argparse.ArgumentParser(description="envcheck's smoke run (one CuteDSL GEMM through torch.compile).")
    parser.add_argument("--m", type=int, default=256)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--k", type=int, default=256)
    parser.add_argument("--dtype", choices=sorted(gemm.TOLERANCES), default="bfloat16")
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
    parser.add_argument("--layout", default=gemm.LINEAR,
                        help="the layouts of B to prove, comma-separated (%s), one GEMM each" % ", ".join(gemm.LAYOUTS))
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    run = protocol.Recorder(RESULT_SCHEMA, protocol.SMOKE_PHASE, versions={}, cache={}, gemms=[])
    profile_path = os.environ.get("ENVCHECK_SMOKE_PROFILE")
    profiler = None
    if profile_path:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    try:
        protocol.run_guarded(lambda: (library_smoke if args.library else smoke)(args, run), run)
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile_path)
    try:
        run.result["process"] = loaded.process_record()
    except Exception as exc:  # forensics is a record, never a reason to fail
        run.result["process"] = {"libraries": [], "modules": {}, "error": str(exc)[:300]}
    run.emit(protocol.SMOKE_RESULT, run.result)
    return 0 if run.result["ok"] else 1


if __name__ == "__main__":
    protocol.exit_now(main())  # the result is out: the interpreter's teardown is skipped
