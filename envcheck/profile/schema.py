"""The profile's schema: every key a profile may hold, and the frozen values it is read into (a Policy).

A profile is a TOML file (the built-in ones live in envcheck/profile/builtin/, one per upstream stack). It may start
from another with `extends = "<built-in id or path>"` and override any key: tables merge key by key, and the arrays of
tables merge entry by entry on their key (`[[packages]]` by name, `[[conflicts]]` by name or prefix, `[[stand-ins]]`
by missing, `[[gpu]]` by capability, `[[cuda.driver-floor]]` by cuda); an entry with `remove = true` drops the
parent's entry of that key. `[tool.envcheck]` in the project's pyproject.toml (project.py says which file that is)
is read the same way. Every requirement string is parsed with packaging when the profile is read (fields.py,
build.py), so a bad value is reported with its file and key before anything runs; the value itself only where
PolicyError may show it (origins.py).

Everything that differs between stacks is profile data; code never branches on a profile id. The fields:

- `torch.version` (Policy.torch): the torch versions the profile covers; without --profile/--policy envcheck judges
  against the built-in profile that covers the installed torch (`select`). `torch.verified` (Policy.torch_verified):
  the part of that range that was verified; a torch inside `version` but outside `verified` is judged, marked
  unverified (warn). `torch.newest` (Policy.torch_newest, with `newest-source`: where and when it was read): the
  newest torch on the package index when the profile was written, which a plain `pip install torch` gives; said to a
  target without torch. `[[torch.frames]]` (Policy.torch_frames, TorchFrames): Inductor's own frames of a torch
  release it covers (`torch`, `frames`: "torch/_inductor/graph.py:1595 call_function", `source`), read from its wheel:
  explain places a log that names no torch version by them.
- `[python]` (Policy.python): the Python versions of the whole profile (`version`, `why`, `source`), and
  `[[python.by-torch]]` (Policy.python_by_torch, PythonRange): a narrower range where the installed torch is in
  `torch` (torch 2.15.0 requires Python >= 3.11). Without torch, the profile's range: pip installs the newest torch
  that the interpreter can take. `suggested` (Policy.python_suggested, MAJOR.MINOR, with `suggested-source`): the
  Python python.version's remedy makes a new environment from, where the machine has one (the Python the recorded
  runs had); absent: the newest found that the range takes.
- every requirement carries its basis (`basis = "runtime"`: the backend breaks without it; `"recipe"`: published,
  not shown necessary). A recipe deviation warns, and fails under --strict. `runtime` (a specifier) is the part of a
  recipe requirement that is runtime everywhere; `runtime-on` (a compute-capability specifier such as ">=10.0,<11")
  makes the whole requirement runtime on those GPUs; `recipe-note` says what works instead where it is recipe;
  `runtime-beside` (a list of `{when, version, source}`) is a floor that is runtime only where another installed
  distribution meets `when` (apache-tvm-ffi >= 0.1.11 beside nvidia-cutlass-dsl >= 4.6); `runtime-on-version` is
  what runs on the GPUs of `runtime-on` where that is less than the whole requirement (the recipe's DSL cap: <4.6).
- `verified` (with `verified-source`) on [cutedsl] and [[packages]]: the versions real runs had; an installed version
  the requirement admits but outside it (newer than any recorded run) is judged, marked unverified (warn).
- every verdict says where it comes from: `source` (a wheel's file and line, or a run) on [python], [cutedsl],
  [[packages]], [[conflicts]], [[stand-ins]], [[gpu]], [gpu-below], [[caveats]] and [[python.by-torch]].
- `[cutedsl]` (Policy.cutedsl, a PackageRule): the DSL distribution, its extras (`["cu13"]`), the module Inductor
  imports (`module`) and the folders inside a site directory its module must load from (`module-dirs`: a list, or
  a table of DSL version specifier -> list, since the DSL moved `cutlass` from python_packages to dsl_packages at
  4.6.0); `flavours`: a table of version specifier -> distributions of which one must be installed beside such a
  version (the DSL's CUDA flavours from 4.6: without one `import cutlass` raises No CTK flavor installed).
- `[inductor] modules` (Policy.inductor_modules): the modules Inductor's find_spec decides availability with; the
  probe looks for these and for every rule's `module` (Policy.probe_modules).
- `[cutlass]` (Policy.cutlass): the CUTLASS checkout a package is installed from; absent = the profile needs no
  checkout (Policy.cutlass is None; the checkout checks say "not needed by this profile").
- `[[packages]]`: companion packages (name, version, level, basis, extras, module, why, source). `level`: "required"
  (missing fails), "recommended" (missing warns) or "optional" (published, e.g. as an extra, but shown to do nothing
  on this stack: reported, never a failure or warning, never installed by fix).
- `[[conflicts]]`: distributions that must not be there (name or prefix; optional `version`, `torch-cuda`: only for
  a torch built for that CUDA, `unless`: not when that distribution is installed too, `status` fail or warn, or
  instead `basis` with `runtime-on` (warn where recipe, fail on those compute capabilities), `instead`: the
  requirement the remedy installs, `consent`: remove only when the user agrees).
- `[[gpu]]` (Policy.gpus): the kernel table, one row per compute capability (status, kernels, gpus, remedy: the way
  out where it is not a pass, source); `[gpu-below]` (Policy.gpu_below): everything below its capability.
- `[[caveats]]` (Policy.caveats): a known problem of some GPUs with some torch versions (name, capability and torch
  specifiers, `when`: only beside an installed distribution that meets this requirement, status, text, remedy,
  source), judged in gpu.compute-capability.
- `[compile-target]` (Policy.compile_target, CompileTarget): the variable the DSL takes its compile target from
  (`variable`, CUTE_DSL_ARCH), the torches whose NVGEMM precompile workers compile without one (`torch`), what the
  DSL then compiles for (`fallback`, since a worker cannot read the GPU), every value the DSL accepts with the
  compute capability it compiles for (`accepts`), why and the source; `[[compile-target.gpu]]` one row per compute
  capability: the GPU's own `target`, the `status` where a process compiles for the fallback, its `basis` (`run`:
  a recorded run shows it; `sources`: read, not run), `text`, `source`. Absent: not judged (cutedsl.arch skips).
  Whether torch compiles in its workers at all: `threshold-file` (in torch's package folder) and `threshold-name`
  name the line that says from how many NVGEMM choices of one GEMM it sends them there (the probe reads it as text
  from the installed torch); `[[compile-target.by-torch]]` one row per torch range (`torch`, its `threshold` where
  the source cannot be read, `choices`: the most NVGEMM choices one GEMM got per compute capability with Inductor's
  defaults, `basis`, `text`, `source`): below the threshold the process that holds the GPU compiles them, a pass;
  `[[compile-target.more-choices]]` the settings of the job's environment that can raise them to it (`variable`,
  the `values` that do, `above`: a number above it does too, `text`, `source`).
- `[[gemm-ops]]` (Policy.gemm_ops, GemmOp): the aten GEMM ops Inductor's lowerings offer NVGEMM choices for on this
  stack (`op`: "mm", "addmm", "_scaled_mm"), with `capability` where only some GPUs get them (addmm on the operators
  stack: the SM100 fused-epilogue kernels), `why` and `source`; an op not listed gets no NVGEMM choice on any GPU.
  None listed: the profile does not say (explain then claims no op unserved).
- `[smoke]`: the smoke's backends, the extra backends per compute capability, and the patterns that prove the
  kernel ran in Inductor's generated code (`call-pattern`, `kernel-pattern`, `imports`), and the kernel library
  `smoke --library` calls directly (`library`).
- `mixed-cuda-exempt`: distribution-name prefixes that do not count as a CUDA major in packages.consistency (a
  library that carries several CUDA flavours and picks one at run time): a name, or `{prefix, version}` to exempt
  only those versions.
- the real runs that support a built-in profile are data beside it (envcheck/profile/evidence/<id>.toml, read by
  runs.py into Policy.runs); a profile that extends a built-in one inherits them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..model import Run
from .rules import (RECIPE, RUN, RUNTIME, SOURCES, Beside, Caveat, Conflict, GemmOp, GpuRule, PackageRule,
                    PythonRange, StandIn, TorchFrames, driver_floor_for, driver_text, on_capabilities, spec_text)
from .targetrules import CompileTarget, MoreChoices, TargetRow, TorchChoices

__all__ = ["DEFAULT_PROFILE", "SCHEMA", "RUNTIME", "RECIPE", "RUN", "SOURCES", "LEVELS", "Beside", "PackageRule",
           "Conflict", "StandIn", "GpuRule", "Caveat", "PythonRange", "CompileTarget", "TargetRow", "TorchChoices",
           "MoreChoices", "GemmOp", "TorchFrames", "CutlassSource",
           "SmokeSpec", "Policy", "spec_text", "driver_text", "driver_floor_for", "on_capabilities"]

DEFAULT_PROFILE = "torch-2.11-nvgemm"  # the published recipe: the profile without torch, and below every range
SCHEMA = 1
LEVELS = ("required", "recommended", "optional")


@dataclass(frozen=True)
class CutlassSource:
    url: str
    branch: str
    commit: str
    subdir: str
    distribution: str  # canonical
    module: str
    extras: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class SmokeSpec:
    """What the smoke run allows and what proves, in Inductor's generated code, that the backend's kernel ran."""

    backends: tuple[str, ...]  # max_autotune_gemm_backends
    capability_backends: tuple[tuple[SpecifierSet, tuple[str, ...]], ...] = ()  # more backends on these GPUs
    call_pattern: str = ""  # regex; group 1 is the kernel's call name
    kernel_pattern: str = ""  # regex; group 1 (or the match) is the library's kernel name
    imports: tuple[str, ...] = ()  # modules the generated code imports
    library: str = ""  # the kernel library Inductor calls (`smoke --library` calls it directly); "": none named

    def backends_for(self, capability: Optional[tuple[int, int]]) -> tuple[str, ...]:
        chosen = list(self.backends)
        if capability is not None:
            for where, more in self.capability_backends:
                if where.contains(f"{capability[0]}.{capability[1]}"):
                    chosen += [b for b in more if b not in chosen]
        return tuple(chosen)


@dataclass(frozen=True)
class Policy:
    id: str
    title: str
    source: str  # where it was read from, for messages
    backend: str
    link: str
    python: SpecifierSet
    python_why: str
    torch: SpecifierSet  # the torch versions this profile covers
    torch_verified: SpecifierSet  # the part of them verified; beyond it: judged, marked unverified
    torch_cuda: SpecifierSet
    torch_requirement: Requirement
    torch_index_url: str
    torch_why: str
    toolkit: SpecifierSet
    toolkit_level: str
    toolkit_requirement: Requirement
    driver_cuda: Version
    driver_floors: tuple[tuple[Version, Version], ...]  # (cuda, minimum driver), ascending
    cuda_why: str
    forward_compat: str
    cutedsl: PackageRule  # its module is always named
    cutlass: Optional[CutlassSource]  # None: this profile needs no CUTLASS checkout
    packages: tuple[PackageRule, ...]
    conflicts: tuple[Conflict, ...]
    stand_ins: tuple[StandIn, ...]
    gpus: tuple[GpuRule, ...]  # ascending by capability
    gpu_below: GpuRule
    cuda_basis: str = RUNTIME  # of cuda.toolkit and cuda.driver's CUDA version
    inductor_modules: tuple[str, ...] = ()  # what Inductor's find_spec decides availability with
    smoke: SmokeSpec = SmokeSpec(("NVGEMM",))
    mixed_cuda_exempt: tuple[tuple[str, SpecifierSet], ...] = ()  # (name prefix, versions) not counted as a CUDA major
    gpu_why: str = ""
    origins: tuple[tuple[str, str], ...] = ()  # (key, the file that set it): 'torch.index-url', 'packages[name=x]'
    python_source: str = ""
    python_by_torch: tuple[PythonRange, ...] = ()
    python_suggested: str = ""  # MAJOR.MINOR: the Python a new environment is advised to have; "": the oldest taken
    python_suggested_source: str = ""
    caveats: tuple[Caveat, ...] = ()
    runs: tuple[Run, ...] = ()  # the real runs that support it (its built-in profile's evidence)
    torch_newest: Optional[Version] = None  # the newest torch on the index when written: what `pip install torch` gives
    torch_newest_source: str = ""
    compile_target: Optional[CompileTarget] = None  # None: the profile does not judge the DSL's compile target
    gemm_ops: tuple[GemmOp, ...] = ()  # the aten ops NVGEMM serves ([[gemm-ops]]); (): the profile does not say
    torch_frames: tuple[TorchFrames, ...] = ()  # Inductor's frames of the torch releases read ([[torch.frames]])

    def origin(self, key: str) -> str:
        """The file (or built-in profile) that set a key's value, as `origins` records it; the profile's own source
        when no file did."""
        return next((source for name, source in self.origins if name == key), self.source)

    def gemm_op(self, op: str) -> Optional[GemmOp]:
        """The [[gemm-ops]] row of an aten op (`addmm`), or None where the profile lists it not."""
        return next((row for row in self.gemm_ops if row.op == op), None)

    @property
    def driver_floor(self) -> Version:
        """The oldest driver that supports the policy's CUDA."""
        return driver_floor_for(self.driver_floors, self.driver_cuda)

    @property
    def cutedsl_module(self) -> str:
        return self.cutedsl.module

    @property
    def library_distribution(self) -> Optional[str]:
        """The distribution of the kernel library Inductor calls (`smoke.library`): a package rule's or the
        checkout's; None when the profile names none."""
        module = self.smoke.library
        if self.cutlass is not None and self.cutlass.module == module:
            return self.cutlass.distribution
        return next((r.name for r in self.packages if module and r.module == module), None)

    def python_for(self, torch: Optional[Version]) -> tuple[SpecifierSet, tuple[PythonRange, ...]]:
        """The Python versions wanted beside an installed torch release (None: no torch, the profile's own range),
        and the per-torch ranges that narrowed it."""
        ranges = tuple(r for r in self.python_by_torch if torch is not None and r.torch.contains(torch))
        wanted = self.python
        for extra in ranges:
            wanted = wanted & extra.version
        return wanted, ranges

    @property
    def variables(self) -> tuple[str, ...]:
        """The environment variables its verdicts read (gathered as facts: the job's environment)."""
        rule = self.compile_target
        return (rule.variable, *(m.variable for m in rule.more_choices)) if rule is not None else ()

    @property
    def torch_values(self) -> tuple[tuple[str, str], ...]:
        """The numbers of torch's own sources its verdicts read ((file, name): the probe reads them as text)."""
        rule = self.compile_target
        return (rule.threshold_value,) if rule is not None and rule.threshold_value is not None else ()

    @property
    def probe_modules(self) -> tuple[str, ...]:
        """Every module the probe must locate in the target interpreter (find_spec, nothing imported)."""
        names = ["torch", self.cutedsl_module, *self.inductor_modules]
        names += [r.module for r in self.packages if r.module]
        if self.cutlass is not None:
            names.append(self.cutlass.module)
        return tuple(dict.fromkeys(names))
