"""envcheck: will TorchInductor's CuteDSL GEMM backend work here, and if not, what exactly is missing?"""

__version__ = "0.1.0"
# The name on the package index. `envcheck` there is an unrelated project; the command and the import package
# stay `envcheck`.
DISTRIBUTION = "nvgemm-envcheck"
