"""Inductor's kernel lookup (torch 2.11-2.13), seeded where that is proved safe: for the smoke and bench children.

The generated code finds its kernel with kernel_cache.get_kernel_by_name(), whose first call enumerates every kernel
cutlass_api can generate (130,816 at the pinned commit, nearly all SM100) in every new process: about 8 s of pure
Python on an H200 host. A run lets Inductor do that in full, and when it worked it writes a marker for this exact
stack (versions, and the size and time of every cutlass_api source file). A later run on the same stack and a GPU
below compute capability 10.0 then fills that lookup with cutlass_api.get_kernels(cc=cc) instead: the same
candidates there (every kernel that is not SM80 has min_cc 100 and is filtered out by Inductor anyway), found in a
fraction of a second. Any change to the stack, and --fresh, brings the full enumeration back.

It applies to cutlass_api alone (LIBRARY): torch >= 2.14 looks operators up per problem in cutlass.operators, and its
kernel_cache keeps a `_kernel_by_name_cache` that only a fallback fills, so envcheck passes the marker only to the
runs of a profile whose kernel library is this one (runner.lookup_arguments).

Standard library only at module level, Python 3.8 syntax (copied into the run folder as envcheck_lookup.py).
"""

from __future__ import annotations

import importlib
import json
import os

LIBRARY = "cutlass_api"  # the kernel library whose lookup this seeds: the module Inductor 2.11-2.13 enumerates


def stack_key(versions):
    """A digest of the stack the full kernel enumeration ran on: versions plus cutlass_api's source files."""
    import hashlib
    import importlib.util

    digest = hashlib.sha256(json.dumps(versions, sort_keys=True).encode("utf-8"))
    spec = importlib.util.find_spec(LIBRARY)
    for root in sorted((spec.submodule_search_locations or []) if spec else []):
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(f for f in files if f.endswith(".py")):
                path = os.path.join(folder, name)
                info = os.stat(path)
                digest.update(("%s:%d:%d;" % (os.path.relpath(path, root), info.st_size, info.st_mtime_ns)).encode())
    return digest.hexdigest()


def seed_kernel_lookup(capability, marker, versions):
    """'seeded' when Inductor's kernel lookup was filled for this GPU from a verified marker, else 'inductor'."""
    if tuple(capability) >= (10, 0):
        return "inductor"
    try:
        with open(marker, encoding="utf-8") as handle:
            known = json.load(handle)
        from torch._inductor.codegen.nv_universal_gemm import kernel_cache
    except Exception:  # no marker yet, or a torch without this module: Inductor's own way
        return "inductor"
    if known.get("key") != stack_key(versions) or getattr(kernel_cache, "_kernel_by_name_cache", 0) is not None:
        return "inductor"
    cc = capability[0] * 10 + capability[1]
    kernels = importlib.import_module(LIBRARY).get_kernels(cc=cc)
    kernel_cache._kernel_by_name_cache = {k.metadata.kernel_name: k for k in kernels}
    return "seeded"


def record_full_lookup(marker, versions):
    """After Inductor enumerated every kernel itself: the marker that lets a later run on this stack seed it."""
    try:
        from torch._inductor.codegen.nv_universal_gemm import kernel_cache

        kernels = getattr(kernel_cache, "_kernel_by_name_cache", None)
        if not kernels:
            return
        with open(marker, "w", encoding="utf-8") as handle:
            json.dump({"key": stack_key(versions), "kernels": len(kernels), "versions": versions}, handle)
    except Exception:  # a marker is an optimisation: never a reason to fail
        pass
