"""A stand-in for torch on a machine without a GPU (see ../README.md): only what envcheck's bench and smoke children
call."""

import contextlib
import os

from . import _dynamo, _inductor, cuda, version  # noqa: F401

__version__ = "2.11.0+fake"
bfloat16, float16, float32, int32 = "bfloat16", "float16", "float32", "int32"
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


class Tensor:
    device, dtype = "cuda", "bfloat16"

    def __init__(self, rows, cols, value=1.0, strides=None):
        self.shape, self.value = (rows, cols), value
        self.strides = strides or (cols, 1)  # row-major unless made by t()

    def stride(self):
        return self.strides

    def t(self):
        """The transposed view: shape and strides swapped, as torch's."""
        return Tensor(self.shape[1], self.shape[0], self.value, (self.strides[1], self.strides[0]))

    def fill_(self, value):
        self.value = value
        return self

    def float(self):
        return Tensor(*self.shape, value=self.value, strides=self.strides)

    def __matmul__(self, other):
        return mm(self, other)

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


def randn(rows, cols, device=None, dtype=None, generator=None):
    return Tensor(rows, cols)


_backend = ["ATEN"]


def gemm_time(a, b, tflops, noise=0.0):
    _draw[0] = (_draw[0] * 1103515245 + 12345) % 2 ** 31
    jitter = 1.0 + noise * (2.0 * _draw[0] / 2 ** 31 - 1.0)
    cuda.advance(2.0 * a.shape[0] * a.shape[1] * b.shape[1] / (tflops * 1e12) * 1e3 * jitter)
    return a.value * b.value * a.shape[1]


def mm(a, b, out=None):
    name = _backend[0] if out is None else "ATEN"
    value = gemm_time(a, b, RATES[name], NOISE.get(name, 0.0))
    if out is not None:
        out.value = value
        return out
    return Tensor(a.shape[0], b.shape[1], value=value)


def compile(fn, fullgraph=False, dynamic=None):
    from ._inductor import config
    from ._inductor.graph import GraphLowering
    from ._dynamo.utils import counters

    state = {}

    def compiled(x, y):
        if not state:  # the first call compiles, under the settings in force then (as Inductor does)
            state["chosen"] = chosen = config.max_autotune_gemm_backends.split(",")[-1]
            counters["inductor"]["fxgraph_cache_miss"] += 1
            # the kernel's layout letters (A, B, out) from the operands' strides, as cutlass names its kernels:
            # t for a row-major operand, n for a column-major one (nn.Linear's weight used as W.t())
            state["letters"] = letters = "t" + ("n" if y.stride()[0] == 1 and y.shape[1] > 1 else "t") + "t"
            code = {
                "ATEN": "extern_kernels.mm(arg0_1, arg1_1, out=buf0)\n",
                "TRITON": "triton_tem_fused_mm_0 = async_compile.triton('triton_tem_fused_mm_0', '''\n'''\n",
            }.get(chosen, "nv_universal_gemm_fused_mm_0 = async_compile.nv_universal_gemm('nv_universal_gemm_fused_mm_0', "
                          "'''_GEMM_KERNEL_NAME = \"cutedsl.Sm80TensorOpGemmKernel_%s_fake\"''')\n" % letters)
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
        out = fn(x, y)
        if os.environ.get("FAKE_WRONG") in ("1", state["letters"]):  # a miscompiled kernel (for this layout)
            out.value += 100.0
        return out

    return compiled
