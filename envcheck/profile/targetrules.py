"""The requirements [compile-target] is read into, frozen (schema.py says what each key means, target.py reads
them): the DSL's compile-target variable and the values it takes, one row per compute capability, one row per torch
range of the NVGEMM choices a GEMM gets and the threshold from which torch sends them to its compile workers, and the
settings that raise those choices."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..model import Status

__all__ = ["TargetRow", "TorchChoices", "MoreChoices", "CompileTarget"]


@dataclass(frozen=True)
class TargetRow:
    """One compute capability of [compile-target]: the GPU's own target, and the verdict where a process compiles for
    the DSL's fallback instead (no target set, in a process that cannot read the GPU)."""

    capability: tuple[int, int]
    target: str  # what the DSL detects in a process that sees this GPU: "sm_90a"
    status: Status  # pass: the fallback is this GPU's own target; warn or fail: what the fallback costs here
    basis: str  # RUN: a recorded run showed it; SOURCES: read from the wheels, not run (unverified)
    text: str
    source: str = ""


@dataclass(frozen=True)
class TorchChoices:
    """One torch range of [compile-target]: from how many NVGEMM choices of one GEMM it sends their precompile to its
    compile workers (`threshold`: what its source says, used where the installed torch's cannot be read), and the most
    NVGEMM choices one GEMM got, with Inductor's defaults, on each compute capability it ran on (`choices`). Below the
    threshold the process that holds the GPU compiles them, for the GPU's own target."""

    torch: SpecifierSet
    threshold: int
    choices: tuple[tuple[tuple[int, int], int], ...]  # (compute capability, the most choices one GEMM got there)
    basis: str  # RUN: the counts are a recorded run's; SOURCES: read, not run
    text: str
    source: str = ""

    def most(self, capability: tuple[int, int]) -> Optional[int]:
        """The most NVGEMM choices one GEMM got on this compute capability; None: not known there."""
        return next((count for cc, count in self.choices if cc == capability), None)


@dataclass(frozen=True)
class MoreChoices:
    """A setting of Inductor's (an environment variable) that can bring a GEMM's NVGEMM choices up to the threshold
    where torch's defaults stay below it: its `values` do (any case), and, where `above` is given, a whole number
    above it (one at or below it does not; torch reads the value with int())."""

    variable: str
    values: tuple[str, ...]
    above: Optional[int]
    text: str
    source: str = ""

    def raises(self, value: str) -> Optional[bool]:
        """Whether this value of the variable can bring a GEMM to the threshold; None: it is no value torch reads as
        a number or a word here (torch's config fails on it, or envcheck cannot tell)."""
        if value.lower() in self.values:
            return True
        if self.above is None:
            return False
        try:
            number = int(value)
        except ValueError:
            return None
        return str(number) in self.values or number > self.above


@dataclass(frozen=True)
class CompileTarget:
    """[compile-target]: the variable the DSL takes its compile target from, the torches whose NVGEMM precompile
    workers compile without one (so that the DSL falls back to `fallback`, not the GPU), the values the DSL accepts
    (each with the compute capability it compiles for) and a row per compute capability."""

    variable: str  # "CUTE_DSL_ARCH"
    torch: SpecifierSet  # the torch versions whose workers compile without a target
    fallback: str  # what the DSL compiles for where it cannot read the GPU: "sm_100a"
    accepts: tuple[tuple[str, tuple[int, int]], ...]  # (value, the compute capability it compiles for)
    gpus: tuple[TargetRow, ...]  # ascending by capability
    why: str = ""
    source: str = ""
    # where the installed torch says from how many choices it sends a GEMM's precompile to the workers: a file in
    # torch's package folder and the name a line of it assigns the number to ("" : not read, the rows' threshold)
    threshold_file: str = ""
    threshold_name: str = ""
    by_torch: tuple[TorchChoices, ...] = ()
    more_choices: tuple[MoreChoices, ...] = ()

    def row(self, capability: tuple[int, int]) -> Optional[TargetRow]:
        return next((r for r in self.gpus if r.capability == capability), None)

    def target_for(self, capability: tuple[int, int]) -> Optional[str]:
        """The GPU's own target; None where no row names one."""
        row = self.row(capability)
        return row.target if row is not None else None

    def capability_of(self, value: str) -> Optional[tuple[int, int]]:
        """The compute capability a value compiles for; None: the DSL refuses it."""
        return next((cc for name, cc in self.accepts if name == value), None)

    def affects(self, torch: Optional[Version]) -> bool:
        """Whether this torch's workers compile without a target (no torch: the profile's torch would)."""
        return torch is None or self.torch.contains(torch, prereleases=True)

    def choices_for(self, torch: Optional[Version]) -> Optional[TorchChoices]:
        """The row of this torch's NVGEMM choices; None without torch or where no row covers it."""
        return next((r for r in self.by_torch if r.torch.contains(torch, prereleases=True)), None) if torch else None

    @property
    def threshold_value(self) -> Optional[tuple[str, str]]:
        """(file, name) of the threshold in torch's sources, for the probe to read; None where the profile names none."""
        return (self.threshold_file, self.threshold_name) if self.threshold_file and self.threshold_name else None
