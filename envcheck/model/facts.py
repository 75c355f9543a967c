"""The facts gather collects about a target: its interpreter and what is installed in it, the driver and GPUs, the
CUDA toolkits found, the CUTLASS checkout, the CUDA folders on PATH and LD_LIBRARY_PATH, the machine's bug-report facts. Each is a frozen dataclass; a part that could not be read is a Failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Optional, Union

__all__ = ["canonical_name", "version_or_none", "is_distribution_name", "capability_of", "capability_text", "gpus_given", "Failure",
           "CudaFolder", "SearchPaths", "System", "Distribution", "ModuleLocation", "PthImport", "SourceValue", "TorchBuild", "Interpreter", "Gpu", "Driver", "Nvcc",
           "Toolkit", "Checkout", "Facts", "SEEN", "GIVEN"]


def canonical_name(name: str) -> str:
    """PEP 503 normalised distribution name: 'Cutlass_API' -> 'cutlass-api'."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def version_or_none(text: Optional[str]):
    """text as a packaging Version; None where it is empty or no version (a local build's odd tag)."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def is_distribution_name(name: str) -> bool:
    """A valid distribution name (PEP 508): letters, digits, '.', '_' and '-', a letter or digit at both ends."""
    import re

    return bool(re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", name))


def capability_of(text: str) -> tuple[int, int]:
    """A compute capability written MAJOR.MINOR ('9.0', '12.1') as (major, minor): the one reading of it, for the
    --gpu-capability flag and the profiles alike. Major 1 to 99, minor one digit; ValueError otherwise ('9', '9.0.1',
    'abc', '-1.0', '100.0')."""
    import re

    match = re.fullmatch(r"([1-9][0-9]?)\.([0-9])", text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{text!r} is not a compute capability MAJOR.MINOR such as 9.0 or 12.1")
    return int(match[1]), int(match[2])


def capability_text(capability: tuple[int, int]) -> str:
    return f"{capability[0]}.{capability[1]}"


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
class SourceValue:
    """A number the installed torch's own source assigns to a name, read as text by the probe (torch never imported):
    the one line `NAME = <integer>` of a file in torch's package folder. Not read (`value` None): `why` says why (no
    such file, no such line, a file too large to read)."""

    file: str  # in torch's package folder: "_inductor/select_algorithm.py"
    name: str  # "_NVGEMM_SUBPROCESS_PRECOMPILE_THRESHOLD"
    value: Optional[int] = None
    line: Optional[int] = None  # 1-based
    why: str = ""

    @property
    def where(self) -> str:
        """The line, as a citation names it: "torch/_inductor/select_algorithm.py:4924"."""
        return f"torch/{self.file}" + (f":{self.line}" if self.line is not None else "")


@dataclass(frozen=True)
class TorchBuild:
    """torch/version.py read as text, and the numbers of torch's sources the profile asked for (SourceValue)."""

    version: str
    cuda: Optional[str]  # None: a CPU-only build
    git_version: Optional[str] = None
    path: str = ""
    values: tuple[SourceValue, ...] = ()

    def value_of(self, file: str, name: str) -> Optional[SourceValue]:
        """What the probe read of `name` in `file`; None where it was not asked."""
        return next((v for v in self.values if v.file == file and v.name == name), None)


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
        return self._by_name.get(canonical_name(name), ())

    @cached_property
    def _by_name(self) -> dict[str, tuple[Distribution, ...]]:
        """Each name's copies in path order, made once: a lookup must not read every distribution (a target with
        60,000 of them hung doctor, which looks each one up)."""
        found: dict[str, list[Distribution]] = {}
        for dist in self.distributions:
            found.setdefault(dist.name, []).append(dist)
        return {name: tuple(copies) for name, copies in found.items()}

    def dist(self, name: str) -> Optional[Distribution]:
        """The copy Python would use: the first on sys.path."""
        found = self.installed(name)
        return found[0] if found else None

    def module(self, name: str) -> Optional[ModuleLocation]:
        return next((m for m in self.modules if m.name == name), None)

    @property
    def torch_version(self) -> Optional[str]:
        """The installed torch's version, which the profile is chosen by: torch/version.py's, else its metadata's;
        None without torch."""
        if self.torch is not None:
            return self.torch.version
        dist = self.dist("torch")
        return dist.version if dist else None


SEEN, GIVEN = "seen", "given"  # a GPU NVML reported here; one named with --gpu-capability, judged as if present


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    capability: tuple[int, int]
    memory_bytes: Optional[int] = None
    mig: Optional[bool] = None  # None: not supported or unknown
    uuid: Optional[str] = None  # "GPU-..." (NVML), for telling nodes' GPUs apart in a fleet
    source: str = SEEN  # SEEN or GIVEN

    @property
    def capability_text(self) -> str:
        return capability_text(self.capability)

    @property
    def given(self) -> bool:
        return self.source == GIVEN


