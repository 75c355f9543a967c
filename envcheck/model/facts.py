"""The shared immutable values: the facts gather collects, the findings judge makes, the report render prints.

Everything here is a frozen dataclass or a tuple of them; nothing here does I/O.
"""

from __future__ import annotations

import enum
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Union

if TYPE_CHECKING:
    from .smoke.forensics import ProcessRecord

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
    "Report",
    "SmokeResult",
    "canonical_name",
    "plain",
]


def canonical_name(name: str) -> str:
    """PEP 503 normalised distribution name: 'Cutlass_API' -> 'cutlass-api'."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


class Status(str, enum.Enum):
    """The outcome of one check. Order matters: worse outcomes compare greater."""

    PASS = "pass"
    SKIP = "skip"
    WARN = "warn"
    FAIL = "fail"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return list(Status).index(self)

    @property
    def is_problem(self) -> bool:
        """Fails the run: a required check failed, or could not be made."""
        return self in (Status.FAIL, Status.ERROR)


# --------------------------------------------------------------------------------------------------------------
# Remedies


@dataclass(frozen=True)
class Step:
    """One action `envcheck fix` can take, as data.

    kind is one of:
      pip-install      args: requirement strings, installed together in the target interpreter; index_url: the
                       package index they must come from ("" = the user's default); reinstall: replace what is
                       installed even if pip thinks it satisfies the requirement (a CPU build of torch, say)
      pip-uninstall    args: distribution names
      cutlass-fetch    args: () — fetch the policy's CUTLASS commit (shallow, sparse) into the checkout dir
      cutlass-install  args: () — editable install of cutlass_api from the checkout
      toolkit-install  args: () — the policy's CUDA toolkit in a prefix of its own, plus an env file
    """

    kind: str
    args: tuple[str, ...] = ()
    why: str = ""
    index_url: str = ""
    reinstall: bool = False


@dataclass(frozen=True)
class Remedy:
    """What to do about a finding: a sentence, the exact commands, and the steps the fixer can take itself.

    steps empty means the fixer cannot help (a driver, an interpreter); then text and commands say what a person
    must do.
    """

    text: str
    commands: tuple[tuple[str, ...], ...] = ()
    steps: tuple[Step, ...] = ()
    link: Optional[str] = None

    @property
    def automatic(self) -> bool:
        return bool(self.steps)

    def with_command(self, old: tuple[str, ...], new: tuple[str, ...]) -> "Remedy":
        """The same remedy with each command equal to `old` replaced by `new` (doctor's flags added to the judges'
        `envcheck fix --python X`)."""
        return dataclasses.replace(self, commands=tuple(new if command == old else command for command in self.commands))


@dataclass(frozen=True)
class Finding:
    """The verdict of one check. id is stable: once shipped it never changes meaning."""

    id: str
    title: str
    status: Status
    found: str
    wanted: str = ""
    why: str = ""
    remedy: Optional[Remedy] = None
    details: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------------------------
# Facts


@dataclass(frozen=True)
class Failure:
    """A gatherer that could not finish: the fact is that we do not know, and why."""

    source: str
    message: str


@dataclass(frozen=True)
class Distribution:
    """One installed distribution as importlib.metadata sees it in the target interpreter."""

    name: str  # canonical
    version: str
    location: str  # the directory holding its .dist-info
    requires: tuple[str, ...] = ()
    editable: Optional[str] = None  # the source directory of an editable install (direct_url.json)
    url: Optional[str] = None  # direct_url.json url for a non-editable direct install (vcs, file)
    commit: Optional[str] = None  # direct_url.json vcs_info.commit_id
    installer: Optional[str] = None


@dataclass(frozen=True)
class ModuleLocation:
    """Where `import NAME` would load from, found with PathFinder over the target's computed path (nothing imported)."""

    name: str
    origin: Optional[str]  # None: not importable
    error: Optional[str] = None


@dataclass(frozen=True)
class PthImport:
    """An import line of a .pth file: Python runs it at every start; envcheck's probe reads it and never runs it."""

    file: str
    line: str
    added: tuple[str, ...] = ()  # the folders its sys.path.insert/append puts on the path, read as data


@dataclass(frozen=True)
class TorchBuild:
    """torch/version.py read as text."""

    version: str
    cuda: Optional[str]  # None: a CPU-only build
    git_version: Optional[str] = None
    path: str = ""


@dataclass(frozen=True)
class Interpreter:
    executable: str
    version: tuple[int, int, int]
    implementation: str
    prefix: str
    base_prefix: str
    site_dirs: tuple[str, ...]  # directories whose .pth files Python processes
    sys_path: tuple[str, ...]
    distributions: tuple[Distribution, ...]
    modules: tuple[ModuleLocation, ...]
    torch: Optional[TorchBuild]
    markers: tuple[tuple[str, str], ...]  # PEP 508 environment markers of the target
    pythonpath: str = ""
    pythonhome: str = ""  # recorded as text: the probe runs isolated, so the target is described without it
    pth_imports: tuple[PthImport, ...] = ()

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))

    @property
    def in_venv(self) -> bool:
        return self.prefix != self.base_prefix

    def installed(self, name: str) -> tuple[Distribution, ...]:
        """Every copy of a distribution on the path (there can be more than one)."""
        key = canonical_name(name)
        return tuple(d for d in self.distributions if d.name == key)

    def dist(self, name: str) -> Optional[Distribution]:
        """The copy Python would use: the first on sys.path."""
        found = self.installed(name)
        return found[0] if found else None

    def module(self, name: str) -> Optional[ModuleLocation]:
        return next((m for m in self.modules if m.name == name), None)


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    capability: tuple[int, int]
    memory_bytes: Optional[int] = None
    mig: Optional[bool] = None  # None: not supported or unknown
    uuid: Optional[str] = None  # "GPU-..." (NVML), for telling nodes' GPUs apart in a fleet

    @property
    def capability_text(self) -> str:
        return f"{self.capability[0]}.{self.capability[1]}"


