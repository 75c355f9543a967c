"""The requirements a profile is read into, frozen (schema.py says what each key means): a package and its basis,
a conflict, a stand-in, a row of the kernel table, a caveat, a Python range; and the words they are shown in.
[compile-target]'s are in targetrules.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..model import Status

__all__ = ["RUNTIME", "RECIPE", "RUN", "SOURCES", "Beside", "PackageRule", "Conflict", "StandIn", "GpuRule", "Caveat",
           "PythonRange", "GemmOp", "TorchFrames", "spec_text", "driver_text", "driver_floor_for", "on_capabilities"]

RUNTIME, RECIPE = "runtime", "recipe"
RUN, SOURCES = "run", "sources"  # what a compile-target verdict rests on: a recorded run, or the sources read


def on_capabilities(where: Optional[SpecifierSet], capabilities: tuple[tuple[int, int], ...]) -> bool:
    """Whether any of these compute capabilities is in a capability specifier (None: no specifier, never)."""
    return where is not None and any(where.contains(f"{major}.{minor}") for major, minor in capabilities)


@dataclass(frozen=True)
class Beside:
    """A floor that is runtime only beside another distribution: where the installed one meets `when`, the package
    needs `version` (apache-tvm-ffi >= 0.1.11 beside nvidia-cutlass-dsl >= 4.6, which passes map_dataclass_to_tuple)."""

    when: Requirement
    version: SpecifierSet
    source: str = ""


@dataclass(frozen=True)
class PackageRule:
    """One required distribution and the versions wanted, with the basis of that want.

    basis "runtime": the backend breaks outside `specifier`. basis "recipe": `specifier` is what was published;
    only `runtime` (default: any version) is necessary, except on compute capabilities in `runtime_on`, where all of
    `specifier` is."""

    name: str  # canonical distribution name
    specifier: SpecifierSet
    level: str  # one of LEVELS: "required" (missing fails), "recommended" (missing warns), "optional" (never)
    why: str
    basis: str = RUNTIME
    runtime: SpecifierSet = SpecifierSet()
    runtime_on: Optional[SpecifierSet] = None  # compute capabilities ("10.0") where a recipe basis is runtime
    runtime_on_version: Optional[SpecifierSet] = None  # what runs there (None: the whole `specifier` is needed)
    recipe_note: str = ""  # where the basis is recipe: what works instead
    extras: tuple[str, ...] = ()
    module: Optional[str] = None  # the module it provides, looked for by the probe
    # folders (relative to a site directory) its module loads from, per version of the distribution: (versions, dirs)
    module_dirs: tuple[tuple[SpecifierSet, tuple[str, ...]], ...] = ()
    runtime_beside: tuple[Beside, ...] = ()
    source: str = ""  # where the requirement comes from: a wheel's file and line, or a run
    verified: SpecifierSet = SpecifierSet()  # the versions real runs had; outside it (newer): judged, unverified
    verified_source: str = ""
    # distributions of which one must be installed beside it, per its version (the DSL's CUDA flavours from 4.6)
    flavours: tuple[tuple[SpecifierSet, tuple[str, ...]], ...] = ()

    def flavours_for(self, version: Optional[str]) -> tuple[str, ...]:
        """The distributions of which one must be installed beside this version (none: nothing asked)."""
        return next((names for versions, names in self.flavours
                     if version is not None and versions.contains(version, prereleases=True)), ())

    def needed_on(self, capabilities: tuple[tuple[int, int], ...]) -> SpecifierSet:
        """The versions the backend needs to run on these GPUs: `runtime` everywhere, and on a GPU of `runtime_on` its
        `runtime_on_version` (or, without one, the whole `specifier`); a runtime basis: the whole specifier."""
        if self.basis == RUNTIME:
            return self.specifier
        if self.runtime_on is not None and on_capabilities(self.runtime_on, capabilities):
            return self.runtime & (self.runtime_on_version if self.runtime_on_version is not None else self.specifier)
        return self.runtime

    def dirs_for(self, version: Optional[str]) -> tuple[str, ...]:
        """The folders its module must load from, for an installed version (the first entry that admits it)."""
        for versions, dirs in self.module_dirs:
            if version is not None and versions.contains(version, prereleases=True):
                return dirs
        return ()

    @property
    def requirement(self) -> str:
        """What pip is asked for: the name, its extras and the policy's versions."""
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        return f"{self.name}{extras}{self.specifier}"

    def basis_on(self, capabilities: tuple[tuple[int, int], ...], version: Optional[str] = None) -> str:
        """The basis on these GPUs: a recipe requirement is runtime where any of them is in runtime_on (for an
        installed version: where that version is outside what runs there, `needed_on`)."""
        if self.basis == RUNTIME or self.runtime_on is None or not on_capabilities(self.runtime_on, capabilities):
            return self.basis
        if version is None or self.runtime_on_version is None:
            return RUNTIME
        return RECIPE if self.needed_on(capabilities).contains(version, prereleases=True) else RUNTIME


