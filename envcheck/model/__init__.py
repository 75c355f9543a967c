"""The shared immutable values: the facts gather collects (facts.py), the findings judge makes and their remedies
(findings.py), the report render prints (report.py), what a smoke run proved (smoke.py), and `plain`, the one way
any of them becomes JSON (plain.py). Every value more than one floor of envcheck uses lives here, and everything
here is a frozen dataclass or a tuple of them; nothing here does I/O.

`from envcheck.model import X` is the one way to reach them; the modules inside import each other directly. The
smoke run's values are imported the first time one is named (module __getattr__, PEP 562): creating their classes
was a measured part of doctor's start-up, and a doctor without --smoke names none of them.
"""

from .facts import (
    GIVEN, SEEN, Checkout, CudaFolder, Distribution, Driver, Facts, Failure, Gpu, Interpreter, ModuleLocation, Nvcc,
    PthImport, SearchPaths, SourceValue, System, Toolkit, TorchBuild, canonical_name, capability_of, capability_text,
    gpus_given, is_distribution_name, version_or_none,
)
from .findings import Evidence, Finding, Remedy, Run, Status, Step
from .plain import plain
from .report import Host, LogStack, ProfileChoice, Report

_SMOKE = ("SmokeResult", "GemmProof", "Contradiction", "Reconciliation", "LoadedLibrary", "ProcessRecord", "EnvironmentRecord",
          "CompileWay")

__all__ = [
    "Status",
    "Step",
    "Remedy",
    "Finding",
    "Run",
    "Evidence",
    "Failure",
    "Distribution",
    "ModuleLocation",
    "PthImport",
    "SourceValue",
    "TorchBuild",
    "Interpreter",
    "Gpu",
    "Driver",
    "Nvcc",
    "Toolkit",
    "Checkout",
    "Facts",
    "CudaFolder",
    "SearchPaths",
    "System",
    "ProfileChoice",
    "LogStack",
    "Host",
    "Report",
    "SmokeResult",
    "GemmProof",
    "Contradiction",
    "Reconciliation",
    "LoadedLibrary",
    "ProcessRecord",
    "EnvironmentRecord",
    "CompileWay",
    "canonical_name",
    "version_or_none",
    "is_distribution_name",
    "capability_of",
    "capability_text",
    "gpus_given",
    "SEEN",
    "GIVEN",
    "plain",
]


def __getattr__(name: str) -> object:
    if name in _SMOKE:
        from . import smoke

        return getattr(smoke, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