@dataclass(frozen=True)
class Driver:
    """The NVIDIA driver as NVML reports it."""

    version: str  # "580.159.04"
    cuda: str  # the highest CUDA it supports, "13.0"
    gpus: tuple[Gpu, ...] = ()


@dataclass(frozen=True)
class Nvcc:
    """One nvcc found on this host."""

    path: str
    source: str  # "CUDA_HOME", "PATH", "nvidia-cuda-nvcc wheel", ...
    version: Optional[str] = None  # "13.0.88"; None when --version failed
    error: Optional[str] = None


@dataclass(frozen=True)
class Toolkit:
    """Every nvcc found, in the order a build would pick them (the first is the one used)."""

    candidates: tuple[Nvcc, ...] = ()

    @property
    def chosen(self) -> Optional[Nvcc]:
        return next((n for n in self.candidates if n.version), None)


@dataclass(frozen=True)
class Checkout:
    """A directory offered as the CUTLASS checkout, read with GitPython."""

    path: str
    source: str  # how it was found: "--cutlass-dir", "CUTLASS_DIR", "editable cutlass_api", ...
    exists: bool = True
    is_repo: bool = False
    commit: Optional[str] = None
    branch: Optional[str] = None  # None: detached
    dirty_files: tuple[str, ...] = ()
    shallow: bool = False
    sparse: bool = False
    remotes: tuple[str, ...] = ()
    has_package: bool = False  # python/cutlass_api/pyproject.toml present in the work tree
    is_cutlass: bool = False  # the repository is CUTLASS (known files or remote), not some other repository
    package_version: Optional[str] = None
    error: Optional[str] = None

    @property
    def dirty(self) -> bool:
        return bool(self.dirty_files)


@dataclass(frozen=True)
class Facts:
    """Everything gather found. Each part is its facts, or a Failure saying why it could not be had."""

    interpreter: Union[Interpreter, Failure]
    driver: Union[Driver, Failure]
    toolkit: Union[Toolkit, Failure]
    checkout: Union[Checkout, Failure, None]  # None: no checkout was offered or found (or the profile needs none)
    cuda_visible_devices: Optional[str] = None  # the target's CUDA_VISIBLE_DEVICES; None: not set
    timings: tuple[tuple[str, float], ...] = field(default=(), compare=False)


# --------------------------------------------------------------------------------------------------------------
# Report


