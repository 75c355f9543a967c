"""A profile's kernel library called directly, without Inductor: the kernels it offers for one GEMM, each as a
LibraryKernel that can be compiled and run.

Child side: this file runs in the target interpreter, copied beside the smoke child (as smoke_library.py) and
imported by it, and by bench's child the same way. So: standard library only at module level, Python 3.8 syntax;
the library itself is imported inside candidates(), with the tensors already made by the caller.

    kernels = candidates("cutlass.operators", a, b, out, (9, 0))
    artifact = kernels[0].compile()
    kernels[0].run(artifact)   # out now holds a @ b

Each library is called the way Inductor calls it (torch 2.11-2.13 for cutlass_api, torch >= 2.14 for
cutlass.operators; torch/_inductor/codegen/nv_universal_gemm/ in their wheels):
  cutlass_api        GemmArguments(a, b, out, accumulator_type=torch.float32); get_kernels(args, cc=90);
                     kernel.compile(args); kernel.run(args, artifact, stream=..., assume_supported_args=True)
  cutlass.operators  GemmArguments(a, b, out, accumulator_type=torch.float32); get_operators(args, target_sm="90a");
                     op.compile(args, target_sm="90a"); op.run(args, artifact, stream=..., assume_supported_args=True)
The target is the one Inductor asks for (inductor_target_sm): the device's own, "90a" on compute capability 9.0
(operators compiled for "80" do not run on a 9.0 device). Below 9.0 cutlass.operators refuses it, as it refuses
Inductor ("TargetSm 80a is invalid. ArchConditional targets must be Hopper (sm90) or newer"): the error is the run's
result, explained by envcheck's table of known failures (causes/signatures.toml), never worked around here.

rank() orders the candidates the way Inductor chooses which NVGEMM kernels to autotune (filter_kernels in
torch/_inductor/template_heuristics/nv_universal_gemm.py on 2.11, heuristics/template/ on 2.14): nvMatmulHeuristics'
performance model (CUTLASS3 target, PERF_MODEL_BASED_AUTO_TUNING) proposes tile and cluster shapes, restricted by a
validity callback to those the library has, best estimated runtime first; a kernel matches on (tile m, tile n,
[tile k on cutlass_api], cluster m, cluster n), as there.

Which library a profile uses is data (the profile names the module); what differs between libraries is the calling
convention, which is code: one adapter per library API below, keyed by module name.
"""

from __future__ import annotations

import time

__all__ = ["LibraryKernel", "UnknownLibrary", "LIBRARIES", "candidates", "inductor_target_sm", "library_version",
           "rank", "heuristic_order", "bench_rows", "HEURISTICS"]

HEURISTICS = "nvMatmulHeuristics"
_PRECISION = {"bfloat16": "TST", "float16": "HSH"}  # Inductor's {A}{accumulator}{out}, cuBLAS letters (T: bf16)
# The layout of a and b as nvMatmulHeuristics names it, by bench's layout name (a is row-major in both): "T" for a
# row-major operand, "N" for a column-major one, as Inductor maps them (torch 2.14.1
# _inductor/heuristics/template/nv_universal_gemm.py:283-289, _get_layout_enum)
_LAYOUT = {"row-major": "TT_ROW_MAJOR", "linear": "TN_ROW_MAJOR"}


class UnknownLibrary(ValueError):
    """A module name envcheck has no calling convention for."""


class LibraryKernel(object):
    """One kernel a library offers for a GEMM, bound to its arguments.

    name: the library's own name for it ("cutedsl.Sm90StaticPersistentGemmOperator_..."); compile() returns the
    compiled artifact (the library's JIT compile); run(artifact) launches it on the current torch stream, writing
    the caller's out tensor.
    """

    __slots__ = ("name", "key", "_compile", "_run")

    def __init__(self, name, compile, run, key=None):
        self.name = name
        self.key = key  # what the heuristic matches it on: (tile m, tile n, [tile k,] cluster m, cluster n), or None
        self._compile = compile
        self._run = run

    def compile(self):
        return self._compile()

    def run(self, compiled):
        return self._run(compiled)

    def __repr__(self):
        return "LibraryKernel(%r)" % (self.name,)


def _design_key(metadata, with_tile_k):
    """A kernel's tile and cluster shape as Inductor's heuristic matches it, or None where it has no design."""
    design = getattr(metadata, "design", None)
    tile, cluster = getattr(design, "tile_shape", None), getattr(design, "cluster_shape", None)
    if tile is None or cluster is None or len(tile) < (3 if with_tile_k else 2) or len(cluster) < 2:
        return None
    return tuple(tile[:3] if with_tile_k else tile[:2]) + tuple(cluster[:2])


