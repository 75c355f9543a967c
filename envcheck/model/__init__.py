"""The shared immutable values: the facts gather collects (facts.py), the findings judge makes and their remedies
(findings.py), the report render prints and the smoke result (report.py). Every value more than one floor of
envcheck uses lives here, and everything here is a frozen dataclass or a tuple of them; nothing here does I/O.

`from envcheck.model import X` is the one way to reach them; the modules inside import each other directly.
"""

from .facts import (
    Checkout, Distribution, Driver, Facts, Failure, Gpu, Interpreter, ModuleLocation, Nvcc, PthImport, Toolkit,
    TorchBuild, canonical_name, is_distribution_name,
)
from .findings import Finding, Remedy, Status, Step
from .report import Host, LoadedLibrary, ProcessRecord, ProfileChoice, Report, SmokeResult, plain

__all__ = [
    "Status",
    "Step",
    "Remedy",
    "Finding",
    "Failure",
    "Distribution",
    "ModuleLocation",
    "PthImport",
    "TorchBuild",
    "Interpreter",
    "Gpu",
    "Driver",
    "Nvcc",
    "Toolkit",
    "Checkout",
    "Facts",
    "ProfileChoice",
    "Host",
    "Report",
    "SmokeResult",
    "LoadedLibrary",
    "ProcessRecord",
    "canonical_name",
    "is_distribution_name",
    "plain",
]