def plain(value: Any) -> Any:
    """Dataclasses, enums and tuples as JSON-ready values: the one way a model value becomes JSON."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in ("automatic",):
            if hasattr(type(value), name):
                data[name] = getattr(value, name)
        return data
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class SmokeResult:
    """What one smoke run proved, or why it could not."""

    status: Status
    summary: str  # one line for people
    kernel: Optional[str] = None  # "cutedsl.Sm80TensorOpGemmKernel_..."
    call: Optional[str] = None  # "nv_universal_gemm_fused_mm_<hash>"
    gpu: Optional[str] = None  # "NVIDIA H200 (9.0)"
    compile_s: Optional[float] = None  # first call of the compiled GEMM (compile, autotune, kernel JIT, run)
    run_s: Optional[float] = None  # one call afterwards (median, CUDA events)
    elapsed_s: Optional[float] = None  # the whole child, interpreter start-up included
    max_error: Optional[float] = None
    tolerance: Optional[str] = None
    cause: Optional[str] = None  # a sentence: why it failed or was skipped
    cause_id: Optional[str] = None  # stable: "cutlass-api-missing", "timeout", ...
    remedy: Optional[Remedy] = None
    evidence: str = ""  # the output line that shows the cause
    log: Optional[str] = None
    backends: str = ""
    shape: str = ""
    warm: Optional[bool] = None  # Inductor's FX graph cache answered (a warm run)
    kernel_lookup: Optional[str] = None  # "inductor" (full cutlass_api enumeration) or "seeded" (see child.py)
    library: Optional[str] = None  # --library: the kernel library called directly (no Inductor), e.g. "cutlass.operators"
    tried: tuple[tuple[str, str], ...] = ()  # --library: (kernel, error) of the candidates that failed first
    cache_dir: Optional[str] = None
    versions: tuple[tuple[str, str], ...] = ()
    timings: tuple[tuple[str, float], ...] = field(default=(), compare=False)  # child phases, seconds from start
    process: Optional["ProcessRecord"] = None  # what the child really loaded (envcheck/smoke/forensics.py)

    @property
    def exit_code(self) -> int:
        """0 when the GEMM ran and was proved; a skip proved nothing, so it is 1 like a failure."""
        return 1 if self.status.is_problem or self.status is Status.SKIP else 0

    def to_dict(self) -> dict:
        return {
            "status": self.status.value,
            "summary": self.summary,
            "kernel": self.kernel,
            "call": self.call,
            "gpu": self.gpu,
            "backends": self.backends,
            "shape": self.shape,
            "timings": {"compile_s": self.compile_s, "run_s": self.run_s, "elapsed_s": self.elapsed_s,
                        "phases": [list(p) for p in self.timings]},
            "numerics": {"max_error": self.max_error, "tolerance": self.tolerance},
            "cause": None if self.cause_id is None else {"id": self.cause_id, "text": self.cause, "evidence": self.evidence},
            "remedy": plain(self.remedy),
            "cache": {"dir": self.cache_dir, "warm": self.warm, "kernel_lookup": self.kernel_lookup},
            "versions": dict(self.versions),
            "process": self.process.to_dict() if self.process is not None else None,
            "library": None if self.library is None else {
                "module": self.library, "tried": [{"kernel": k, "error": e} for k, e in self.tried]},
            "log": self.log,
        }


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

    def __post_init__(self) -> None:
        if isinstance(self.profile, str):
            object.__setattr__(self, "profile", ProfileChoice(self.profile, "", ""))

    @property
    def policy_source(self) -> str:
        """The file (or built-in profile) the verdicts came from: a parent pyproject.toml is no secret."""
        return self.profile.source

    @property
    def worst(self) -> Status:
        statuses = [f.status for f in self.findings]
        if self.smoke is not None:
            statuses.append(self.smoke.status)
        return max(statuses, key=lambda s: s.rank, default=Status.PASS)

    @property
    def exit_code(self) -> int:
        """0: every required check passed (warnings allowed); 1: a required check failed, or a smoke that was asked
        for proved nothing (skipped)."""
        return 1 if self.worst.is_problem or (self.smoke is not None and self.smoke.exit_code) else 0

    def finding(self, check_id: str) -> Optional[Finding]:
        return next((f for f in self.findings if f.id == check_id), None)