def _stream():
    import torch

    return torch.cuda.current_stream()


def _cutlass_api(a, b, out, cc):
    import torch
    import cutlass_api

    args = cutlass_api.arguments.GemmArguments(a, b, out, accumulator_type=torch.float32)
    number = cc[0] * 10 + cc[1]

    def bind(kernel):
        return LibraryKernel(
            kernel.metadata.kernel_name,
            lambda: kernel.compile(args),  # as Inductor does: cutlass_api compiles for the current device
            lambda compiled: kernel.run(args, compiled, stream=_stream(), assume_supported_args=True),
            _design_key(kernel.metadata, True),  # torch 2.11's key has the tile's k
        )

    return [bind(k) for k in cutlass_api.get_kernels(args, cc=number)]


def inductor_target_sm(cc):
    """The target_sm torch >= 2.14 hands cutlass.operators for compute capability cc (major, minor): f"{cc}a" of
    cc = major * 10 + minor (torch 2.14.1 codegen/nv_universal_gemm/kernel_cache.py:197, :354, :473; 2.15.0 :222,
    :461, :655; the capability from get_cuda_arch(), cuda_env.py)."""
    return "%da" % (cc[0] * 10 + cc[1])


def _operators(a, b, out, cc):
    import torch
    import cutlass.operators as operators

    args = operators.GemmArguments(a, b, out, accumulator_type=torch.float32)
    target = inductor_target_sm(cc)

    def bind(op):
        return LibraryKernel(
            op.metadata.operator_name,
            lambda: op.compile(args, target_sm=target),
            lambda compiled: op.run(args, compiled, stream=_stream(), assume_supported_args=True),
            _design_key(op.metadata, False),  # torch 2.14's: tile k means different things to the two
        )

    return [bind(op) for op in operators.get_operators(args, target_sm=target)]


# module name -> (the adapter, the distribution whose version names the library in results)
LIBRARIES = {
    "cutlass_api": (_cutlass_api, "cutlass_api"),
    "cutlass.operators": (_operators, "nvidia-cutlass-operators"),
}


def candidates(library, a, b, out, cc):
    """The kernels `library` offers for out = a @ b on compute capability cc (major, minor), in its own order.

    Raises UnknownLibrary for a module envcheck has no calling convention for; whatever the library raises
    (ImportError, its own errors) passes through to the caller, which reports it.
    """
    if library not in LIBRARIES:
        raise UnknownLibrary(
            "envcheck knows how to call %s, not %r" % (" and ".join(sorted(LIBRARIES)), library)
        )
    adapter = LIBRARIES[library][0]
    return adapter(a, b, out, tuple(cc))


def library_version(library):
    """The installed version of the library's distribution, or None."""
    from importlib import metadata

    entry = LIBRARIES.get(library)
    if entry is None:
        return None
    try:
        return metadata.version(entry[1])
    except Exception:  # not installed under that name (an editable checkout without metadata)
        return None


def heuristic_order(keys, m, n, k, dtype, gpu=None, layout="row-major"):
    """The distinct keys among `keys` in nvMatmulHeuristics' order for out(m x n) = a(m x k) @ b(k x n), a row-major
    and b stored as `layout` says (bench's names: "row-major", "linear"), best estimated runtime first:
    [(key, seconds)]. Keys it does not propose are left out. gpu: one of
    nvMatmulHeuristics.NvMatmulHeuristicsNvidiaGpu by name ("H200_SXM") to rank for a GPU that is not here; None
    for the one present. ImportError when nvMatmulHeuristics is not installed."""
    import nvMatmulHeuristics as nvmmh

    valid = set(keys)
    width = max(len(key) for key in valid) if valid else 4
    hardware = getattr(nvmmh.NvMatmulHeuristicsNvidiaGpu, gpu) if gpu else None
    handle = nvmmh.NvMatmulHeuristicsInterfaceEx(
        backend=nvmmh.NvMatmulHeuristicsTarget.CUTLASS3,
        flags=nvmmh.NvMatmulHeuristicsFlags.PERF_MODEL_BASED_AUTO_TUNING,
        load_discovery_implicitly=True, gpu=hardware)
    backend = handle.createBackend(nvmmh.NvMatmulHeuristicsTarget.CUTLASS3)

    def as_key(cta, cluster):
        return tuple(cta[:3] if width == 5 else cta[:2]) + tuple(cluster[:2])

    def validity(kernel_ptr, problem_ptr):
        kernel = kernel_ptr.contents
        return 1 if as_key(kernel.cta, kernel.cluster) in valid else 0

    precision = _PRECISION.get(dtype, "HSH")
    matmul_layout = nvmmh.NvMatmulHeuristicsMatmulLayout[_LAYOUT[layout]]
    try:
        handle.setBackendCallbackProperty(
            backend, nvmmh.NvMatmulHeuristicsBackendPropertyCallbackKind.KERNEL_ADDITIONAL_VALIDITY_CHECK, validity)
        handle.loadInternalDiscoverySet(matmul_layout, precision=precision)
        problem = handle.makeNvMatmulHeuristicsProblem(m, n, k, matmul_layout, batch_size=1)
        # it proposes a shape once per stage count and split: ask for enough that every valid shape can come
        proposed = handle.getEx(problem, 8 * len(valid), backend, precision=precision) or []
    finally:
        handle.destroyBackend(backend)
    order = []
    for config in proposed:
        kernel = config["kernel"]
        key = as_key((kernel.cta_tile_m, kernel.cta_tile_n, kernel.cta_tile_k), (kernel.cluster_m, kernel.cluster_n))
        if key in valid and key not in [seen for seen, _ in order]:
            order.append((key, float(config["runtime"])))
    return order