def gpus_given(capabilities: tuple[tuple[int, int], ...]) -> tuple[Gpu, ...]:
    """The GPUs named with --gpu-capability, one per capability given, in the order given."""
    return tuple(Gpu(index=index, name=f"a GPU of compute capability {capability_text(c)}", capability=c, source=GIVEN)
                 for index, c in enumerate(dict.fromkeys(capabilities)))


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
class CudaFolder:
    """A folder of PATH or LD_LIBRARY_PATH that holds CUDA: an nvcc, or CUDA libraries (read as names, never run)."""

    path: str
    variable: str  # "PATH" or "LD_LIBRARY_PATH"
    position: int  # its place in the variable, 0 first
    version: Optional[str] = None  # the CUDA release it belongs to (version.json beside it, or its libraries' names)
    libraries: tuple[str, ...] = ()  # the CUDA library files there: libcudart.so.13.0.96, libcuda.so.1, ...
    nvcc: bool = False
    # The file its libcuda.so.1 resolves to ("/usr/local/nvidia/lib64/libcuda.so.580.159.04"); None: no libcuda.so.1
    # here, or a link that leads to no file.
    libcuda: Optional[str] = None
    libcuda_version: Optional[str] = None  # the driver release that file's name carries ("580.159.04"); None: none

    def soname_majors(self, stem: str) -> tuple[int, ...]:
        """The major versions of a library's sonames here (libnvJitLink.so.13 -> 13)."""
        found = []
        for name in self.libraries:
            head, _, rest = name.partition(".so.")
            if head == stem and rest.split(".")[0].isdigit():
                found.append(int(rest.split(".")[0]))
        return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class SearchPaths:
    """The CUDA folders on PATH and LD_LIBRARY_PATH of the environment doctor (and the target it starts) runs in."""

    folders: tuple[CudaFolder, ...] = ()

    def on(self, variable: str) -> tuple[CudaFolder, ...]:
        return tuple(f for f in self.folders if f.variable == variable)


@dataclass(frozen=True)
class System:
    """What a bug report names of the machine, as collect_env does: the OS, the kernel, libc, a C compiler, the CPU."""

    os: Optional[str] = None  # PRETTY_NAME of /etc/os-release: "Ubuntu 22.04.4 LTS"
    kernel: Optional[str] = None  # "5.15.0-105-generic"
    machine: Optional[str] = None  # "x86_64"
    libc: Optional[str] = None  # "glibc 2.35"
    compiler: Optional[str] = None  # the first line of `gcc --version` (the first of gcc, cc, clang on PATH)
    cc: Optional[str] = None  # $CC as set (not run)
    cpu: Optional[str] = None  # "AMD EPYC 7763 64-Core Processor"
    cpus: Optional[int] = None  # logical CPUs


@dataclass(frozen=True)
class Facts:
    """Everything gather found. Each part is its facts, or a Failure saying why it could not be had."""

    interpreter: Union[Interpreter, Failure]
    driver: Union[Driver, Failure]
    toolkit: Union[Toolkit, Failure]
    checkout: Union[Checkout, Failure, None]  # None: no checkout was offered or found (or the profile needs none)
    cuda_visible_devices: Optional[str] = None  # the target's CUDA_VISIBLE_DEVICES; None: not set
    timings: tuple[tuple[str, float], ...] = field(default=(), compare=False)
    given_gpus: tuple[Gpu, ...] = ()  # --gpu-capability: the GPUs to judge for, as if present (source GIVEN)
    # The variables of the environment envcheck runs in (the job's) that the profile's verdicts read, those set:
    # (name, value), such as ("CUTE_DSL_ARCH", "sm_90a").
    environment: tuple[tuple[str, str], ...] = ()
    paths: Optional[SearchPaths] = None  # the CUDA folders on PATH and LD_LIBRARY_PATH; None: not read
    system: Union[System, Failure, None] = None  # the bug-report facts; None: not gathered
    # Other Python interpreters on this machine, (path, version), newest first: gathered only where the target's
    # Python is too old for the stack (the advice names one); () where none was found or none was looked for.
    pythons: tuple[tuple[str, str], ...] = ()

    def variable(self, name: str) -> Optional[str]:
        """A variable of the environment envcheck ran in, as gathered; None: not set (or not gathered)."""
        return next((value for key, value in self.environment if key == name), None)

    @property
    def gpus(self) -> tuple[Gpu, ...]:
        """The GPUs the verdicts are for: those given with --gpu-capability, which win over what NVML sees here,
        else the driver's (none without one)."""
        if self.given_gpus:
            return self.given_gpus
        return self.driver.gpus if isinstance(self.driver, Driver) else ()
