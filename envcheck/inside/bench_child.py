"""The bench run itself: compiles each GEMM through Inductor's max-autotune once per backend, in the target
interpreter, and times what Inductor produced.

Copied into the run directory as bench_child.py, beside its helpers (envcheck_protocol.py, envcheck_gemm.py,
envcheck_lookup.py, envcheck_timing.py, envcheck_stoprule.py, envcheck_shape_timing.py, envcheck_library.py:
envcheck/runner.py copies them), and run by path; never
imported by envcheck itself except by tests. So: standard library only at module level, Python 3.8 syntax.

    python bench_child.py --plan plan.json [--code-dir DIR] [--lookup-marker FILE]

plan.json: {"shapes": [{"m", "n", "k", "label", "layout", "op", "batch", "bias"}], "dtype", "backends": [{"name",
"backends"}], "budget_s", "noise_target", "noise_floor", "peak_tflops", "time_cap_s", "seed", "library", "top_k"}.
Each shape is compiled as its own op (gemm.OPS: mm by default; addmm with its bias, bmm with its batch, baddbmm,
_scaled_mm in fp8), so that Inductor tunes the op a model runs. The backends are compiled in the plan's order; the first is measured again at the end of
each shape (the repeat). With "library": cuBLAS, then the library's candidates, ranked by nvMatmulHeuristics and cut
to "top_k" (null: every candidate; library.rank).

It speaks envcheck/inside/protocol.py: `envcheck-bench: phase NAME +SECONDS` progress lines on stderr; on stdout an
`ENVCHECK-BENCH-COMPILED {"shape", "backend"}` line after each compile (Inductor's autotuning of it is in the log
above it: envcheck/causes/candidates.py reads it), one `ENVCHECK-BENCH-ROW {json}` line per (shape, backend) as soon as
its shape is timed (ROW_SCHEMA; a shape's rows are timed together once all of them are compiled: shape_timing.py), so
that a run killed by its timeout still leaves what it measured; and one `ENVCHECK-BENCH-RESULT {json}` line at the end
(RESULT_SCHEMA). How a kernel is timed: envcheck/inside/timing.py; when a row's timing stops: stoprule.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

try:  # imported as envcheck.inside.bench_child by envcheck's own process (tests)
    from . import gemm, library, lookup, protocol, shape_timing, timing
    from .shape_timing import failed as _failed
except ImportError:  # run by path in its run folder, beside the envcheck_*.py copies (envcheck/runner.py)
    import envcheck_gemm as gemm, envcheck_library as library, envcheck_lookup as lookup
    import envcheck_protocol as protocol, envcheck_shape_timing as shape_timing, envcheck_timing as timing
    from envcheck_shape_timing import failed as _failed

RESULT_SCHEMA = (
    "protocol",
    "ok",  # bool: the child ran to the end (rows say what each measurement proved)
    "phase",  # the last phase reached
    "gpu",  # {"name", "capability": [major, minor], "index", "uuid", "sm_count"}
    "versions",  # {"torch", "torch_cuda", "triton", ...}
    "method",  # how kernel times were taken: a sentence naming the anchor
    "sleep_cycles_per_ms",  # the calibration of the blocking kernel
    "kernel_lookup",  # "inductor" or "seeded" (lookup.py)
    "timings",  # [[phase, seconds since start], ...]
    "candidates",  # with a library: how its kernels were chosen, one sentence per distinct outcome (library.rank)
    "error",  # null or {"type", "message", "traceback"}
)

ROW_SCHEMA = (
    "shape",  # {"m", "n", "k", "label", "layout", "op", "batch", "bias"}: as the plan gave it (gemm.LAYOUTS, gemm.OPS)
    "backend",  # the name shown: "ATEN", "TRITON", "NVGEMM", "mix"
    "backends",  # what max_autotune_gemm_backends was set to
    "repeat",  # true: a second measurement of an already measured backend, for run-to-run noise
    "status",  # "ok", "error", "wrong-result", "skipped"
    "reason",  # why not ok: a sentence
    "error",  # null or {"type", "message"}
    "compile_s",  # first call of the compiled function: Dynamo, Inductor, autotuning, the kernel's JIT
    "cache",  # Inductor's counters that moved during the compile ({"fxgraph_cache_hit": 1, ...})
    "choice",  # which backend Inductor's code calls: "ATEN", "TRITON", the CuteDSL backend, or "unknown"
    "kernel",  # the kernel named in the generated code
    "device_kernels",  # kernel names the CUDA profiler saw during one call (ENVCHECK_BENCH_PROFILE_KERNELS=1)
    "code",  # where the generated code was written
    "max_error",  # max |out - ref| against the fp32 reference
    "max_ref",  # max |ref|
    "tolerance",  # {"atol", "rtol"}
    "kernel_ms",  # {"median", "q25", "q75", "min", "spread", "reps", "mode", "rounds", "redone", "gaps", "stop", ...}
    "call_ms",  # wall time per call through the compiled function, calls back to back
    "call_spread",  # (max - min) / median of call_ms over its three rounds
    "host_ms",  # CPU time to launch one call
    "do_bench_ms",  # triton.testing.do_bench(median) on the same compiled function, where the calls run back to back
    "window",  # [time.time() at the start, at the end] of the timed part: matched with NVML samples
)


_TRITON_KERNEL = re.compile(r"async_compile\.triton\(\s*['\"]([A-Za-z0-9_]+)['\"]")


def classify(code, backend, op="mm"):
    """(choice, kernel) from Inductor's generated code: which backend it calls, and the kernel it names.

    The CuteDSL call and kernel are read as the smoke run reads them (gemm.find_kernel). A Triton GEMM is a template
    kernel (triton_tem_*); cuBLAS is extern_kernels.<op> (extern_kernels.mm for mm); Inductor's decompose-k choice of
    an mm is a batched GEMM (extern_kernels.bmm) and a Triton reduction."""
    call, kernel, fallbacks = gemm.find_kernel(code)
    if call is not None:
        return backend, kernel or call
    kernels = _TRITON_KERNEL.findall(code)
    templates = [name for name in kernels if "_tem_" in name]
    if templates:
        return "TRITON", templates[0]
    if "extern_kernels.%s(" % op in code:
        return "ATEN", "cuBLAS (extern_kernels.%s)" % op
    if op == "mm" and "extern_kernels.bmm(" in code and kernels:  # decompose-k: K split into a batch, then summed
        return "decompose-k", "extern_kernels.bmm + " + kernels[0]
    return "unknown", (fallbacks[0] if fallbacks else None)


# --------------------------------------------------------------------------------------------------------------
# One measurement


def compile_gemm(torch, backends, args, op="mm", out_dtype=None):
    """(compiled function, its first output, Inductor's generated code, seconds, cache counters that moved): the op
    (gemm.OPS) compiled on its arguments.

    The code is caught the way torch._inductor.utils.run_and_get_code catches it (GraphLowering.save_output_code),
    without its torch._dynamo.reset(), which would drop the backends compiled before."""
    from unittest import mock

    from torch._inductor import config as inductor_config
    from torch._inductor.graph import GraphLowering

    settings = gemm.inductor_settings(backends, **{"triton.cudagraphs": False})
    codes = []

    def save_output_code(code):
        codes.append(code)

    before = gemm.counters()
    began = time.perf_counter()
    with inductor_config.patch(settings), mock.patch.object(GraphLowering, "save_output_code", save_output_code):
        compiled = torch.compile(gemm.fresh_op(torch, backends, op, out_dtype), fullgraph=True, dynamic=False)
        out = compiled(*args)
        torch.cuda.synchronize()
    seconds = time.perf_counter() - began
    after = gemm.counters()
    moved = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
    return compiled, out, "\n".join(codes), seconds, moved


def inductor_gemm(torch, ctx, shape, name, backends, args):
    """prepare() for a backend through Inductor: compile the shape's op, keep the generated code, name the kernel."""
    op = shape.get("op") or "mm"
    compiled, out, code, seconds, moved = compile_gemm(torch, backends, args, op, getattr(torch, ctx["dtype"]))
    fields = {"compile_s": round(seconds, 3), "cache": moved}
    if ctx["code_dir"]:
        stem = "%s-%s-%s-%s" % (gemm.shape_text(shape), shape.get("layout") or gemm.ROW_MAJOR, shape["label"], name)
        path = os.path.join(ctx["code_dir"], re.sub(r"[^A-Za-z0-9_.-]+", "_", stem) + ".py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(code)
        fields["code"] = path
    fields["choice"], fields["kernel"] = classify(code, ctx["cutedsl_backend"], op)
    return (lambda: compiled(*args)), out, fields


def prepare_row(ctx, shape, name, backends, inputs, prepare, repeat=False):
    """A row's first half: prepare() (compile, or the function already measured, for a repeat) and the check of its
    first output. prepare() returns (call, the first output to check or None, row fields). Errors become the row's
    status. Returns (row, call or None: nothing to time)."""
    row = dict.fromkeys(ROW_SCHEMA)
    row.update(shape=shape, backend=name, backends=backends, repeat=repeat, status="error")
    reference, max_ref = inputs[-2:]
    atol, rtol = gemm.TOLERANCES[ctx["dtype"]]
    try:
        call, out, fields = prepare()
        row.update(fields)
        if out is not None:
            max_error, ok = gemm.compare(out, reference, max_ref, ctx["dtype"])
            row.update(max_error=max_error, max_ref=max_ref, tolerance={"atol": atol, "rtol": rtol})
            del out
            if not ok:
                row["status"] = "wrong-result"
                row["reason"] = "max |out - ref| = %.4g exceeds atol %g + rtol %g * max|ref| (%.4g)" % (
                    max_error, atol, rtol, max_ref)
                return row, None
    except Exception as exc:  # noqa: BLE001 - one backend's failure is that row's result, the run goes on
        _failed(row, exc)
        return row, None
    return row, call


# --------------------------------------------------------------------------------------------------------------
# The run


def bench(plan, args, run):
    result = run.result
    run.phase("import-torch")
    import torch

    result["versions"] = gemm.versions(torch)
    run.phase("cuda")
    gemm.require_cuda(torch)  # smoke's exception, so that the table of failure signatures explains it
    device = torch.device("cuda", 0)
    props = torch.cuda.get_device_properties(device)
    result["gpu"] = {
        "index": 0,
        "name": props.name,
        "capability": [props.major, props.minor],
        "uuid": str(getattr(props, "uuid", "")) or None,
        "sm_count": props.multi_processor_count,
    }
    cutedsl = plan["cutedsl_backend"]
    uses_cutedsl = any(cutedsl in b["backends"].split(",") for b in plan["backends"])
    result["kernel_lookup"] = "inductor"
    if uses_cutedsl and args.lookup_marker:
        run.phase("kernel-lookup")
        result["kernel_lookup"] = lookup.seed_kernel_lookup(tuple(result["gpu"]["capability"]), args.lookup_marker,
                                                            result["versions"])
    run.phase("calibrate")
    try:
        from triton.testing import do_bench
    except Exception:  # no Triton: no cross-check, the rest stands
        do_bench = None
    flush = torch.empty(timing.FLUSH_BYTES // 4, dtype=torch.int32, device=device)
    flush.zero_()  # loads the fill kernel (CUDA loads modules lazily): not inside the first row's estimate
    ctx = {
        "dtype": plan["dtype"],
        "cutedsl_backend": cutedsl,
        "code_dir": args.code_dir,
        "flush": flush,
        "cycles_per_ms": timing.calibrate_sleep(torch),
        "time_cap_s": float(plan["time_cap_s"]),
        "noise_target": float(plan["noise_target"]),
        "noise_floor": float(plan.get("noise_floor", 0.01)),  # the analysis' (bench/noise.py), for stoprule
        "peak_tflops": plan.get("peak_tflops"),  # the GPU's dense peak for the dtype (None: not known)
        "budget_s": float(plan["budget_s"]),
        "do_bench": do_bench,
        "capability": result["gpu"]["capability"],
        # The CUDA profiler names the kernels that really ran (cuBLAS's too), but it may leave CUPTI hooked into
        # every later launch, which would inflate host_ms: opt-in, ENVCHECK_BENCH_PROFILE_KERNELS=1.
        "profile_kernels": os.environ.get("ENVCHECK_BENCH_PROFILE_KERNELS") == "1",
        "loaded_at": float("-inf"),  # when the GPU was last kept busy, and for how long (shape_timing)
        "loaded_ms": 0.0,
    }
    result["sleep_cycles_per_ms"] = round(ctx["cycles_per_ms"])
    run.phase("import-inductor")  # its own phase: what the user's first torch.compile pays too, apart from the setup
    try:
        import torch._dynamo.utils  # noqa: F401 - gemm.counters
        import torch._inductor.graph  # noqa: F401 - compile_gemm
    except Exception:  # a broken Inductor: each row's compile says how (prepare_row)
        pass
    result["method"] = timing.METHOD
    dtype = getattr(torch, plan["dtype"])
    generator = torch.Generator(device=device).manual_seed(int(plan.get("seed", 0)))
    budget = float(plan["budget_s"])
    calls = {}  # backend name -> the function its first row timed (for the repeat)
    for index, shape in enumerate(plan["shapes"]):
        run.phase("shape %d/%d %s" % (index + 1, len(plan["shapes"]), shape["label"]))
        backends = list(plan["backends"])
        if run.elapsed() >= budget:
            for backend in backends:
                _skip(run, shape, backend, "the time budget (%g s) ran out before this shape" % budget)
            continue
        unfit = gemm.unfit(shape, ctx["capability"])
        if unfit:
            for backend in backends:
                _skip(run, shape, backend, unfit)
            continue
        operands, reference = gemm.op_operands(torch, shape, dtype, device, generator)
        inputs = (operands, reference, reference.abs().max().item())
        # Every row compiled first (each compile marked on stdout, so that the parent knows which autotuning in the
        # log was whose), then timed back to back: the GPU stays in its sustained state from one row to the next.
        rows = []
        for backend, prepare in _plan_rows(torch, ctx, plan, shape, operands, calls, result["candidates"]):
            repeat = backend.get("repeat", False)
            if run.elapsed() >= budget:
                if not repeat:
                    rows.append((_skipped(shape, backend, "the time budget (%g s) ran out" % budget), None))
                continue
            row, call = prepare_row(ctx, shape, backend["name"], backend["backends"], inputs, prepare, repeat)
            if not repeat:
                run.emit(protocol.BENCH_COMPILED, {"shape": shape, "backend": backend["name"]})
            if call is not None:
                calls.setdefault(backend["name"], call)
            rows.append((row, call))
        run.phase("time %d/%d" % (index + 1, len(plan["shapes"])))
        shape_timing.time_shape(torch, ctx, shape, rows, lambda: run.elapsed() >= budget)
        for row, _ in rows:
            run.emit(protocol.BENCH_ROW, row)
            sys.stderr.write("envcheck-bench: row %s %s %s %s %s\n" % (
                shape["label"], row["backend"] + (" (repeat)" if row["repeat"] else ""),
                row.get("kernel") or "", row["status"],
                "%.4f ms" % row["kernel_ms"]["median"] if row.get("kernel_ms") else row.get("reason") or ""))
        del rows
        del operands, reference, inputs
        calls.clear()
        torch._dynamo.reset()
        torch.cuda.empty_cache()
    if uses_cutedsl and args.lookup_marker and result["kernel_lookup"] == "inductor":
        lookup.record_full_lookup(args.lookup_marker, result["versions"])
    result["ok"] = True
    run.phase("done")


def _plan_rows(torch, ctx, plan, shape, operands, calls, chosen):
    """(backend, prepare) for each row of a shape, in order, ending with the repeat of the first one measured.

    Through Inductor: each backend of the plan. With plan["library"]: cuBLAS, then the library's kernels called
    directly (library.bench_rows says which)."""
    if plan.get("library"):
        first = yield from library.bench_rows(torch, plan["library"], *operands[:2], shape, tuple(ctx["capability"]),
                                              ctx["dtype"], plan.get("top_k"), chosen)
    else:
        for backend in plan["backends"]:
            yield backend, (lambda backend=backend: inductor_gemm(
                torch, ctx, shape, backend["name"], backend["backends"], operands))
        first = plan["backends"][0]
    if calls.get(first["name"]) is not None:  # the same function again, after the others: run-to-run drift
        yield dict(first, repeat=True), (lambda: (calls[first["name"]], None, {}))


def _skipped(shape, backend, reason):
    row = dict.fromkeys(ROW_SCHEMA)
    row.update(shape=shape, backend=backend["name"], backends=backend["backends"], repeat=False, status="skipped",
               reason=reason)
    return row


def _skip(run, shape, backend, reason):
    run.emit(protocol.BENCH_ROW, _skipped(shape, backend, reason))


def main(argv=None):
    parser = argparse.ArgumentParser(description="envcheck's bench run (GEMMs through Inductor, per backend).")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--code-dir", default=None)
    parser.add_argument("--lookup-marker", default=None)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    run = protocol.Recorder(RESULT_SCHEMA, protocol.BENCH_PHASE, versions={}, candidates=[])

    def body():
        with open(args.plan, encoding="utf-8") as handle:
            plan = json.load(handle)
        bench(plan, args, run)

    protocol.run_guarded(body, run)
    run.emit(protocol.BENCH_RESULT, run.result)
    return 0 if run.result["ok"] else 1


if __name__ == "__main__":
    protocol.exit_now(main())  # skip torch's and the DSL's teardown; envcheck ends what this process leaves in its group
