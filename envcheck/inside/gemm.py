"""What the smoke and bench children both do with torch: the numerics check against the fp32 reference, the reading
of Inductor's generated code, the settings a GEMM is compiled under, and what they record of the stack.

Standard library only at module level, Python 3.8 syntax (copied into the run folder as envcheck_gemm.py); torch is
passed in, or imported inside a function.
"""

from __future__ import annotations

import re
import types

try:  # imported as envcheck.inside.gemm by envcheck's own process (tests)
    from . import protocol
except ImportError:  # run in its run folder, beside the envcheck_*.py copies (envcheck/runner.py)
    import envcheck_protocol as protocol

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
# What the result lines name of the stack, by distribution (the ones not installed are left out).
_DISTRIBUTIONS = ("torch", "triton", "nvidia-cutlass-dsl", "cutlass_api", "nvidia-cutlass-operators", "apache-tvm-ffi",
                  "nvidia-matmul-heuristics")


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


def compare(out, reference, max_ref, dtype):
    """(max |out - reference|, whether that is within dtype's tolerance): NaN is not."""
    max_error = (out.float() - reference).abs().max().item()
    return max_error, max_error == max_error and within_tolerance(max_error, max_ref, dtype)


# How B of out = a @ b is stored (a is always row-major, strides [K, 1]), by the names bench and smoke take:
# "linear": nn.Linear's weight as it is stored, W [N, K] row-major, used as b = W.t() (x @ W.T): strides [1, K],
# what Inductor hands the `_tnt_` operators (STACK.md section 9); "row-major": b [K, N] row-major, strides [N, 1],
# the `_ttt_` operators. A result line without a layout was row-major: every run before layouts were named.
LINEAR, ROW_MAJOR = "linear", "row-major"
LAYOUTS = (LINEAR, ROW_MAJOR)


def operands(torch, m, n, k, dtype, device, generator, layout=ROW_MAJOR):
    """The inputs of one GEMM: a (m x k) row-major and b (k x n) stored as `layout` says, random normal from the
    generator (the values are exact in dtype: the fp32 reference of a @ b is taken from these very tensors)."""
    a = torch.randn(m, k, device=device, dtype=dtype, generator=generator)
    if layout == LINEAR:
        b = torch.randn(n, k, device=device, dtype=dtype, generator=generator).t()
    elif layout == ROW_MAJOR:
        b = torch.randn(k, n, device=device, dtype=dtype, generator=generator)
    else:
        raise ValueError("layout %r: expected one of %s" % (layout, ", ".join(LAYOUTS)))
    return a, b


def layout_of(a_strides, b_strides, m, n, k):
    """The layout name of a 2-D GEMM a (m x k) @ b (k x n) from its operands' strides, or None where it is neither
    (a not row-major, or b in a layout bench does not build). Rows may be padded (a leading stride above the row's
    length); a dimension of size 1 may carry any stride."""
    def row_major(strides, rows, cols):
        return (cols == 1 or strides[1] == 1) and (rows == 1 or strides[0] >= cols)

    def column_major(strides, rows, cols):
        return (rows == 1 or strides[0] == 1) and (cols == 1 or strides[1] >= rows)

    if not row_major(a_strides, m, k):
        return None
    if row_major(b_strides, k, n):
        return ROW_MAJOR
    if column_major(b_strides, k, n):
        return LINEAR
    return None


def fresh_gemm(torch, tag):
    """out = x @ y as a function with a code object of its own: Dynamo caches compiled code per code object, so
    GEMMs compiled one after another (bench's backends of one shape, smoke's layouts) must not share one (the
    second would reuse the first's)."""
    return fresh_op(torch, tag)


