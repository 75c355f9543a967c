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

Which library a profile uses is data (the profile names the module); what differs between libraries is the calling
convention, which is code: one adapter per library API below, keyed by module name.
"""

from __future__ import annotations

__all__ = ["LibraryKernel", "UnknownLibrary", "LIBRARIES", "candidates", "inductor_target_sm", "library_version"]


class UnknownLibrary(ValueError):
    """A module name envcheck has no calling convention for."""


class LibraryKernel(object):
    """One kernel a library offers for a GEMM, bound to its arguments.

    name: the library's own name for it ("cutedsl.Sm90StaticPersistentGemmOperator_..."); compile() returns the
    compiled artifact (the library's JIT compile); run(artifact) launches it on the current torch stream, writing
    the caller's out tensor.
    """

    __slots__ = ("name", "_compile", "_run")

    def __init__(self, name, compile, run):
        self.name = name
        self._compile = compile
        self._run = run

    def compile(self):
        return self._compile()

    def run(self, compiled):
        return self._run(compiled)

    def __repr__(self):
        return "LibraryKernel(%r)" % (self.name,)


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
