"""judge: pure functions (Facts, Policy) -> Finding, one per check, in a fixed order. No I/O here."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ..model import Facts, Finding, Run, Status
from ..profile import RECIPE, RUNTIME, Policy
from ._common import Context
from .cuda import cuda_driver, cuda_toolkit
from .cutedsl import cutedsl_importable, cutedsl_version
from .cutlass import cutlass_api_install, cutlass_checkout
from .gpu import gpu_capability
from .packages import nvgemm_deps, packages_consistency
from .paths import cuda_paths
from .python_torch import python_version, torch_cuda_build, torch_version
from .target import cutedsl_arch

__all__ = ["CHECKS", "CHECK_IDS", "judge", "Context"]

# The report order. An id, once shipped, never changes meaning.
CHECKS: tuple[tuple[str, Callable[[Context], Finding]], ...] = (
    ("python.version", python_version),
    ("torch.version", torch_version),
    ("torch.cuda-build", torch_cuda_build),
    ("cuda.driver", cuda_driver),
    ("cuda.toolkit", cuda_toolkit),
    ("cuda.paths", cuda_paths),
    ("gpu.compute-capability", gpu_capability),
    ("cutedsl.version", cutedsl_version),
    ("cutedsl.importable", cutedsl_importable),
    ("cutedsl.arch", cutedsl_arch),
    ("nvgemm.deps", nvgemm_deps),
    ("cutlass.checkout", cutlass_checkout),
    ("cutlass-api.install", cutlass_api_install),
    ("packages.consistency", packages_consistency),
)
CHECK_IDS = tuple(check_id for check_id, _ in CHECKS)


def judge(facts: Facts, policy: Policy, *, no_gpu: bool = False, strict: bool = False,
          runs: tuple[Run, ...] = ()) -> tuple[Finding, ...]:
    """Every check's finding. A check that raises is a bug in envcheck: it becomes an `error` finding, not a crash.

    strict: a deviation from a requirement whose basis is `recipe` fails instead of warning (and a failing finding
    says which basis failed it: `recipe` where it passes or warns without --strict). runs: real runs the user
    contributed (doctor --evidence), matched beside the profile's own evidence."""
    ctx = Context(facts, policy, no_gpu, strict, tuple(runs))
    lenient = replace(ctx, strict=False)
    findings = []
    for check_id, check in CHECKS:
        finding = _judged(check_id, check, ctx)
        if finding.status is Status.FAIL:  # its basis: recipe where only --strict fails it (the contract of `recipe`)
            failing = not strict or _judged(check_id, check, lenient).status is Status.FAIL
            finding = replace(finding, basis=RUNTIME if failing else RECIPE)
        findings.append(finding)
    return tuple(findings)


def _judged(check_id: str, check: Callable[[Context], Finding], ctx: Context) -> Finding:
    """One check's finding. A check that raises is a bug in envcheck: an `error` finding, not a crash."""
    try:
        return check(ctx)
    except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
        return Finding(check_id, check_id, Status.ERROR, f"envcheck could not judge this: {type(exc).__name__}: {exc}")
