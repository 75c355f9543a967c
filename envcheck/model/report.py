"""What one run made of the facts: the Report doctor renders, which profile judged it and the host it ran on (a
smoke run's values are in smoke.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from .facts import Facts
from .findings import Finding, Status

if TYPE_CHECKING:
    from .smoke import Reconciliation, SmokeResult

__all__ = ["ProfileChoice", "LogStack", "Host", "Report"]


@dataclass(frozen=True)
class ProfileChoice:
    """Which profile a report was judged by, and why (the table header, JSON `profile`, markdown)."""

    id: str
    reason: str
    source: str  # the policy file (or built-in profile) it came from
    verified: bool = True  # False: the installed torch is newer than the profile was verified with

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True)
class LogStack:
    """What a log says of the stack that wrote it, for explain to choose a profile and an interpreter by when no
    target is named (causes/logstack.py reads it, profile/select.py weighs it)."""

    torch: Optional[str] = None  # the first torch version the log names ("torch 2.15.0", "torch-2.14.1+cu130")
    libraries: tuple[str, ...] = ()  # the kernel-library modules its lines go through (as modules or as paths)
    nvgemm: bool = False  # its lines go through Inductor's NVGEMM code (torch/_inductor/codegen/nv_universal_gemm)
    inductor: bool = False  # its lines go through Inductor at all (torch/_inductor/)
    frames: tuple[str, ...] = ()  # Inductor's frames it shows, "torch/_inductor/graph.py:1595 call_function"
    dsl_folders: tuple[str, ...] = ()  # where its `cutlass` is: "dsl_packages" (DSL >= 4.6), "python_packages" (< 4.6)
    python: Optional[str] = None  # the Python version its interpreter's site directory names ("3.12")
    interpreter: Optional[str] = None  # that interpreter ("/home/u/.venv/bin/python"), None where no path names one
    site: Optional[str] = None  # the site directory it was read from ("/home/u/.venv/lib/python3.12/site-packages")


@dataclass(frozen=True)
class Host:
    """The machine a report was made on, for a fleet: its name (or a hash of it), driver and GPUs."""

    hostname: str  # "sha256:..." with --anonymize
    driver: Optional[str] = None
    driver_cuda: Optional[str] = None
    gpus: tuple[str, ...] = ()  # names, in index order
    gpu_uuids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    """One run of doctor: the findings in a fixed order, and what they were made from."""

    profile: ProfileChoice  # a bare id is taken as a profile chosen for no stated reason
    target: str
    findings: tuple[Finding, ...]
    facts: Optional[Facts] = None
    smoke: Optional[SmokeResult] = None  # when --smoke ran
    host: Optional[Host] = None  # doctor fills it in for the JSON a fleet reads
    bench: Optional[dict] = None  # the last `envcheck bench --json` saved under the cache, when --bench asked for it
    reconciliation: Optional[Reconciliation] = None  # doctor --smoke: the checks held against the run
    envcheck_environment: bool = False  # the target is the environment envcheck itself runs in (doctor sets it)

    def __post_init__(self) -> None:
        if isinstance(self.profile, str):
            object.__setattr__(self, "profile", ProfileChoice(self.profile, "", ""))

    @property
    def envcheck_itself(self) -> bool:
        """The target is envcheck's own environment and holds no torch: rarely the one a torch.compile job runs in,
        which doctor then says first."""
        torch = getattr(self.facts.interpreter, "torch_version", None) if self.facts is not None else None
        return self.envcheck_environment and torch is None

    @property
    def policy_source(self) -> str:
        """The file (or built-in profile) the verdicts came from: a parent pyproject.toml is no secret."""
        return self.profile.source

    def _outcomes(self, skipped: bool) -> list[Status]:
        """Every check's status (a skipped one only where `skipped`), then the smoke's where it ran."""
        statuses = [f.status for f in self.findings if skipped or f.status is not Status.SKIP]
        return statuses + ([self.smoke.status] if self.smoke is not None else [])

    @property
    def worst(self) -> Status:
        return max(self._outcomes(skipped=True), key=lambda s: s.rank, default=Status.PASS)

    @property
    def status(self) -> Status:
        """The run's outcome in one word: the worst of its checks, where a check skipped (no GPU to ask, say) counts
        in the summary, not as the outcome, unless every check was skipped; a smoke that was asked for counts as it
        ended."""
        return max(self._outcomes(skipped=False), key=lambda s: s.rank,
                   default=Status.SKIP if self.findings else Status.PASS)

    @property
    def exit_code(self) -> int:
        """0: every required check passed (warnings allowed); 1: a required check failed, or a smoke that was asked
        for proved nothing (skipped)."""
        return 1 if self.worst.is_problem or (self.smoke is not None and self.smoke.exit_code) else 0

    def finding(self, check_id: str) -> Optional[Finding]:
        return next((f for f in self.findings if f.id == check_id), None)
