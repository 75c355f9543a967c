"""The verdicts: the status of one check, the finding judge makes, the remedy that says what to do about it, and the
real runs a verdict can point to (a profile's recorded evidence)."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Optional

__all__ = ["Status", "Step", "Remedy", "Run", "Evidence", "Finding"]


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
    # Variables a person must set in the environment the job starts with, (name, value): fix lists them under
    # "Needs you" (a warning's too), a generated Dockerfile sets them as ENV.
    environment: tuple[tuple[str, str], ...] = ()

    @property
    def automatic(self) -> bool:
        return bool(self.steps)

    def with_command(self, old: tuple[str, ...], new: tuple[str, ...]) -> "Remedy":
        """The same remedy with each command equal to `old` replaced by `new` (doctor's flags added to the judges'
        `envcheck fix --python X`)."""
        return dataclasses.replace(self, commands=tuple(new if command == old else command for command in self.commands))


# --------------------------------------------------------------------------------------------------------------
# Evidence: real runs


@dataclass(frozen=True)
class Run:
    """One real run of the stack on a GPU, recorded as evidence for a profile (envcheck/profile/evidence/): what ran,
    on what, how it ended, and where its capture is."""

    gpu: str  # "NVIDIA H200"
    capability: tuple[int, int]
    what: str  # "smoke" (a GEMM through Inductor), "smoke --library", "bench", "bench --library"
    outcome: Status  # pass, or fail; warn: it ran, with a reservation (a bench that measured, then advised against)
    date: str  # "2026-12-01"
    source: str  # the capture: a file, or a log and the experiment in it
    driver: Optional[str] = None  # "580.159.04"; None: the capture does not say
    versions: tuple[tuple[str, str], ...] = ()  # (canonical distribution name, version): torch, the DSL, the library
    dsl_flavour: str = ""  # the DSL build the process loaded: "cu13", "cu12"; "": one build only, or not recorded
    library: str = ""  # the kernel library's module: "cutlass.operators", "cutlass_api"
    kernel: str = ""  # the kernel that ran
    simulated: str = ""  # what was made to read otherwise than the hardware is, e.g. the capability
    note: str = ""  # how it ended, in a sentence (a failure's message)
    environment: tuple[tuple[str, str], ...] = ()  # variables the run had set that verdicts read: CUTE_DSL_ARCH
    # Where the record of a built-in run is, as a user can open it: the evidence file shipped in the package and the
    # entry ("envcheck/profile/evidence/<id>.toml runs[3]"); "" for a run read from a result file (its source).
    recorded_in: str = field(default="", compare=False)

    def version(self, name: str) -> Optional[str]:
        return next((v for n, v in self.versions if n == name), None)

    def variable(self, name: str) -> Optional[str]:
        return next((v for n, v in self.environment if n == name), None)

    @property
    def said(self) -> str:
        """'ran on an NVIDIA H200, driver 580, 2026-12-01' (or 'failed on ...'), for a finding's details."""
        verb = {Status.PASS: "ran", Status.WARN: "ran", Status.FAIL: "failed"}.get(self.outcome, self.outcome.value)
        article = "an" if self.gpu[:1].upper() in "AEIOU" or self.gpu.startswith("NVIDIA") else "a"  # an NVIDIA H200
        where = f"{article} {self.gpu}" + (f" ({self.simulated})" if self.simulated else "")
        driver = f", driver {self.driver.split('.')[0]}" if self.driver else ""
        return f"{self.what} {verb} on {where}{driver}, {self.date}" + (f": {self.note}" if self.note else "")


@dataclass(frozen=True)
class Evidence:
    """The recorded runs of the combination a verdict was made for: the fields that must match (compute capability,
    torch minor, the DSL's version, the kernel library's version, and what the check itself depends on), and every
    run that matches them all (none: the verdict rests on sources only)."""

    combination: tuple[tuple[str, str], ...]  # (field, value): ("compute capability", "9.0"), ("torch", "2.14"), ...
    runs: tuple[Run, ...] = ()

    @property
    def said(self) -> str:
        fields = ", ".join(f"{name} {value or '(one only)'}" for name, value in self.combination)
        if not self.runs:
            return f"no recorded run of this combination ({fields}): the verdict rests on the sources"
        runs = "; ".join(f"{r.said} ({r.recorded_in or r.source})" for r in self.runs)
        return f"recorded runs of this combination ({fields}): {runs}"


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
    evidence: Optional[Evidence] = None  # the recorded runs of what was judged, where the verdict rests on them
    # Of a failing verdict: "runtime" where it fails without --strict (the profile says the backend breaks), "recipe"
    # where only --strict makes it fail (published, not shown necessary; kept where a passing smoke overruled it to a
    # warning, smoke/reconcile.py). Of a warning that rests on runs or on sources alone (cutedsl.arch): "run" (a
    # recorded run showed it) or "sources" (read, not run). "" otherwise.
    basis: str = ""
