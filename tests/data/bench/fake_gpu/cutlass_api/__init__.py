"""A stand-in for cutlass_api (see ../README.md): eight kernels for any GEMM, each with the tile and cluster shape
Inductor's heuristic matches on (metadata.design), at simulated rates; the last one writes nothing, so the poisoned
output shows it. The fake nvMatmulHeuristics (../nvMatmulHeuristics) ranks them."""

from . import arguments  # noqa: F401

# (name, TF/s or None for the kernel that writes nothing, tile (m, n, k), cluster (m, n))
KERNELS = (
    ("cutedsl.Sm80TensorOpGemmKernel_fake_tile128x128x32", 342.0, (128, 128, 32), (1, 1)),
    ("cutedsl.Sm80TensorOpGemmKernel_fake_tile64x64x32", 251.0, (64, 64, 32), (1, 1)),
    ("cutedsl.Sm80TensorOpGemmKernel_fake_tile128x256x32", 371.0, (128, 256, 32), (1, 1)),
    ("cutedsl.Sm80TensorOpGemmKernel_fake_tile256x128x32", 365.0, (256, 128, 32), (1, 1)),
    ("cutedsl.Sm80TensorOpGemmKernel_fake_tile64x128x32", 290.0, (64, 128, 32), (1, 1)),
    ("cutedsl.Sm80TensorOpGemmKernel_fake_tile128x64x32", 280.0, (128, 64, 32), (1, 1)),
    ("cutedsl.Sm80TensorOpGemmKernel_fake_tile32x32x32", 120.0, (32, 32, 32), (1, 1)),
    ("cutedsl.Sm80TensorOpGemmKernel_fake_broken", None, (256, 256, 32), (1, 1)),
)


class _Design:
    def __init__(self, tile, cluster):
        self.tile_shape, self.cluster_shape = tile, cluster


class _Metadata:
    def __init__(self, name, tile, cluster):
        self.kernel_name = name
        self.design = _Design(tile, cluster)


class _Kernel:
    def __init__(self, name, tflops, tile, cluster):
        self.metadata, self.tflops = _Metadata(name, tile, cluster), tflops

    def compile(self, args, cc=None):
        return ("compiled", self.metadata.kernel_name, cc)

    def run(self, args, compiled, stream=None, assume_supported_args=False):
        import torch

        value = torch.gemm_time(args.a, args.b, self.tflops or 100.0)
        if self.tflops is not None:
            args.out.value = value


def get_kernels(args=None, cc=None):
    return [_Kernel(*kernel) for kernel in KERNELS]
