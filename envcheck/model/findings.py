"""The verdicts: the status of one check, the finding judge makes, and the remedy that says what to do about it."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Optional

__all__ = ["Status", "Step", "Remedy", "Finding"]


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
