"""The bench run itself: compiles each GEMM through Inductor's max-autotune once per backend, in the target
interpreter, and times what Inductor produced.

Copied into the run directory as bench_child.py, beside smoke_child.py (the smoke child, imported for its numerics
tolerances, its reading of Inductor's generated code and its kernel-lookup seeding), and run by path; never imported
by envcheck itself except by tests of its pure helpers. So: standard library only at module level, Python 3.8 syntax.

    python bench_child.py --plan plan.json [--code-dir DIR] [--lookup-marker FILE]

plan.json: {"shapes": [{"m", "n", "k", "label"}], "dtype", "backends": [{"name", "backends"}], "budget_s",
"noise_target", "time_cap_s", "seed"}.

The protocol: `envcheck-bench: phase NAME +SECONDS` progress lines on stderr; on stdout one `ENVCHECK-BENCH-ROW
{json}` line per (shape, backend) as soon as it is measured (ROW_SCHEMA), so that a run killed by its timeout still
leaves what it measured; and one `ENVCHECK-BENCH-RESULT {json}` line at the end (RESULT_SCHEMA).

How a kernel is timed (kernel_time): the method of Triton's do_bench (triton/testing.py, Triton 3.x): L2 flushed
before every repetition by zeroing a 256 MB buffer, CUDA events around each repetition, the median of about 100 ms
of repetitions back to back. The warm-up is longer than do_bench's 25 ms where the GPU is the bottleneck: 250 ms of
flushed calls, because an H200 under a 4096^3 GEMM drops from its 1980 MHz boost clock to 1830-1890 MHz within
about 100 ms (nvidia-smi every 100 ms: throttle reason sw-power-cap), and a time taken before that is 7-11% faster
than one taken after (tests/data/bench/README.md): bench times the sustained state that a running model and
do_bench, called after it, see. When the host launches a call more slowly than the GPU runs it (a Python launch
path on a small GEMM), back-to-back events would time the host: then each batch of repetitions is queued behind a
GPU sleep kernel (torch.cuda._sleep) long enough that the host has queued the whole batch before the GPU starts it,
nvbench's "blocking kernel", and the batch is redone with a longer sleep when the sleep ended first. Which case
applies is decided by ten calls queued behind a sleep, the host's launch time measured where nothing can slow it.
Rounds repeat until the spread (interquartile range over the median) is under the noise target or the time cap is
reached. The host's cost shows separately, in call_ms (wall time per call, back to back) and host_ms (CPU time to
launch one call); do_bench_ms is triton.testing.do_bench on the same compiled function, right after, as a check.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time
import traceback
import types

ROW_PREFIX = "ENVCHECK-BENCH-ROW "
RESULT_PREFIX = "ENVCHECK-BENCH-RESULT "
PHASE_PREFIX = "envcheck-bench: phase "
PROTOCOL = 1
FLUSH_BYTES = 256 * 1000 * 1000  # do_bench's L2 flush buffer: 256 MB, several times any L2
WARMUP_MS = 25.0  # do_bench's default warm-up
SUSTAIN_MS = 250.0  # the warm-up of a GPU-bound call: an H200 under a 4096^3 GEMM leaves its boost clock in ~100 ms
MAX_WARMUP_REPS = 4000
PROBE_REPS = 10  # calls queued behind a sleep to measure the host's launch time
PROBE_SLEEP_MS = 20.0  # long enough for PROBE_REPS launches of 2 ms each
REP_MS = 100.0  # do_bench's default time of repetitions
MIN_REPS = 10
MAX_REPS = 2000
HOST_FAST = 0.5  # the host launches faster than the device runs: host time per repetition under half of device's
BATCH_MS = 20.0  # device time one batch behind a sleep kernel aims at (when the host is the slower one)
MAX_BATCH = 50  # reps queued behind one sleep: well under the launch queue
MAX_SLEEP_MS = 250.0

RESULT_SCHEMA = (
    "protocol",
    "ok",  # bool: the child ran to the end (rows say what each measurement proved)
    "phase",  # the last phase reached
    "gpu",  # {"name", "capability": [major, minor], "index", "uuid", "sm_count"}
    "versions",  # {"torch", "torch_cuda", "triton", ...}
    "method",  # how kernel times were taken: a sentence naming the anchor
    "sleep_cycles_per_ms",  # the calibration of the blocking kernel
    "kernel_lookup",  # "inductor" or "seeded" (see smoke_child)
    "timings",  # [[phase, seconds since start], ...]
    "error",  # null or {"type", "message", "traceback"}
)

ROW_SCHEMA = (
    "shape",  # {"m", "n", "k", "label"}
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
    "kernel_ms",  # {"median", "q25", "q75", "min", "spread", "reps", "mode", "rounds", "redone", "gaps", ...}
    "call_ms",  # wall time per call through the compiled function, calls back to back
    "call_spread",  # (max - min) / median of call_ms over its three rounds
    "host_ms",  # CPU time to launch one call
    "do_bench_ms",  # triton.testing.do_bench(median) on the same compiled function
    "window",  # [time.time() at the start, at the end] of the timed part: matched with NVML samples
)


def quantile(sorted_values, q):
    """Linear-interpolated quantile of an ascending list (numpy's default)."""
    if not sorted_values:
        raise ValueError("no values")
    position = (len(sorted_values) - 1) * q
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def summarize(samples):
    """Median, quartiles, minimum and spread ((q75 - q25) / median) of timing samples in ms."""
    values = sorted(samples)
    median = quantile(values, 0.5)
    q25, q75 = quantile(values, 0.25), quantile(values, 0.75)
    return {
        "median": median,
        "q25": q25,
        "q75": q75,
        "min": values[0],
        "spread": (q75 - q25) / median if median > 0 else None,
        "reps": len(values),
    }


_TRITON_KERNEL = re.compile(r"async_compile\.triton\(\s*['\"]([A-Za-z0-9_]+)['\"]")


def classify(code, backend, find_kernel):
    """(choice, kernel) from Inductor's generated code: which backend it calls, and the kernel it names.

    find_kernel is smoke_child.find_kernel: (CuteDSL call, cutedsl kernel name, [fallback labels]). A Triton GEMM is
    a template kernel (triton_tem_*); cuBLAS is extern_kernels.mm; Inductor's decompose-k choice is a batched GEMM
    (extern_kernels.bmm) and a Triton reduction."""
    call, kernel, fallbacks = find_kernel(code)
    if call is not None:
        return backend, kernel or call
    kernels = _TRITON_KERNEL.findall(code)
    templates = [name for name in kernels if "_tem_" in name]
    if templates:
        return "TRITON", templates[0]
    if "extern_kernels.mm(" in code:
        return "ATEN", "cuBLAS (extern_kernels.mm)"
    if "extern_kernels.bmm(" in code and kernels:  # Inductor's decompose-k: K split into a batch, then summed
        return "decompose-k", "extern_kernels.bmm + " + kernels[0]
    return "unknown", (fallbacks[0] if fallbacks else None)


class _Run:
    def __init__(self):
        self.start = time.perf_counter()
        self.result = dict.fromkeys(RESULT_SCHEMA)
        self.result.update(protocol=PROTOCOL, ok=False, phase="start", timings=[], versions={})
        self.calls = {}  # backend name -> the function its first row timed (for the repeat)

    def phase(self, name):
        now = round(time.perf_counter() - self.start, 3)
        self.result["phase"] = name
        self.result["timings"].append([name, now])
        sys.stderr.write("%s%s +%.3f\n" % (PHASE_PREFIX, name, now))
        sys.stderr.flush()

    def elapsed(self):
        return time.perf_counter() - self.start

    @staticmethod
    def emit(prefix, data):
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(1, ("\n" + prefix + json.dumps(data, default=str) + "\n").encode("utf-8"))  # one write


def _beside(name):
    """A module copied beside this script: smoke_child (its tolerances, its reading of generated code, its
    kernel-lookup seeding) or smoke_library (the library adapters, envcheck/smoke/library.py)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(name, os.path.join(here, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------------------------------------------
# Timing (torch passed in: these run only in the child)


def _events(torch, count):
    return [torch.cuda.Event(enable_timing=True) for _ in range(count)]


def calibrate_sleep(torch):
    """Cycles of torch.cuda._sleep per millisecond on this GPU now."""
    torch.cuda._sleep(1000000)
    start, end = _events(torch, 2)
    start.record()
    torch.cuda._sleep(20000000)
    end.record()
    end.synchronize()
    return 20000000 / max(start.elapsed_time(end), 1e-3)


def queue_batch(torch, call, flush, count, sleep_ms, cycles_per_ms):
    """count flushed calls queued behind a sleep kernel of sleep_ms, each between two CUDA events: (device ms of
    each call, host ms to queue one, whether the sleep was still running when the last was queued: then the GPU
    never waited for the host and the events time the device only)."""
    starts, ends = _events(torch, count), _events(torch, count)
    gate = torch.cuda.Event()
    torch.cuda._sleep(int(sleep_ms * cycles_per_ms))
    gate.record()
    queued = time.perf_counter()
    for i in range(count):
        flush.zero_()
        starts[i].record()
        call()
        ends[i].record()
    host_ms = (time.perf_counter() - queued) / count * 1e3
    ahead = not gate.query()
    ends[-1].synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)], host_ms, ahead


def kernel_time(torch, call, flush, cycles_per_ms, cap_s, target):
    """Device time of call() in ms, L2 flushed before each repetition (the method: see the module docstring).

    Five flushed calls give the device time of one repetition (do_bench's estimate); ten more, queued behind a sleep
    kernel, the host's time to launch one, measured where nothing else can slow it down. When the host launches
    faster than the device runs, the GPU is first kept busy for SUSTAIN_MS (it leaves its boost clock within about
    100 ms of full load: what a running model and do_bench's 100 ms see), then repetitions go back to back for REP_MS
    at a time, as under do_bench, behind a short sleep so that the host starts ahead. When the host is the slower
    one, batches of at most MAX_BATCH wait behind a sleep kernel until all of the batch is queued (nvbench's blocking
    kernel), so that the events time the device only; a batch whose sleep ended before the host finished queueing
    is redone with a longer sleep. Rounds repeat until the spread is under the target or cap_s is spent."""
    for _ in range(3):
        flush.zero_()
        call()
    torch.cuda.synchronize()
    start, end = _events(torch, 2)
    start.record()
    for _ in range(5):  # do_bench's estimate
        flush.zero_()
        call()
    end.record()
    end.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-3)
    _, host_per_rep, _ = queue_batch(torch, call, flush, PROBE_REPS, PROBE_SLEEP_MS, cycles_per_ms)
    host_fast = host_per_rep < HOST_FAST * estimate
    warmup_ms = SUSTAIN_MS if host_fast else WARMUP_MS
    warmup_reps = max(1, min(MAX_WARMUP_REPS, int(warmup_ms / estimate)))
    for _ in range(warmup_reps):
        flush.zero_()
        call()

    samples, rounds, redone, gaps = [], 0, 0, False
    factor = 2.0
    began = time.perf_counter()
    while True:
        if host_fast:
            count = max(MIN_REPS, min(MAX_REPS, int(REP_MS / estimate)))
            sleep_ms = 4 * host_per_rep + 0.1
        else:
            count = max(3, min(MAX_BATCH, int(BATCH_MS / estimate)))
            sleep_ms = min(MAX_SLEEP_MS, factor * count * host_per_rep + 0.5)
        batch, host_ms, ahead = queue_batch(torch, call, flush, count, sleep_ms, cycles_per_ms)
        rounds += 1
        if not host_fast:
            host_per_rep = max(host_per_rep, host_ms)
            if not ahead and sleep_ms < MAX_SLEEP_MS and redone < 4:
                redone += 1
                factor *= 2
                continue
            gaps = gaps or not ahead
        samples.extend(batch)
        summary = summarize(samples)
        if len(samples) >= MIN_REPS and summary["spread"] is not None and summary["spread"] <= target:
            break
        if time.perf_counter() - began >= cap_s:
            break
    summary.update(mode="back-to-back" if host_fast else "blocking", rounds=rounds, redone=redone, gaps=gaps,
                   host_launch_ms=host_per_rep, warmup_reps=warmup_reps, estimate_ms=estimate)
    return summary


def call_time(torch, call):
    """(wall ms per call, CPU ms to launch one call, spread of the wall time over the rounds): calls back to back,
    no flush, median of three rounds of about 20 ms each (sized by a first round of ten calls)."""
    count, walls, hosts = 10, [], []
    for round_ in range(4):
        torch.cuda.synchronize()
        began = time.perf_counter()
        for _ in range(count):
            call()
        queued = time.perf_counter()
        torch.cuda.synchronize()
        done = time.perf_counter()
        if round_ == 0:
            count = max(10, min(500, int(0.020 / max((done - began) / count, 1e-6))))
            continue
        walls.append((done - began) / count * 1e3)
        hosts.append((queued - began) / count * 1e3)
    walls.sort()
    return walls[1], sorted(hosts)[1], (walls[2] - walls[0]) / walls[1]


def device_kernels(torch, call):
    """The kernel names the CUDA profiler sees during one call (memory copies and sets left out)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    names = []
    for event in prof.events():
        if event.device_type == DeviceType.CUDA and "Memset" not in event.name and "Memcpy" not in event.name:
            if event.name not in names:
                names.append(event.name[:300])
    return names[:6]


# --------------------------------------------------------------------------------------------------------------
# One measurement


def _counters(torch):
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return {}
    return {k: int(v) for k, v in counters.get("inductor", {}).items() if "cache" in k or "autotune" in k}


def fresh_gemm(torch, tag):
    """out = x @ y as a function with a code object of its own: Dynamo caches compiled code per code object, so
    the backends of one shape must not share one (the second would reuse the first's)."""

    def gemm(x, y):
        return torch.mm(x, y)

    code = gemm.__code__.replace(co_name="gemm_" + "".join(c if c.isalnum() else "_" for c in tag))
    return types.FunctionType(code, gemm.__globals__, code.co_name, None, gemm.__closure__)


def compile_gemm(torch, backends, a, b):
    """(compiled function, its first output, Inductor's generated code, seconds, cache counters that moved).

    The code is caught the way torch._inductor.utils.run_and_get_code catches it (GraphLowering.save_output_code),
    without its torch._dynamo.reset(), which would drop the backends compiled before."""
    from unittest import mock

    from torch._inductor import config as inductor_config
    from torch._inductor.graph import GraphLowering

    settings = {"max_autotune": True, "max_autotune_gemm_backends": backends, "fx_graph_cache": True,
                "triton.cudagraphs": False}
    for optional, value in (("autotune_local_cache", True), ("autotune_fallback_to_aten", False)):
        if hasattr(inductor_config, optional):
            settings[optional] = value
    codes = []

    def save_output_code(code):
        codes.append(code)

    before = _counters(torch)
    began = time.perf_counter()
    with inductor_config.patch(settings), mock.patch.object(GraphLowering, "save_output_code", save_output_code):
        compiled = torch.compile(fresh_gemm(torch, backends), fullgraph=True, dynamic=False)
        out = compiled(a, b)
        torch.cuda.synchronize()
    seconds = time.perf_counter() - began
    after = _counters(torch)
    moved = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
    return compiled, out, "\n".join(codes), seconds, moved


def inductor_gemm(torch, smoke, ctx, shape, name, backends, a, b):
    """prepare() for a backend through Inductor: compile, keep the generated code, name the kernel."""
    compiled, out, code, seconds, moved = compile_gemm(torch, backends, a, b)
    fields = {"compile_s": round(seconds, 3), "cache": moved}
    if ctx["code_dir"]:
        stem = "%dx%dx%d-%s-%s" % (shape["m"], shape["n"], shape["k"], shape["label"], name)
        path = os.path.join(ctx["code_dir"], re.sub(r"[^A-Za-z0-9_.-]+", "_", stem) + ".py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(code)
        fields["code"] = path
    fields["choice"], fields["kernel"] = classify(code, ctx["cutedsl_backend"], smoke.find_kernel)
    return (lambda: compiled(a, b)), out, fields


def library_kernel(torch, kernel, library, out):
    """prepare() for one kernel of the library called directly: compile it, run it once into a poisoned output."""
    began = time.perf_counter()
    compiled = kernel.compile()
    seconds = time.perf_counter() - began
    out.fill_(float("nan"))  # an element the kernel does not write fails the check

    def call():
        kernel.run(compiled)
        return out

    call()
    torch.cuda.synchronize()
    return call, out, {"compile_s": round(seconds, 3), "choice": library, "kernel": kernel.name}


def measure(torch, smoke, ctx, shape, name, backends, inputs, prepare, repeat=False):
    """One row: prepare() (compile, or the function already measured, for a repeat), check, time.

    prepare() returns (call, the first output to check or None, row fields). Errors become the row's status.
    Returns (row, call or None)."""
    row = dict.fromkeys(ROW_SCHEMA)
    row.update(shape=shape, backend=name, backends=backends, repeat=repeat, status="error")
    a, b, reference, max_ref = inputs
    atol, rtol = smoke.TOLERANCES[ctx["dtype"]]
    call = None
    try:
        call, out, fields = prepare()
        row.update(fields)
        if out is not None:
            max_error = (out.float() - reference).abs().max().item()
            row.update(max_error=max_error, max_ref=max_ref, tolerance={"atol": atol, "rtol": rtol})
            del out
            if not (max_error == max_error and smoke.within_tolerance(max_error, max_ref, ctx["dtype"])):
                row["status"] = "wrong-result"
                row["reason"] = "max |out - ref| = %.4g exceeds atol %g + rtol %g * max|ref| (%.4g)" % (
                    max_error, atol, rtol, max_ref)
                return row, None
        row["window"] = [time.time(), None]
        row["kernel_ms"] = kernel_time(torch, call, ctx["flush"], ctx["cycles_per_ms"], ctx["time_cap_s"],
                                       ctx["noise_target"])
        if not repeat:
            if ctx["do_bench"] is not None:  # right after, so that the GPU is in the state it was timed in
                row["do_bench_ms"] = ctx["do_bench"](call, warmup=25, rep=100, return_mode="median")
            row["call_ms"], row["host_ms"], row["call_spread"] = call_time(torch, call)
        row["window"][1] = time.time()
        if not repeat and ctx["profile_kernels"]:
            try:
                row["device_kernels"] = device_kernels(torch, call)
            except Exception as exc:  # the profiler is a witness, not the measurement
                row["device_kernels"] = ["(profiler failed: %s)" % str(exc)[:200]]
        row["status"] = "ok"
    except Exception as exc:  # noqa: BLE001 - one backend's failure is that row's result, the run goes on
        row["reason"] = "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:500] if str(exc) else "")
        row["error"] = {"type": type(exc).__module__ + "." + type(exc).__qualname__, "message": str(exc)[:4000]}
        sys.stderr.write(traceback.format_exc())
        call = None
    return row, call


# --------------------------------------------------------------------------------------------------------------
# The run


def _versions(torch, smoke):
    found = smoke._versions() if hasattr(smoke, "_versions") else {}
    found["torch_cuda"] = torch.version.cuda
    return found


def bench(plan, args, run):
    result = run.result
    run.phase("import-torch")
    import torch

    smoke = _beside("smoke_child")
    result["versions"] = _versions(torch, smoke)
    run.phase("cuda")
    if not torch.cuda.is_available():
        # the smoke child's exception, so that smoke's table of failure signatures explains it
        raise smoke.SmokeNoCuda("torch %s (CUDA build %s) sees no CUDA device (torch.cuda.is_available() is False)"
                                % (torch.__version__, torch.version.cuda))
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
    if uses_cutedsl and args.lookup_marker and hasattr(smoke, "_seed_kernel_lookup"):
        run.phase("kernel-lookup")
        result["kernel_lookup"] = smoke._seed_kernel_lookup(tuple(result["gpu"]["capability"]), args.lookup_marker,
                                                            result["versions"])
    run.phase("calibrate")
    try:
        from triton.testing import do_bench
    except Exception:  # no Triton: no cross-check, the rest stands
        do_bench = None
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device=device)
    flush.zero_()  # loads the fill kernel (CUDA loads modules lazily): not inside the first row's estimate
    ctx = {
        "dtype": plan["dtype"],
        "cutedsl_backend": cutedsl,
        "code_dir": args.code_dir,
        "flush": flush,
        "cycles_per_ms": calibrate_sleep(torch),
        "time_cap_s": float(plan["time_cap_s"]),
        "noise_target": float(plan["noise_target"]),
        "do_bench": do_bench,
        "capability": result["gpu"]["capability"],
        # The CUDA profiler names the kernels that really ran (cuBLAS's too), but it may leave CUPTI hooked into
        # every later launch, which would inflate host_ms: opt-in, ENVCHECK_BENCH_PROFILE_KERNELS=1.
        "profile_kernels": os.environ.get("ENVCHECK_BENCH_PROFILE_KERNELS") == "1",
    }
    result["sleep_cycles_per_ms"] = round(ctx["cycles_per_ms"])
    result["method"] = METHOD
    dtype = getattr(torch, plan["dtype"])
    generator = torch.Generator(device=device).manual_seed(int(plan.get("seed", 0)))
    budget = float(plan["budget_s"])
    for index, shape in enumerate(plan["shapes"]):
        run.phase("shape %d/%d %s" % (index + 1, len(plan["shapes"]), shape["label"]))
        backends = list(plan["backends"])
        if run.elapsed() >= budget:
            for backend in backends:
                _skip(run, shape, backend, "the time budget (%g s) ran out before this shape" % budget)
            continue
        a = torch.randn(shape["m"], shape["k"], device=device, dtype=dtype, generator=generator)
        b = torch.randn(shape["k"], shape["n"], device=device, dtype=dtype, generator=generator)
        reference = a.float() @ b.float()
        inputs = (a, b, reference, reference.abs().max().item())
        for backend, prepare in _plan_rows(torch, smoke, ctx, plan, shape, a, b, run):
            if run.elapsed() >= budget:
                if not backend.get("repeat"):
                    _skip(run, shape, backend, "the time budget (%g s) ran out" % budget)
                continue
            row, call = measure(torch, smoke, ctx, shape, backend["name"], backend["backends"], inputs, prepare,
                                repeat=backend.get("repeat", False))
            if call is not None:
                run.calls.setdefault(backend["name"], call)
            run.emit(ROW_PREFIX, row)
            sys.stderr.write("envcheck-bench: row %s %s %s %s %s\n" % (
                shape["label"], backend["name"] + (" (repeat)" if backend.get("repeat") else ""),
                row.get("kernel") or "", row["status"],
                "%.4f ms" % row["kernel_ms"]["median"] if row.get("kernel_ms") else row.get("reason") or ""))
        del a, b, reference, inputs
        run.calls.clear()
        torch._dynamo.reset()
        torch.cuda.empty_cache()
    if uses_cutedsl and args.lookup_marker and result["kernel_lookup"] == "inductor" and hasattr(smoke, "_record_full_lookup"):
        smoke._record_full_lookup(args.lookup_marker, result["versions"])
    result["ok"] = True
    run.phase("done")


def _plan_rows(torch, smoke, ctx, plan, shape, a, b, run):
    """(backend, prepare) for each row of a shape, in order, ending with the repeat of the first one measured.

    Through Inductor: each backend of the plan. With plan["library"]: cuBLAS called directly (torch.mm into a
    buffer), then every candidate kernel the library offers for this GEMM (smoke_library.candidates)."""
    if plan.get("library"):
        library = plan["library"]
        out = torch.empty(shape["m"], shape["n"], device=a.device, dtype=a.dtype)
        cublas = {"name": "cuBLAS", "backends": "torch.mm"}

        def direct():
            call = lambda: torch.mm(a, b, out=out)  # noqa: E731
            call()
            return call, out, {"choice": "cuBLAS", "kernel": "torch.mm (cuBLAS)"}

        yield cublas, direct
        try:
            kernels = _beside("smoke_library").candidates(library, a, b, out, tuple(ctx["capability"]))
        except Exception as exc:  # noqa: BLE001 - the library itself failed: one row says so
            def failing(exc=exc):
                raise exc
            yield {"name": library, "backends": library}, failing
            kernels = []
        for kernel in kernels:
            yield {"name": library, "backends": library}, (lambda kernel=kernel: library_kernel(torch, kernel, library, out))
        first = cublas
    else:
        for backend in plan["backends"]:
            yield backend, (lambda backend=backend: inductor_gemm(
                torch, smoke, ctx, shape, backend["name"], backend["backends"], a, b))
        first = plan["backends"][0]
    if run.calls.get(first["name"]) is not None:  # the same function again, after the others: run-to-run drift
        yield dict(first, repeat=True), (lambda: (run.calls[first["name"]], None, {}))


def _skip(run, shape, backend, reason):
    row = dict.fromkeys(ROW_SCHEMA)
    row.update(shape=shape, backend=backend["name"], backends=backend["backends"], repeat=False, status="skipped",
               reason=reason)
    run.emit(ROW_PREFIX, row)


METHOD = (
    "triton.testing.do_bench's method (L2 flushed by zeroing 256 MB before each repetition, CUDA events, median of "
    "~100 ms of repetitions back to back) after a 250 ms warm-up into the GPU's sustained clock; where the host "
    "launches more slowly than the GPU runs, nvbench's blocking kernel (each batch queued behind torch.cuda._sleep, "
    "redone if the host fell behind); repeated until (q75-q25)/median is under the noise target or the time cap"
)


def main(argv=None):
    parser = argparse.ArgumentParser(description="envcheck's bench run (GEMMs through Inductor, per backend).")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--code-dir", default=None)
    parser.add_argument("--lookup-marker", default=None)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    run = _Run()
    try:
        with open(args.plan, encoding="utf-8") as handle:
            plan = json.load(handle)
        bench(plan, args, run)
    except BaseException as exc:  # noqa: BLE001 - every failure, Ctrl-C included, becomes the result line
        kind = type(exc)
        text = traceback.format_exc()
        sys.stderr.write(text)
        run.result["error"] = {
            "type": kind.__name__ if kind.__module__ in ("__main__", "builtins") else kind.__module__ + "." + kind.__qualname__,
            "message": str(exc)[:8000],
            "traceback": text[-12000:],
        }
    run.emit(RESULT_PREFIX, run.result)
    return 0 if run.result["ok"] else 1


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # skip torch's and the DSL's teardown; envcheck ends what this process leaves in its group
