"""A stand-in for cutlass_api (see ../README.md): three kernels for any GEMM, at simulated rates; the last one
writes nothing, so the poisoned output shows it."""

from . import arguments  # noqa: F401

KERNELS = (("cutedsl.Sm80TensorOpGemmKernel_fake_tile128x128x32", 342.0), ("cutedsl.Sm80TensorOpGemmKernel_fake_tile64x64x32", 251.0),
           ("cutedsl.Sm80TensorOpGemmKernel_fake_broken", None))


class _Metadata:
    def __init__(self, name):
        self.kernel_name = name


class _Kernel:
    def __init__(self, name, tflops):
        self.metadata, self.tflops = _Metadata(name), tflops

    def compile(self, args, cc=None):
        return ("compiled", self.metadata.kernel_name, cc)

    def run(self, args, compiled, stream=None, assume_supported_args=False):
        import torch

        value = torch.gemm_time(args.a, args.b, self.tflops or 100.0)
        if self.tflops is not None:
            args.out.value = value


def get_kernels(args=None, cc=None):
    return [_Kernel(name, rate) for name, rate in KERNELS]
