"""envcheck: will TorchInductor's CuteDSL GEMM backend work here, and if not, what exactly is missing?"""

__version__ = "0.1.0"
