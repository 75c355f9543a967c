"""A stand-in for torch on a machine without a GPU (see ../README.md): only what envcheck's bench and smoke children
call."""

import contextlib
import os

from . import _dynamo, _inductor, cuda, version  # noqa: F401

__version__ = "2.11.0+fake"
bfloat16, float16, float32, int32, float8_e4m3fn = "bfloat16", "float16", "float32", "int32", "float8_e4m3fn"
# simulated TF/s per backend (the generated code names the backend); FAKE_TFLOPS=ATEN:785,... overrides
RATES = {"ATEN": 785.0, "TRITON": 713.0, "NVGEMM": 251.0}
for item in filter(None, os.environ.get("FAKE_TFLOPS", "").split(",")):
    name, value = item.split(":")
    RATES[name] = float(value)
# each call's device time spread evenly over +-N of it, per backend (its spread (q75 - q25) / median is then N):
# FAKE_NOISE=ATEN:0.06; a fixed sequence, the same every run
NOISE = {}
for item in filter(None, os.environ.get("FAKE_NOISE", "").split(",")):
    name, value = item.split(":")
    NOISE[name] = float(value)
_draw = [12345]
# host time to launch one call of a backend, in ms (real time: the host is this machine); FAKE_HOST_MS=NVGEMM:0.3
HOST_MS = {}
for item in filter(None, os.environ.get("FAKE_HOST_MS", "").split(",")):
    name, value = item.split(":")
    HOST_MS[name] = float(value)


class device:
    def __init__(self, kind, index=0):
        self.type, self.index = kind, index


class Generator:
    def __init__(self, device=None):
        pass

    def manual_seed(self, seed):
        return self