# The GEMM ops bench times as themselves (what model_record.py records): out = a @ b, with addmm's bias (an
# epilogue: nn.Linear with a bias, lowered by Inductor to aten.addmm), bmm's batch, baddbmm's added input, and
# _scaled_mm's fp8 operands with their scales (a GPU of compute capability FP8_CAPABILITY or newer).
OPS = ("mm", "addmm", "bmm", "baddbmm", "_scaled_mm")
FP8 = "float8_e4m3fn"
FP8_CAPABILITY = (8, 9)
_ADDED = ("addmm", "baddbmm")  # the ops whose first argument is added to the product (its shape: "bias")
_BATCHED = ("bmm", "baddbmm")


def fresh_op(torch, tag, op="mm", out_dtype=None):
    """A function computing one GEMM op (OPS), with a code object of its own named after `tag` (see fresh_gemm):
    mm(x, y), addmm(bias, x, y), bmm(x, y), baddbmm(c, x, y), _scaled_mm(x, y, scale_a, scale_b) -> out_dtype."""

    def mm(x, y):
        return torch.mm(x, y)

    def addmm(c, x, y):
        return torch.addmm(c, x, y)

    def bmm(x, y):
        return torch.bmm(x, y)

    def baddbmm(c, x, y):
        return torch.baddbmm(c, x, y)

    def scaled_mm(x, y, scale_a, scale_b):
        return torch._scaled_mm(x, y, scale_a, scale_b, out_dtype=out_dtype)

    function = {"mm": mm, "addmm": addmm, "bmm": bmm, "baddbmm": baddbmm, "_scaled_mm": scaled_mm}[op]
    code = function.__code__.replace(co_name="gemm_" + "".join(c if c.isalnum() else "_" for c in tag))
    return types.FunctionType(code, function.__globals__, code.co_name, None, function.__closure__)


def unfit(shape, capability):
    """Why this GPU cannot run a plan's shape as its op (None: it can): _scaled_mm needs fp8."""
    if shape.get("op") == "_scaled_mm" and tuple(capability) < FP8_CAPABILITY:
        return "_scaled_mm needs fp8, which compute capability %d.%d does not have (%d.%d or newer)" % (
            tuple(capability) + FP8_CAPABILITY)
    return None


def op_operands(torch, shape, dtype, device, generator):
    """(the op's arguments, the fp32 reference of its output) for a plan's shape {"op", "m", "n", "k", "layout",
    "batch", "bias"}: a row-major, b stored as the layout says (per batch for bmm and baddbmm), the added input of the
    bias's shape; _scaled_mm's a and b in fp8 (b column-major, as it requires) with scales of 1, its output in
    `dtype`. Random normal values, exact in their dtype: the reference is taken from these very tensors."""
    op = shape.get("op") or "mm"
    m, n, k = shape["m"], shape["n"], shape["k"]
    layout = shape.get("layout") or ROW_MAJOR
    if op in _BATCHED:
        batch = int(shape.get("batch") or 1)
        a = torch.randn(batch, m, k, device=device, dtype=dtype, generator=generator)
        if layout == LINEAR:
            b = torch.randn(batch, n, k, device=device, dtype=dtype, generator=generator).transpose(1, 2)
        elif layout == ROW_MAJOR:
            b = torch.randn(batch, k, n, device=device, dtype=dtype, generator=generator)
        else:
            raise ValueError("layout %r: expected one of %s" % (layout, ", ".join(LAYOUTS)))
        product = torch.bmm(a.float(), b.float())
    elif op == "_scaled_mm":
        if layout != LINEAR:
            raise ValueError("_scaled_mm takes b column-major (layout %s), not %s" % (LINEAR, layout))
        fp8 = getattr(torch, FP8)
        a, b = (t.to(fp8) for t in operands(torch, m, n, k, dtype, device, generator, LINEAR))
        scale = torch.ones((), device=device, dtype=torch.float32)
        return (a, b, scale, scale), a.float() @ b.float()
    else:
        a, b = operands(torch, m, n, k, dtype, device, generator, layout)
        product = a.float() @ b.float()
    if op in _ADDED:
        added = torch.randn(*(shape.get("bias") or [n]), device=device, dtype=dtype, generator=generator)
        return (added, a, b), product + added.float()
    return (a, b), product


