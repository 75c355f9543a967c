"""The shared immutable values: the facts gather collects (facts.py), the findings judge makes and their remedies
(findings.py), the report render prints and the smoke result (report.py). Every value more than one floor of
envcheck uses lives here, and everything here is a frozen dataclass or a tuple of them; nothing here does I/O.

`from envcheck.model import X` is the one way to reach them; the modules inside import each other directly.
"""

from .facts import (
    GIVEN, SEEN, Checkout, Distribution, Driver, Facts, Failure, Gpu, Interpreter, ModuleLocation, Nvcc, PthImport,
    Toolkit, TorchBuild, canonical_name, capability_of, capability_text, gpus_given, is_distribution_name,
)
from .findings import Evidence, Finding, Remedy, Run, Status, Step
from .report import (
    Contradiction, EnvironmentRecord, Host, LoadedLibrary, ProcessRecord, ProfileChoice, Reconciliation, Report,
    SmokeResult, plain,
)

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
    "Contradiction",
    "Reconciliation",
    "LoadedLibrary",
    "ProcessRecord",
    "EnvironmentRecord",
    "canonical_name",
    "is_distribution_name",
    "capability_of",
    "capability_text",
    "gpus_given",
    "SEEN",
    "GIVEN",
    "plain",
]
