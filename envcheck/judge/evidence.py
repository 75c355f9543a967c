"""The recorded runs of the combination a verdict is for: what a finding says beyond the sources it rests on.

"This exact combination" is: the compute capability judged for (the first GPU's: Inductor builds for device 0), the
torch minor (2.14), the DSL's version (4.8.1) and the kernel library's version (nvidia-cutlass-operators 0.3.0,
cutlass_api 0.1.0a1), all equal; a check adds what its own verdict depends on (the DSL build the process loads for
the cu12-only finding, apache-tvm-ffi's version for nvgemm.deps, a variable of the environment for cutedsl.arch:
`variable_field(name)`, "unset" where neither the environment nor the run set it). A field the environment lacks (no
GPU known, the DSL not installed) matches no run.
"""

from __future__ import annotations

import re
from typing import Optional

from packaging.version import InvalidVersion, Version

from ..model import Evidence, Run, capability_text
from ._common import Context, version_or_none

__all__ = ["CAPABILITY", "DSL_BUILD", "UNSET", "recorded", "dsl_build", "variable_field"]

CAPABILITY, DSL_BUILD, TORCH = "compute capability", "DSL build", "torch"
UNSET = "unset"
_VARIABLE = "env "  # the prefix of a field that is a variable of the environment
_FLAVOUR = re.compile(r"-libs-cu(\d+)$")


def variable_field(name: str) -> str:
    """The evidence field of an environment variable: 'env CUTE_DSL_ARCH'."""
    return f"{_VARIABLE}{name}"


def recorded(ctx: Context, *extra: str) -> Evidence:
    """The combination judged (the common fields, then `extra`: DSL_BUILD or distribution names) and every recorded
    run of it."""
    fields = [CAPABILITY, TORCH, ctx.policy.cutedsl.name]
    library = ctx.policy.library_distribution
    if library:
        fields.append(library)
    fields += [f for f in extra if f not in fields]
    here = tuple((field, _here(ctx, field)) for field in fields)
    known = all(value is not None for _, value in here)
    runs = tuple(run for run in ctx.runs if known and all(_of(run, field) == value for field, value in here))
    return Evidence(tuple((field, value if value is not None else _unknown(field)) for field, value in here), runs)


def _unknown(field: str) -> str:
    return "unknown (no GPU seen; --gpu-capability names one)" if field == CAPABILITY else "not installed"


def _minor(text: Optional[str]) -> Optional[str]:
    version = version_or_none(text)
    return ".".join(map(str, version.release[:2])) if version is not None else None


def _release(text: Optional[str]) -> Optional[str]:
    try:
        return Version(text).public if text else None
    except InvalidVersion:
        return text


def _of(run: Run, field: str) -> Optional[str]:
    if field.startswith(_VARIABLE):
        return run.variable(field[len(_VARIABLE):]) or UNSET
    if field == CAPABILITY:
        return capability_text(run.capability)
    if field == DSL_BUILD:
        return run.dsl_flavour
    if field == TORCH:
        return _minor(run.version(TORCH))
    return _release(run.version(field))


def _here(ctx: Context, field: str) -> Optional[str]:
    interpreter = ctx.interpreter
    if field.startswith(_VARIABLE):
        return ctx.facts.variable(field[len(_VARIABLE):]) or UNSET
    if field == CAPABILITY:
        return capability_text(ctx.capabilities[0]) if ctx.capabilities else None
    if interpreter is None:
        return None
    if field == DSL_BUILD:
        return dsl_build(ctx)
    if field == TORCH:
        return _minor(interpreter.torch_version)
    dist = interpreter.dist(field)
    return _release(dist.version) if dist is not None else None


def dsl_build(ctx: Context) -> Optional[str]:
    """The DSL build a process would load here: of its -libs-cuN flavours (4.6 and later; 4.4/4.5's -libs-cu13
    overwrites the base's build), the newest whose CUDA major the driver supports, the newest installed when no
    driver is seen (nvidia-cutlass-dsl 4.8.1 _mlir_libs/__init__.py:155-173); "" for a DSL of one build; None
    without the DSL."""
    interpreter, name = ctx.interpreter, ctx.policy.cutedsl.name
    if interpreter is None or interpreter.dist(name) is None:
        return None
    majors = sorted(int(m[1]) for d in interpreter.distributions
                    if d.name.startswith(f"{name}-libs-") and (m := _FLAVOUR.search(d.name)))
    driver = version_or_none(ctx.driver.cuda) if ctx.driver is not None else None
    usable = [m for m in majors if driver is None or m <= driver.major]
    return f"cu{usable[-1]}" if usable else ""