@dataclass(frozen=True)
class Conflict:
    """A distribution that must not be installed: an exact name, or every name with a prefix.

    It applies only to installed versions in `version`, only beside a torch whose CUDA build is in `torch_cuda`
    (None: any), and not when `unless` is installed too. `instead` is what the remedy installs in its place;
    `consent`: the fixer removes it only when the user agrees. Its status is `status`, or with basis "recipe" a
    warning (a failure under --strict) except on the compute capabilities in `runtime_on`, where it breaks."""

    match: str
    is_prefix: bool
    why: str
    version: SpecifierSet = SpecifierSet()
    torch_cuda: Optional[SpecifierSet] = None
    unless: Optional[str] = None
    status: Status = Status.FAIL
    instead: Optional[str] = None
    consent: bool = False
    basis: str = RUNTIME
    runtime_on: Optional[SpecifierSet] = None
    source: str = ""

    def matches(self, name: str) -> bool:
        return name.startswith(self.match) if self.is_prefix else name == self.match

    def status_on(self, capabilities: tuple[tuple[int, int], ...], strict: bool = False) -> Status:
        """How bad it is on these GPUs: a recipe-basis rule warns (fails under --strict), except where it breaks."""
        if self.basis == RUNTIME:
            return self.status
        return Status.FAIL if strict or on_capabilities(self.runtime_on, capabilities) else Status.WARN


@dataclass(frozen=True)
class StandIn:
    """A requirement missing on paper but met in practice: `missing` is not installed, `present` does its job."""

    missing: str
    present: str
    why: str
    source: str = ""


@dataclass(frozen=True)
class GpuRule:
    """One row of the kernel table: what the library offers on a compute capability, and the way out if not a pass."""

    capability: tuple[int, int]
    status: Status
    kernels: str
    gpus: str = ""
    remedy: str = ""
    source: str = ""


@dataclass(frozen=True)
class Caveat:
    """A known problem of some GPUs with some torch versions, beyond the kernel table (the common_efc import of
    torch 2.14.x on the SM100 family)."""

    name: str
    capability: SpecifierSet
    torch: SpecifierSet
    status: Status
    text: str
    remedy: str = ""
    source: str = ""
    when: Optional[Requirement] = None  # only where an installed distribution meets it (operators >= 0.2.0)

    def applies(self, capability: tuple[int, int], torch: Optional[Version],
                version_of: Callable[[str], Optional[str]] = lambda name: None) -> bool:
        """On this GPU beside this torch, with `version_of(name)` the installed version of a distribution."""
        if not (on_capabilities(self.capability, (capability,)) and torch is not None and self.torch.contains(torch)):
            return False
        if self.when is None:
            return True
        installed = version_of(self.when.name)
        return installed is not None and self.when.specifier.contains(installed, prereleases=True)


@dataclass(frozen=True)
class GemmOp:
    """An aten GEMM op Inductor's lowering offers NVGEMM choices for ([[gemm-ops]]): wherever NVGEMM has kernels, or
    only on the compute capabilities of `capability` (addmm on the operators stack: the SM100 EFC kernels)."""

    op: str  # the aten op as a LoweringException names it, without `aten.` and the overload: "addmm", "_scaled_mm"
    capability: Optional[SpecifierSet] = None  # None: on every GPU the profile's kernels run on
    why: str = ""
    source: str = ""


@dataclass(frozen=True)
class TorchFrames:
    """Inductor's own frames of one torch release ([[torch.frames]]), "torch/_inductor/graph.py:1595 call_function":
    a traceback through one of them was written by that release."""

    torch: Version
    frames: frozenset[str]
    source: str = ""


@dataclass(frozen=True)
class PythonRange:
    """The Python versions a torch release needs, where narrower than the profile's (torch 2.15.0: >= 3.11)."""

    torch: SpecifierSet
    version: SpecifierSet
    why: str = ""
    source: str = ""


def spec_text(specifier: SpecifierSet, separator: str = ", ") -> str:
    """A specifier lower bound first, '>=4.3.0, <=4.3.5' (packaging sorts it as text); '' for any version."""
    order = {">": 0, "~": 1, "=": 1, "!": 2, "<": 3}
    return separator.join(sorted((str(s) for s in specifier), key=lambda s: (order.get(s[0], 4), s)))


def driver_text(version: Version) -> str:
    """An NVIDIA driver version as NVIDIA writes it: 590.44.01, not PEP 440's 590.44.1."""
    release = tuple(version.release) + (0,) * (3 - len(version.release))
    if len(version.release) >= 3:
        return f"{release[0]}.{release[1]:02d}.{release[2]:02d}"
    return f"{release[0]}.{release[1]:02d}"


def driver_floor_for(floors: tuple[tuple[Version, Version], ...], cuda: Version) -> Version:
    eligible = [driver for c, driver in floors if c <= cuda]
    return eligible[-1] if eligible else floors[0][1]