def shape_text(shape):
    """"16x4096x4096", "addmm 16x6144x2048", "bmm 8x256x4096x2048" (the batch first) for a plan's shape."""
    op = shape.get("op") or "mm"
    dims = "%dx%dx%d" % (shape["m"], shape["n"], shape["k"])
    if op in _BATCHED:
        dims = "%dx%s" % (int(shape.get("batch") or 1), dims)
    return dims if op == "mm" else "%s %s" % (op, dims)


# What computes a GEMM in Inductor's generated code, counted where the wrapper's call() runs it (after
# async_compile.wait): a CuteDSL kernel defined by async_compile.nv_universal_gemm and run; a Triton template kernel
# (triton_tem_*) run; cuBLAS through extern_kernels (or a fallback call of the ATen op).
_NVGEMM_DEF = re.compile(r"^(\w+) = async_compile\.nv_universal_gemm\(", re.M)
_TEMPLATE_DEF = re.compile(r"^(\w+) = async_compile\.triton\(\s*['\"]\w*_tem_\w*['\"]", re.M)
_ATEN_CALL = re.compile(r"\b(?:extern_kernels|aten)\.(?:mm|addmm|bmm|baddbmm|_scaled_mm)(?:\.default|\.out)?\(")


def gemm_calls(code):
    """{"NVGEMM": n, "ATEN": n, "TRITON": n}: how many GEMMs each backend runs in one call of Inductor's generated
    code (the modules of one compile, joined). A kernel defined once and run twice counts twice."""
    found = {"NVGEMM": 0, "ATEN": 0, "TRITON": 0}
    for module in re.split(r"(?=^# AOT ID:)", code, flags=re.M):
        head, waited, body = module.partition("async_compile.wait(")
        body = body if waited else head
        for name, pattern in (("NVGEMM", _NVGEMM_DEF), ("TRITON", _TEMPLATE_DEF)):
            for kernel in set(pattern.findall(head)):
                found[name] += len(re.findall(r"\b%s\.run\(" % re.escape(kernel), body))
        found["ATEN"] += len(_ATEN_CALL.findall(body))
    return found


def versions(torch):
    """{distribution: version} of the stack as installed, and torch's CUDA build as "torch_cuda"."""
    from importlib import metadata

    found = {}
    for name in _DISTRIBUTIONS:
        try:
            found[name] = metadata.version(name)
        except Exception:  # not installed: leave it out
            pass
    found["torch_cuda"] = torch.version.cuda
    return found


def require_cuda(torch):
    """SmokeNoCuda when torch sees no CUDA device (the one message smoke's and bench's causes explain)."""
    if not torch.cuda.is_available():
        raise protocol.SmokeNoCuda(
            "torch %s (CUDA build %s) sees no CUDA device (torch.cuda.is_available() is False)"
            % (torch.__version__, torch.version.cuda)
        )


def counters():
    """Inductor's cache and autotune counters: {"fxgraph_cache_hit": 1, ...} ({} where torch has none)."""
    try:
        from torch._dynamo.utils import counters as found
    except Exception:
        return {}
    return {key: int(value) for key, value in found.get("inductor", {}).items() if "cache" in key or "autotune" in key}


def inductor_settings(backends, **more):
    """Inductor's settings for a GEMM through max-autotune on `backends`, its caches on, plus `more`; the knobs not
    every torch has are set where it has them."""
    from torch._inductor import config as inductor_config

    settings = {"max_autotune": True, "max_autotune_gemm_backends": backends, "fx_graph_cache": True}
    settings.update(more)
    # autotune_num_choices_displayed None: Inductor's table lists every choice it timed (10 by default), so that
    # envcheck counts every NVGEMM candidate left (envcheck/causes/candidates.py reads the log).
    for optional, value in (("autotune_local_cache", True), ("autotune_fallback_to_aten", False),
                            ("autotune_num_choices_displayed", None)):
        if hasattr(inductor_config, optional):  # not every torch has every knob
            settings[optional] = value
    return settings