def rank(kernels, m, n, k, dtype, count, layout="row-major"):
    """(the kernels to time, a sentence saying how they were chosen): nvMatmulHeuristics' best `count` of them
    (every kernel of a proposed shape, in the heuristic's order, then cut to `count`), or, where the heuristic is
    not installed, fails or proposes none of them, all of them in the library's order, with the reason. count None:
    all of them, unranked (--all-candidates)."""
    kernels = list(kernels)
    if count is None:
        return kernels, "every candidate (%d), as asked" % len(kernels)
    keyed = [kernel for kernel in kernels if kernel.key is not None]
    if not keyed:
        return kernels, "every candidate (%d): none names its tile and cluster shape" % len(kernels)
    try:
        order = heuristic_order([kernel.key for kernel in keyed], m, n, k, dtype, layout=layout)
    except ImportError:
        return kernels, "every candidate (%d): %s is not installed" % (len(kernels), HEURISTICS)
    except Exception as exc:  # noqa: BLE001 - the heuristic failing is no reason to time nothing
        return kernels, "every candidate (%d): %s failed (%s: %s)" % (
            len(kernels), HEURISTICS, type(exc).__name__, str(exc)[:200])
    ranked = [kernel for key, _ in order for kernel in keyed if kernel.key == key]
    if not ranked:
        return kernels, "every candidate (%d): %s proposed none of them" % (len(kernels), HEURISTICS)
    return ranked[:count], "%s' top %d of %d candidates" % (HEURISTICS, min(count, len(ranked)), len(kernels))


def _kernel_row(torch, kernel, module, out):
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
    return call, out, {"compile_s": round(seconds, 3), "choice": module, "kernel": kernel.name}


def bench_rows(torch, module, a, b, shape, cc, dtype, top_k, chosen):
    """The bench child's rows of one shape with the library called directly, as (backend, prepare): cuBLAS
    (torch.mm into a buffer), then the candidate kernels the library offers for this GEMM (candidates),
    nvMatmulHeuristics' best top_k of them (rank; every one where top_k is None or the heuristic is missing); how
    they were chosen goes into `chosen`, once per distinct sentence. Returns the row the repeat times again."""
    out = torch.empty(shape["m"], shape["n"], device=a.device, dtype=a.dtype)
    cublas = {"name": "cuBLAS", "backends": "torch.mm"}

    def direct():
        call = lambda: torch.mm(a, b, out=out)  # noqa: E731
        call()
        return call, out, {"choice": "cuBLAS", "kernel": "torch.mm (cuBLAS)"}

    yield cublas, direct
    try:
        kernels = candidates(module, a, b, out, cc)
        kernels, how = rank(kernels, shape["m"], shape["n"], shape["k"], dtype, top_k, shape.get("layout") or "row-major")
        if how not in chosen:
            chosen.append(how)
    except Exception as exc:  # noqa: BLE001 - the library itself failed: one row says so
        def failing(exc=exc):
            raise exc
        yield {"name": module, "backends": module}, failing
        kernels = []
    for kernel in kernels:
        yield {"name": module, "backends": module}, (lambda kernel=kernel: _kernel_row(torch, kernel, module, out))
    return cublas