def _contiguous(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return tuple(strides)


class Tensor:
    """Every element holds `value`; any number of dimensions (a GEMM's operands are 2-D, a batched one's 3-D)."""

    device = "cuda"

    def __init__(self, *shape, value=1.0, strides=None, dtype="bfloat16"):
        self.shape, self.value, self.dtype = tuple(shape), value, dtype
        self.strides = strides or _contiguous(shape)  # row-major unless made by t() or transpose()

    def stride(self):
        return self.strides

    def t(self):
        """The transposed view: shape and strides swapped, as torch's."""
        return self.transpose(0, 1)

    def transpose(self, first, second):
        shape, strides = list(self.shape), list(self.strides)
        shape[first], shape[second] = shape[second], shape[first]
        strides[first], strides[second] = strides[second], strides[first]
        return Tensor(*shape, value=self.value, strides=tuple(strides), dtype=self.dtype)

    def fill_(self, value):
        self.value = value
        return self

    def float(self):
        return self.to(float32)

    def to(self, dtype):
        return Tensor(*self.shape, value=self.value, strides=self.strides, dtype=dtype)

    def __matmul__(self, other):
        return mm(self, other)

    def __add__(self, other):  # broadcast: the larger shape
        shape = max(self.shape, other.shape, key=len)
        return Tensor(*shape, value=self.value + other.value, dtype=self.dtype)

    def __sub__(self, other):
        return Tensor(*self.shape, value=self.value - other.value)

    def abs(self):
        return Tensor(*self.shape, value=abs(self.value))

    def max(self):
        return self

    def item(self):
        return self.value

    def zero_(self):
        cuda.advance(0.08)
        return self


def empty(*size, dtype=None, device=None):
    return Tensor(size[0], size[1] if len(size) > 1 else 1)


def randn(*shape, device=None, dtype=None, generator=None):
    return Tensor(*shape, dtype=dtype or bfloat16)


def ones(shape, device=None, dtype=None):
    return Tensor(*shape, dtype=dtype or float32)


_backend = ["ATEN"]


def gemm_time(a, b, tflops, noise=0.0, batch=1):
    _draw[0] = (_draw[0] * 1103515245 + 12345) % 2 ** 31
    jitter = 1.0 + noise * (2.0 * _draw[0] / 2 ** 31 - 1.0)
    cuda.advance(2.0 * batch * a.shape[-2] * a.shape[-1] * b.shape[-1] / (tflops * 1e12) * 1e3 * jitter)
    return a.value * b.value * a.shape[-1]


def mm(a, b, out=None):
    name = _backend[0] if out is None else "ATEN"
    value = gemm_time(a, b, RATES[name], NOISE.get(name, 0.0))
    if out is not None:
        out.value = value
        return out
    return Tensor(a.shape[0], b.shape[1], value=value, dtype=a.dtype)


def addmm(c, a, b):
    return mm(a, b) + c


def bmm(a, b):
    value = gemm_time(a, b, RATES[_backend[0]], NOISE.get(_backend[0], 0.0), batch=a.shape[0])
    return Tensor(a.shape[0], a.shape[1], b.shape[2], value=value, dtype=a.dtype)


def baddbmm(c, a, b):
    return bmm(a, b) + c


def _scaled_mm(a, b, scale_a, scale_b, out_dtype=None):
    out = mm(a, b)
    out.value *= scale_a.value * scale_b.value
    return out.to(out_dtype or a.dtype)


# The ops Inductor's NVGEMM has no kernel for on this simulated GPU (as on the H200 with torch 2.15.0 for addmm:
# ../shared/h200/2026-12-03-s5/d3-ops.log, tests/data/h200-s5/); FAKE_NO_NVGEMM=addmm,bmm overrides.
NO_NVGEMM = tuple(filter(None, os.environ.get("FAKE_NO_NVGEMM", "addmm,baddbmm").split(",")))
_OPS = ("baddbmm", "addmm", "bmm", "_scaled_mm", "mm")  # the longer names first: "addmm" is no "mm"


class InductorError(RuntimeError):
    pass


def _op_of(fn):
    """The GEMM op a compiled function calls (the name it looks up on torch)."""
    return next((op for op in _OPS if op in fn.__code__.co_names), "mm")


def _autotune_table(op, args, backends):
    """The autotuning table Inductor writes for a GEMM compiled with several backends (the lines of
    torch/_inductor/select_algorithm.py's log_results, as in tests/data/h200-s5/d3-ops.log): three NVGEMM choices
    where the op has them, a Triton one, cuBLAS's."""
    import sys

    names = backends.split(",")
    rows = []
    if "NVGEMM" in names and op not in NO_NVGEMM:
        rows += ["  nv_universal_gemm_%d 0.0218 ms 100.0%% nv_universal_gemm cutedsl.Sm90Fake_tile%d" % (i, i)
                 for i in (1, 2, 3)]
    if "TRITON" in names:
        rows.append("  triton_%s_4 0.0230 ms 94.8%% ACC_TYPE='tl.float32', BLOCK_K=64" % op.lstrip("_"))
    if "ATEN" in names:
        rows.append("  %s 0.0240 ms 90.8%% " % op.lstrip("_"))
    if len(rows) < 2:  # one choice: Inductor does not autotune
        return
    sizes = ", ".join("x".join(str(d) for d in a.shape) for a in args)
    sys.stderr.write("AUTOTUNE %s(%s)\nstrides: %s\ndtypes: %s\n%s\nSingleProcess AUTOTUNE benchmarking takes 1.0 "
                     "seconds and 0.0001 seconds precompiling for %d choices\n" % (
                         op.lstrip("_"), sizes, ", ".join(str(list(a.stride())) for a in args),
                         ", ".join("torch.%s" % a.dtype for a in args), "\n".join(rows), len(rows)))
    sys.stderr.flush()


def compile(fn, fullgraph=False, dynamic=None):
    from ._inductor import config
    from ._inductor.graph import GraphLowering
    from ._dynamo.utils import counters

    state = {}

    op = _op_of(fn)

    def compiled(*args):
        x, y = args[1:3] if op in ("addmm", "baddbmm") else args[:2]
        if not state:  # the first call compiles, under the settings in force then (as Inductor does)
            backends = config.max_autotune_gemm_backends
            offered = [name for name in backends.split(",") if name != "NVGEMM" or op not in NO_NVGEMM]
            if not offered:  # Inductor's error, as torch 2.15.0 raised it on the H200 for addmm (d3-ops.log)
                raise InductorError(
                    "LoweringException: NoValidChoicesError: No choices to select. Provided reason: No choices exist "
                    "for backend. please consider adding ATEN into max_autotune_gemm_backends config (defined in "
                    "torch/_inductor/config.py) to allow at least one choice. \n  target: aten.%s.default\n"
                    "  args[0]: TensorBox(StorageBox(...))" % op)
            if os.environ.get("FAKE_AUTOTUNE_TABLES") == "1":
                _autotune_table(op, args, backends)
            state["chosen"] = chosen = offered[-1]
            counters["inductor"]["fxgraph_cache_miss"] += 1
            # the kernel's layout letters (A, B, out) from the operands' strides, as cutlass names its kernels:
            # t for a row-major operand, n for a column-major one (nn.Linear's weight used as W.t())
            state["letters"] = letters = "t" + ("n" if y.stride()[-2] == 1 and y.shape[-1] > 1 else "t") + "t"
            code = {
                "ATEN": "extern_kernels.%s(arg0_1, arg1_1, out=buf0)\n" % op,
                "TRITON": "triton_tem_fused_%s_0 = async_compile.triton('triton_tem_fused_%s_0', '''\n'''\n" % (op, op),
            }.get(chosen, "nv_universal_gemm_fused_%s_0 = async_compile.nv_universal_gemm('nv_universal_gemm_fused_%s_0', "
                          "'''_GEMM_KERNEL_NAME = \"cutedsl.Sm80TensorOpGemmKernel_%s_fake\"''')\n" % (op, op, letters))
            GraphLowering.save_output_code(code)
            if "nv_universal_gemm" in code:  # the generated code's kernel lookup enumerates every kernel once
                from ._inductor.codegen.nv_universal_gemm import kernel_cache

                if kernel_cache._kernel_by_name_cache is None:
                    kernel_cache._kernel_by_name_cache = {"cutedsl.Sm80TensorOpGemmKernel_%s_fake" % letters: "kernel"}
        chosen = state["chosen"]
        _backend[0] = chosen
        if chosen in HOST_MS:
            import time

            until = time.perf_counter() + HOST_MS[chosen] / 1e3
            while time.perf_counter() < until:
                pass
        out = fn(*args)
        if os.environ.get("FAKE_WRONG") in ("1", state["letters"]):  # a miscompiled kernel (for this layout)
            out.value += 100.0
        return out

    return compiled
