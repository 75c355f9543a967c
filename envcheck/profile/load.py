"""The policy: what the stack must look like, read from a TOML profile and validated the moment it is read.

A profile is a TOML file (the built-in ones live in envcheck/profiles/, one per upstream stack). It may start from
another with `extends = "<built-in id or path>"` and override any key: tables merge key by key, and the arrays of
tables merge entry by entry on their key (`[[packages]]` by name, `[[conflicts]]` by name or prefix, `[[stand-ins]]`
by missing, `[[gpu]]` by capability, `[[cuda.driver-floor]]` by cuda); an entry with `remove = true` drops the
parent's entry of that key. `[tool.envcheck]` in the project's pyproject.toml (envcheck/project.py says which file
that is) is read the same way. Every requirement string is parsed with packaging here, so a bad value is reported
with its file and key before anything runs; the value itself only where PolicyError may show it.

Everything that differs between stacks is profile data; code never branches on a profile id. The fields:

- `torch.version` (Policy.torch): the torch versions the profile covers; without --profile/--policy envcheck judges
  against the built-in profile that covers the installed torch (`select`). `torch.verified` (Policy.torch_verified):
  the part of that range that was verified; a torch inside `version` but outside `verified` is judged, marked
  unverified (warn).
- every requirement carries its basis (`basis = "runtime"`: the backend breaks without it; `"recipe"`: published,
  not shown necessary). A recipe deviation warns, and fails under --strict. `runtime` (a specifier) is the part of a
  recipe requirement that is runtime everywhere; `runtime-on` (a compute-capability specifier such as ">=10.0,<11")
  makes the whole requirement runtime on those GPUs; `recipe-note` says what works instead where it is recipe.
- `[cutedsl]` (Policy.cutedsl, a PackageRule): the DSL distribution, its extras (`["cu13"]`), the module Inductor
  imports (`module`) and the folders inside a site directory its module must load from (`module-dirs`).
- `[inductor] modules` (Policy.inductor_modules): the modules Inductor's find_spec decides availability with; the
  probe looks for these and for every rule's `module` (Policy.probe_modules).
- `[cutlass]` (Policy.cutlass): the CUTLASS checkout a package is installed from; absent = the profile needs no
  checkout (Policy.cutlass is None; the checkout checks say "not needed by this profile").
- `[[packages]]`: companion packages (name, version, level, basis, extras, module, why).
- `[[conflicts]]`: distributions that must not be there (name or prefix; optional `version`, `torch-cuda`: only for
  a torch built for that CUDA, `unless`: not when that distribution is installed too, `status` fail or warn,
  `instead`: the requirement the remedy installs, `consent`: remove only when the user agrees).
- `[smoke]`: the smoke's backends, the extra backends per compute capability, and the patterns that prove the
  kernel ran in Inductor's generated code (`call-pattern`, `kernel-pattern`, `imports`), and the kernel library
  `smoke --library` calls directly (`library`).
- `mixed-cuda-exempt`: distribution-name prefixes that do not count as a CUDA major in packages.consistency (a
  library that carries several CUDA flavours and picks one at run time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..errors import UsageError
from ..gitsafe import checked_index_url, checked_url
from .project import project_file
from ..redact import Redactor, credential_name
from ..shell import unsafe_character
from ..userfile import parse_toml, read_toml
from ..model import ProfileChoice, Status, canonical_name

__all__ = [
    "DEFAULT_PROFILE",
    "RUNTIME",
    "RECIPE",
    "ProfileChoice",
    "SmokeSpec",
    "select",
    "candidates",
    "Candidates",
    "torch_release",
    "PolicyError",
    "PackageRule",
    "Conflict",
    "GpuRule",
    "StandIn",
    "CutlassSource",
    "Policy",
    "builtin_profiles",
    "load",
    "resolve",
]

DEFAULT_PROFILE = "torch-2.11-nvgemm"  # the published recipe: the profile without torch, and below every range
SCHEMA = 1
RUNTIME, RECIPE = "runtime", "recipe"
_GIT_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_CHECK_ID = re.compile(r"^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$")


class PolicyError(UsageError):
    """A profile that cannot be used: names the file, the key and what was expected.

    The value itself is shown only where it is safe to: a single value (never a table or an array) of the file the
    user named (--policy, their pyproject.toml) or of a built-in profile, with a credential-like key masked and
    secrets in it redacted (show=False: only its type). A file that `extends` reaches may be anything on the machine
    (a credentials file): its values are never echoed."""

    def __init__(self, source: str, key: str, value: Any, expected: str, show: bool = True):
        self.source, self.key, self.value, self.expected = source, key, value, expected
        key_shown = key if len(key) <= _SHOWN_CHARS else f"{key[:_SHOWN_CHARS]}..."
        shown = _shown(value, show and not credential_name(key.rpartition(".")[2]))
        super().__init__(f"{source}: key '{key_shown}' = {shown}: expected {expected}")


_MISSING = object()
_SHOWN_CHARS = 200  # of a bad value, in an error message
_MAX_TEXT = 4096  # characters of any one value: a branch name or a URL is far shorter, a why a paragraph


def _shown(value: Any, show: bool = True) -> str:
    """A value as an error message shows it: its repr with secrets redacted and cut short, or (a table, an array, a
    value not to be shown) only its type, in parentheses like '(missing)'."""
    if value is _MISSING:
        return "(missing)"
    if not show or isinstance(value, (dict, list, tuple)):
        return f"({_kind(value)})"
    text = Redactor(paths=False)(repr(value))
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS]}... ({len(text)} characters)"


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, (list, tuple)):
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "a date or time")


@dataclass(frozen=True)
class PackageRule:
    """One required distribution and the versions wanted, with the basis of that want.

    basis "runtime": the backend breaks outside `specifier`. basis "recipe": `specifier` is what was published;
    only `runtime` (default: any version) is necessary, except on compute capabilities in `runtime_on`, where all of
    `specifier` is."""

    name: str  # canonical distribution name
    specifier: SpecifierSet
    level: str  # "required" (fail) or "recommended" (warn)
    why: str
    basis: str = RUNTIME
    runtime: SpecifierSet = SpecifierSet()
    runtime_on: Optional[SpecifierSet] = None  # compute capabilities ("10.0") where a recipe basis is runtime
    recipe_note: str = ""  # where the basis is recipe: what works instead
    extras: tuple[str, ...] = ()
    module: Optional[str] = None  # the module it provides, looked for by the probe
    module_dirs: tuple[str, ...] = ()  # folders (relative to a site directory) its module loads from

    @property
    def requirement(self) -> str:
        """What pip is asked for: the name, its extras and the policy's versions."""
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        return f"{self.name}{extras}{self.specifier}"

    def basis_on(self, capabilities: tuple[tuple[int, int], ...]) -> str:
        """The basis on these GPUs: a recipe requirement is runtime where any of them is in runtime_on."""
        if self.basis == RUNTIME or self.runtime_on is None:
            return self.basis
        return RUNTIME if any(self.runtime_on.contains(f"{major}.{minor}") for major, minor in capabilities) else RECIPE


@dataclass(frozen=True)
class Conflict:
    """A distribution that must not be installed: an exact name, or every name with a prefix.

    It applies only to installed versions in `version`, only beside a torch whose CUDA build is in `torch_cuda`
    (None: any), and not when `unless` is installed too. `instead` is what the remedy installs in its place;
    `consent`: the fixer removes it only when the user agrees."""

    match: str
    is_prefix: bool
    why: str
    version: SpecifierSet = SpecifierSet()
    torch_cuda: Optional[SpecifierSet] = None
    unless: Optional[str] = None
    status: Status = Status.FAIL
    instead: Optional[str] = None
    consent: bool = False

    def matches(self, name: str) -> bool:
        return name.startswith(self.match) if self.is_prefix else name == self.match


@dataclass(frozen=True)
class StandIn:
    """A requirement missing on paper but met in practice: `missing` is not installed, `present` does its job."""

    missing: str
    present: str
    why: str


@dataclass(frozen=True)
class GpuRule:
    capability: tuple[int, int]
    status: Status
    kernels: str
    gpus: str = ""


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
    mixed_cuda_exempt: tuple[str, ...] = ()  # name prefixes not counted as a CUDA major
    gpu_why: str = ""
    origins: tuple[tuple[str, str], ...] = ()  # (key, the file that set it): 'torch.index-url', 'packages[name=x]'

    def origin(self, key: str) -> str:
        """The file (or built-in profile) that set a key's value, as `origins` records it; the profile's own source
        when no file did."""
        return next((source for name, source in self.origins if name == key), self.source)

    @property
    def driver_floor(self) -> Version:
        """The oldest driver that supports the policy's CUDA."""
        return driver_floor_for(self.driver_floors, self.driver_cuda)

    @property
    def cutedsl_module(self) -> str:
        return self.cutedsl.module

    @property
    def probe_modules(self) -> tuple[str, ...]:
        """Every module the probe must locate in the target interpreter (find_spec, nothing imported)."""
        names = ["torch", self.cutedsl_module, *self.inductor_modules]
        names += [r.module for r in self.packages if r.module]
        if self.cutlass is not None:
            names.append(self.cutlass.module)
        return tuple(dict.fromkeys(names))


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


# --------------------------------------------------------------------------------------------------------------
# Reading


def builtin_profiles() -> dict[str, str]:
    """Built-in profile ids and their TOML text."""
    folder = Path(__file__).parent / "builtin"  # a plain directory in the wheel; importlib.resources costs start-up
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.toml"))}


def resolve(
    policy_file: Optional[Path] = None, cwd: Optional[Path] = None, profile: Optional[str] = None,
    torch: Optional[str] = None,
) -> Policy:
    """The policy in force: --policy FILE, else --profile ID, else [tool.envcheck] of the nearest pyproject.toml, else
    the built-in profile that covers `torch` (the published recipe when torch is unknown)."""
    return candidates(policy_file, profile, cwd).select(torch)[0]


@dataclass(frozen=True)
class Candidates:
    """The profiles a run may be judged by: one the user named, or every built-in one (picked by the torch found)."""

    policies: tuple[Policy, ...]
    reason: Optional[str] = None  # why, when the user named it; None: pick by the installed torch

    @property
    def cutedsl_module(self) -> str:
        return self.cutedsl.module

    @property
    def probe_modules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for p in self.policies for m in p.probe_modules))

    def select(self, torch: Optional[str]) -> tuple[Policy, ProfileChoice]:
        """The profile for an installed torch version (None: no torch), and why it was chosen."""
        if self.reason is not None or len(self.policies) == 1:
            policy = self.policies[0]
            release = torch_release(torch)
            verified = release is None or policy.torch_verified.contains(release)
            return policy, ProfileChoice(policy.id, self.reason or "the only profile", policy.source, verified)
        return select(self.policies, torch)


def candidates(policy_file: Optional[Path] = None, profile: Optional[str] = None, cwd: Optional[Path] = None) -> Candidates:
    """--policy FILE, --profile ID, [tool.envcheck] of the nearest pyproject.toml, or else every built-in profile."""
    if policy_file is not None and profile is not None:
        raise UsageError("--policy and --profile both name the profile to use: give one of them")
    if policy_file is not None:
        return Candidates((load(policy_file),), f"named with --policy {policy_file}")
    if profile is not None:
        profiles = builtin_profiles()
        if profile not in profiles:
            raise UsageError(f"--profile {profile!r}: expected one of the built-in profiles {', '.join(sorted(profiles))} (a file goes to --policy)")
        return Candidates((load_builtin(profile),), f"named with --profile {profile}")
    project = project_file(cwd)  # only the repository the user is in, only files nobody else can write
    if project is not None:
        tool = _read_toml(project).get("tool", {})
        table = tool.get("envcheck") if isinstance(tool, dict) else None
        if table is not None:
            if not isinstance(table, dict):
                raise PolicyError(str(project), "tool.envcheck", table, "a table")
            source = f"{project} [tool.envcheck]"
            return Candidates((_build(*_read(table, source, project.parent)),), f"[tool.envcheck] in {project}")
    return Candidates(tuple(load_builtin(name) for name in builtin_profiles()))


def torch_release(text: Optional[str]) -> Optional[Version]:
    """The release a torch version belongs to, for range checks: 2.14.0.dev20260101+cu130 is 2.14.0 (None: unreadable)."""
    try:
        return Version(Version(text).base_version) if text else None
    except InvalidVersion:
        return None


def _lowest(specifier: SpecifierSet) -> Version:
    """The lowest version a specifier admits, as far as its lower bounds say (0 when it has none)."""
    bounds = [Version(s.version.rstrip(".*")) for s in specifier if s.operator in (">=", "==", "~=", ">", "===")]
    return max(bounds, default=Version("0"))


def select(policies: tuple[Policy, ...], torch: Optional[str]) -> tuple[Policy, ProfileChoice]:
    """The built-in profile that covers an installed torch, and why.

    No torch: the published recipe. A torch in a profile's range: that profile (unverified past its `verified`
    range). A torch older than every range: the published recipe, whose torch.version check then fails. Between or
    beyond ranges: the nearest profile below it, marked unverified."""
    by_id = {p.id: p for p in policies}
    default = by_id.get(DEFAULT_PROFILE, policies[0])
    version = torch_release(torch)
    if version is None:
        why = "no torch is installed" if not torch else f"torch {torch} is not a version envcheck can read"
        return default, ProfileChoice(default.id, f"{why}: the published recipe is the default (--profile picks another)", default.source)
    covering = [p for p in policies if p.torch.contains(version)]
    if covering:
        policy = covering[0]
        verified = policy.torch_verified.contains(version)
        reason = f"torch {torch} is in its range ({spec_text(policy.torch)})"
        if not verified:
            reason += f", newer than the versions it was verified with ({spec_text(policy.torch_verified)}): unverified"
        return policy, ProfileChoice(policy.id, reason, policy.source, verified)
    below = sorted((p for p in policies if _lowest(p.torch) <= version), key=lambda p: _lowest(p.torch))
    if not below:
        oldest = min(policies, key=lambda p: _lowest(p.torch))
        return default, ProfileChoice(
            default.id, f"torch {torch} is older than every profile's range (the oldest starts at {_lowest(oldest.torch)})",
            default.source)
    nearest = below[-1]
    return nearest, ProfileChoice(
        nearest.id, f"torch {torch} is outside every profile's range; judged by the nearest one below it ({spec_text(nearest.torch)}): unverified",
        nearest.source, verified=False)


def load(path: Path) -> Policy:
    """A profile file, or a built-in profile id."""
    if not Path(path).exists() and str(path) in builtin_profiles():
        return load_builtin(str(path))
    return _build(*_read(_read_toml(Path(path)), str(path), Path(path).parent))


def load_builtin(profile_id: str) -> Policy:
    profiles = builtin_profiles()
    if profile_id not in profiles:
        raise PolicyError("--policy", "extends", profile_id, f"a file or one of the built-in profiles {sorted(profiles)}")
    source = _BUILTIN + profile_id
    return _build(*_read(parse_toml(profiles[profile_id], source), source, None))


def _read_toml(path: Path) -> dict:
    return read_toml(path, f"policy file {path}")


_BUILTIN = "built-in profile "
MAX_ENTRIES = 1000  # in any one array of a profile: the built-in ones hold a dozen; merging stays linear anyway
_MAX_DEPTH = 8  # tables in tables: a profile has three levels
_MAX_EXTENDS = 8
# The keys a profile's top level may hold: a file `extends` reaches with any other key is not a profile.
_TOP_KEYS = frozenset({"schema", "extends", "id", "title", "backend", "link", "python", "torch", "cuda", "cutedsl",
                       "cutlass", "packages", "conflicts", "stand-ins", "gpu", "gpu-below", "inductor", "smoke",
                       "mixed-cuda-exempt"})
# The arrays of tables that merge entry by entry under `extends`, and the key(s) that name an entry.
_ENTRY_KEYS = {"packages": ("name",), "conflicts": ("name", "prefix"), "stand-ins": ("missing",), "gpu": ("capability",),
               "driver-floor": ("cuda",)}


@dataclass(frozen=True)
class _Origins:
    """Which file set each value of a merged profile (`where`: key -> source), and the file the user named."""

    named: str
    where: dict

    def of(self, key: str) -> str:
        return self.where.get(key, self.named)

    def shows(self, source: str) -> bool:
        """Whether an error may show a value from `source`: the file the user named, or a built-in profile."""
        return source == self.named or source.startswith(_BUILTIN)


def _read(data: dict, source: str, folder: Optional[Path]) -> tuple[dict, _Origins]:
    """A profile merged over the ones it extends (tables key by key, arrays of tables entry by entry, everything
    else replaced), with the file that set each value."""
    merged: dict = {}
    where: dict = {}
    for layer_source, layer in _layers(data, source, folder):
        merged = _merge(merged, layer, layer_source, where)
    return merged, _Origins(source, where)


def _layers(data: dict, source: str, folder: Optional[Path], depth: int = 0) -> list[tuple[str, dict]]:
    """The profiles `data` stands on, the first base first and `data` last, each with its source. A file that
    `extends` names must be an envcheck profile: one with other keys is refused without a word of its contents."""
    _check_shape(data, source)
    data = dict(data)
    base_name = data.pop("extends", None)
    if base_name is None:
        return [(source, data)]
    show = depth == 0 or source.startswith(_BUILTIN)
    if not isinstance(base_name, str) or depth >= _MAX_EXTENDS:
        raise PolicyError(source, "extends", base_name, "a built-in profile id or a path to a profile, without cycles",
                          show)
    profiles = builtin_profiles()
    if base_name in profiles:
        base_source = _BUILTIN + base_name
        return _layers(parse_toml(profiles[base_name], base_source), base_source, None, depth + 1) + [(source, data)]
    base_path = (folder / base_name).resolve() if folder is not None else None
    if base_path is None or not base_path.is_file():
        raise PolicyError(source, "extends", base_name, f"a file or one of the built-in profiles {sorted(profiles)}",
                          show)
    base = _read_toml(base_path)
    if not set(base) <= _TOP_KEYS:
        named = f"{base_path}, which is" if show else "a file that is"
        raise PolicyError(source, "extends", base_name, f"a built-in profile id or a profile file; it names {named} "
                          "not an envcheck profile (it holds keys a profile does not have; its contents are not shown)",
                          show)
    return _layers(base, str(base_path), base_path.parent, depth + 1) + [(source, data)]


def _check_shape(data: dict, source: str) -> None:
    """No array longer than MAX_ENTRIES, no tables nested deeper than a profile's: checked before any merging, which
    then cannot take long or recurse without end."""
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack:
        path, value, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise PolicyError(source, path, value, f"tables nested at most {_MAX_DEPTH} deep", show=False)
        if isinstance(value, list):
            if len(value) > MAX_ENTRIES:
                raise PolicyError(source, path, value, f"at most {MAX_ENTRIES} entries ([[...]] tables or items)")
            items = ((f"{path}[{i}]", item) for i, item in enumerate(value))
        else:  # a table: only tables and arrays are ever on the stack
            items = ((f"{path}.{k}" if path else k, item) for k, item in value.items())
        stack.extend((at, item, depth + 1) for at, item in items if isinstance(item, (dict, list)))


def _merge(base: dict, override: dict, source: str, where: dict, path: str = "") -> dict:
    """`override` over `base` (tables merge key by key), recording in `where` which source set each key."""
    merged = dict(base)
    for key, value in override.items():
        at = f"{path}.{key}" if path else key
        where[at] = source
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value, source, where, at)
        elif key in _ENTRY_KEYS and isinstance(value, list) and isinstance(merged.get(key), list):
            merged[key] = _merge_entries(merged[key], value, _ENTRY_KEYS[key], source, where, at)
        else:
            merged[key] = value
            _record(value, key, at, source, where)
    return merged


def _record(value: Any, key: str, at: str, source: str, where: dict) -> None:
    """Every value below `at` was set by `source`: tables key by key, an array of tables entry by entry."""
    if isinstance(value, dict):
        for name, item in value.items():
            where[f"{at}.{name}"] = source
            _record(item, name, f"{at}.{name}", source, where)
    elif key in _ENTRY_KEYS and isinstance(value, list):
        for entry in value:
            name = _entry_key(entry, _ENTRY_KEYS[key])
            if name is not None:
                where[_entry_path(at, name)] = source


_GONE = object()


def _merge_entries(base: list, override: list, keys: tuple[str, ...], source: str, where: dict, at: str) -> list:
    """A parent's entries with the child's merged in by their key: same key replaces (the first entry of that key),
    new key appends, `remove = true` drops. The order is kept; one pass over each list, one lookup per entry.
    Entries that are not tables are left for validation to name."""
    merged = list(base)
    places: dict[Any, list[int]] = {}
    for index, entry in enumerate(merged):
        name = _entry_key(entry, keys)
        if name is not None:
            places.setdefault(name, []).append(index)
    for entry in override:
        name = _entry_key(entry, keys)
        found = places.get(name) if name is not None else None
        if isinstance(entry, dict) and entry.get("remove") is True:
            if found:
                merged[found.pop(0)] = _GONE
            continue
        if found:
            merged[found[0]] = entry
        else:
            if name is not None:
                places[name] = [len(merged)]
            merged.append(entry)
        if name is not None:
            where[_entry_path(at, name)] = source
    return [entry for entry in merged if entry is not _GONE]


def _entry_key(entry: Any, keys: tuple[str, ...]) -> Optional[tuple]:
    """What names an entry of an array of tables: its values of `keys` (a name canonical), None for none."""
    if not isinstance(entry, dict):
        return None
    found = tuple((k, canonical_name(entry[k]) if isinstance(entry[k], str) else entry[k]) for k in keys if k in entry)
    if any(isinstance(v, (dict, list)) for _, v in found):
        return None  # not a name: validation says so
    return found or None


def _entry_path(at: str, name: tuple) -> str:
    """How `origins` names an entry: 'packages[name=apache-tvm-ffi]'."""
    return f"{at}[{','.join(f'{k}={v}' for k, v in name)}]"


# --------------------------------------------------------------------------------------------------------------
# Validation: one small reader per value type, each naming the key it failed on.


class _Table:
    """A TOML table being read: every key must be known, and every value of the expected type. An error names the
    file that set the value (`origins`), and shows the value only where PolicyError may."""

    def __init__(self, data: Any, origins: "_Origins", path: str, origin: Optional[str] = None):
        self.origins, self.path = origins, path
        self.origin = origin  # an entry of an array of tables: one file set all of it
        if not isinstance(data, dict):
            raise self._error(None, data, "a table")
        self.data, self.used = data, set()

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def _error(self, name: Optional[str], value: Any, expected: str, show: bool = True) -> PolicyError:
        key = self.key(name) if name is not None else self.path or "(top level)"
        source = self.origin or self.origins.of(key)
        return PolicyError(source, key, value, expected, show and self.origins.shows(source))

    def raw(self, name: str, default: Any = _MISSING) -> Any:
        self.used.add(name)
        value = self.data.get(name, default)
        if value is _MISSING:
            raise self._error(name, _MISSING, "a value (the key is required)")
        return value

    def get(self, name: str, parse: Callable[[Any], Any], expected: str, default: Any = _MISSING) -> Any:
        if name not in self.data and default is not _MISSING:
            self.used.add(name)
            return default
        value = self.raw(name)
        if isinstance(value, str) and len(value) > _MAX_TEXT:
            raise self._error(name, value, f"{expected}, of at most {_MAX_TEXT} characters")
        try:
            return parse(value)
        except (TypeError, ValueError, InvalidSpecifier, InvalidVersion, InvalidRequirement):
            raise self._error(name, value, expected) from None

    def text(self, name: str, default: Any = _MISSING) -> str:
        return self.get(name, _string, "a string", default)

    def table(self, name: str) -> "_Table":
        return _Table(self.raw(name), self.origins, self.key(name), self.origin)

    def tables(self, name: str, default: Any = _MISSING) -> list["_Table"]:
        value = self.raw(name, default)
        if not isinstance(value, list):
            raise self._error(name, value, "an array of tables ([[...]])")
        at = self.key(name)
        keys = _ENTRY_KEYS.get(name)
        tables = []
        for index, item in enumerate(value):
            entry = _entry_key(item, keys) if keys else None
            origin = self.origin or self.origins.where.get(_entry_path(at, entry) if entry else at, self.origins.of(at))
            tables.append(_Table(item, self.origins, f"{at}[{index}]", origin))
        return tables

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            known = ", ".join(sorted(self.used))
            raise self._error(unknown[0], self.data[unknown[0]], f"no such key here (known: {known})", show=False)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError
    return value


# What a requirement or a version specifier may be written with: names, extras, versions, operators. Such a string
# reaches pip's argv, a constraints file pip reads line by line and printed `$` commands; `===` (arbitrary equality)
# would otherwise take `$`, backquotes or a final backslash.
_REQUIREMENT_CHARACTERS = re.compile(r"[A-Za-z0-9 .,*+!<>=~\[\]_-]*")


def _plain_requirement_text(value: Any) -> str:
    text = _string(value)
    if not _REQUIREMENT_CHARACTERS.fullmatch(text):
        raise ValueError
    return text


def _specifier(value: Any) -> SpecifierSet:
    return SpecifierSet(_plain_requirement_text(value))


def _version(value: Any) -> Version:
    return Version(_string(value))


def _capability(value: Any) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)\.(\d)", _string(value))
    if not match:
        raise ValueError
    return int(match[1]), int(match[2])


def _requirement(value: Any) -> Requirement:
    requirement = Requirement(_plain_requirement_text(value))
    if requirement.url or requirement.marker:
        raise ValueError  # pins are names and versions; sources come from flags, not the policy
    return requirement


def _distribution_name(value: Any) -> str:
    name = _string(value)
    if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", name):
        raise ValueError
    return canonical_name(name)


def _name_prefix(value: Any) -> str:
    prefix = _string(value)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", prefix):
        raise ValueError
    return canonical_name(prefix)


def _url(value: Any) -> str:
    url = _string(value)
    if "://" not in url:
        raise ValueError  # a policy names a URL, not a folder of this machine
    try:
        return checked_url(url)
    except UsageError:
        raise ValueError from None


def _index_url(value: Any) -> str:
    try:
        return checked_index_url(_string(value))
    except UsageError:
        raise ValueError from None


def _git_ref(value: Any) -> str:
    ref = _string(value)
    if not _GIT_REF.fullmatch(ref) or ".." in ref:
        raise ValueError
    return ref


def _sha(value: Any) -> str:
    sha = _string(value)
    if not _SHA.fullmatch(sha):
        raise ValueError
    return sha


# A folder inside a repository or a site directory: names of letters, digits, '_', '.', '+', '-' (none starting with
# '.' or '-', so no '..' and nothing option-like), joined by '/'. It reaches git's argv, the Dockerfile's RUN lines
# and printed commands, where any other character (a space, '$', a backquote, a quote, a line break) could mean more.
_RELATIVE_PATH = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_.+-]*(/[A-Za-z0-9_+][A-Za-z0-9_.+-]*)*")
_RELATIVE_PATH_EXPECTED = ("a relative path inside the repository: names of letters, digits, '_', '.', '+' or '-' "
                           "joined by '/' (no '..', no leading '/', '.' or '-', no spaces or other characters)")


def _relative_path(value: Any) -> str:
    path = _string(value)
    if not _RELATIVE_PATH.fullmatch(path):
        raise ValueError
    return path


def _one_line(value: Any) -> str:
    """A text shown on one line (a title): no line break, control or invisible formatting character."""
    text = _string(value)
    if unsafe_character(text) is not None:
        raise ValueError
    return text


def _status(value: Any) -> Status:
    status = Status(_string(value))
    if status not in (Status.PASS, Status.WARN, Status.FAIL):
        raise ValueError
    return status


def _level(value: Any) -> str:
    if value not in ("required", "recommended"):
        raise ValueError
    return value


def _extras(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise TypeError
    return tuple(_distribution_name(v) for v in value)


def _basis(value: Any) -> str:
    if value not in (RUNTIME, RECIPE):
        raise ValueError
    return value


def _matching(pattern: str) -> Callable[[Any], str]:
    """A parser of strings that match pattern whole."""

    def parse(value: Any) -> str:
        text = _string(value)
        if not re.fullmatch(pattern, text):
            raise ValueError
        return text

    return parse


_apt_package = _matching(r"(?:[a-z0-9][a-z0-9+.-]+)?")  # a Debian package name ('cuda-compat-13-1'), or none
_module = _matching(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")  # 'cutlass', 'cutlass.operators'
_backend_name = _matching(r"[A-Z][A-Z0-9_]*")  # 'NVGEMM', 'CUTEDSL'


def _names(parse: Callable[[Any], str]) -> Callable[[Any], tuple[str, ...]]:
    def parse_all(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise TypeError
        return tuple(parse(v) for v in value)

    return parse_all


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError
    return value


def _requirement_text(value: Any) -> str:
    return str(_requirement(value))


_CAPABILITIES = "a compute-capability specifier such as '>=10.0,<11'"


def _rule(table: _Table, name_key: str, level: str = "required") -> PackageRule:
    """A requirement table: [[packages]] entries and [cutedsl]."""
    return PackageRule(
        name=table.get(name_key, _distribution_name, "a distribution name"),
        specifier=table.get("version", _specifier, "a version specifier such as '==0.1.7' or '' for any", SpecifierSet()),
        level=table.get("level", _level, "'required' or 'recommended'", level),
        why=table.text("why", ""),
        basis=table.get("basis", _basis, "'runtime' or 'recipe'", RUNTIME),
        runtime=table.get("runtime", _specifier, "a version specifier (the part of a recipe requirement that is runtime)", SpecifierSet()),
        runtime_on=table.get("runtime-on", _specifier, _CAPABILITIES, None),
        recipe_note=table.text("recipe-note", ""),
        extras=table.get("extras", _extras, "a list of extra names", ()),
        module=table.get("module", _module, "a module name such as 'nvMatmulHeuristics'", None),
        module_dirs=table.get("module-dirs", _names(_relative_path), f"a list, each {_RELATIVE_PATH_EXPECTED}", ()),
    )


def _package(table: _Table) -> PackageRule:
    rule = _rule(table, "name")
    table.done()
    return rule


def _stand_in(table: _Table) -> StandIn:
    stand_in = StandIn(
        missing=table.get("missing", _distribution_name, "a distribution name"),
        present=table.get("present", _distribution_name, "a distribution name"),
        why=table.text("why", ""),
    )
    table.done()
    return stand_in


def _conflict(entry: _Table) -> Conflict:
    name, prefix = entry.raw("name", None), entry.raw("prefix", None)
    if (name is None) == (prefix is None):
        raise entry._error("name", name, "exactly one of 'name' or 'prefix'")
    if name is not None:
        match, is_prefix = entry.get("name", _distribution_name, "a distribution name"), False
    else:
        match, is_prefix = entry.get("prefix", _name_prefix, "a distribution name prefix"), True
    conflict = Conflict(
        match, is_prefix, entry.text("why", ""),
        version=entry.get("version", _specifier, "a version specifier such as '<4.4'", SpecifierSet()),
        torch_cuda=entry.get("torch-cuda", _specifier, "a CUDA version specifier such as '>=13'", None),
        unless=entry.get("unless", _distribution_name, "a distribution name", None),
        status=entry.get("status", _status, "'pass', 'warn' or 'fail'", Status.FAIL),
        instead=entry.get("instead", _requirement_text, "a requirement such as 'nvidia-cutlass-dsl[cu13]>=4.8'", None),
        consent=entry.get("consent", _bool, "true or false", False),
    )
    entry.done()
    return conflict


def _smoke(top: _Table, backend: str) -> SmokeSpec:
    if "smoke" not in top.data:
        top.used.add("smoke")
        return SmokeSpec((backend,))
    table = top.table("smoke")
    extra = []
    for entry in table.tables("capability-backends", []):
        extra.append((entry.get("capability", _specifier, _CAPABILITIES),
                      entry.get("backends", _names(_backend_name), "a list of Inductor backend names")))
        entry.done()
    spec = SmokeSpec(
        backends=table.get("backends", _names(_backend_name), "a list of Inductor backend names such as ['NVGEMM']", (backend,)),
        capability_backends=tuple(extra),
        call_pattern=table.get("call-pattern", _regex, "a regular expression", ""),
        kernel_pattern=table.get("kernel-pattern", _regex, "a regular expression", ""),
        imports=table.get("imports", _names(_module), "a list of module names", ()),
        library=table.get("library", _module, "a module name such as 'cutlass.operators'", ""),
    )
    table.done()
    return spec


def _regex(value: Any) -> str:
    pattern = _string(value)
    try:
        re.compile(pattern)
    except re.error:
        raise ValueError from None
    return pattern


def _cutlass(top: _Table) -> Optional[CutlassSource]:
    if "cutlass" not in top.data:
        top.used.add("cutlass")
        return None
    cutlass = top.table("cutlass")
    source = CutlassSource(
        url=cutlass.get("url", _url, "an https, ssh or file URL"),
        branch=cutlass.get("branch", _git_ref, "a git branch name"),
        commit=cutlass.get("commit", _sha, "a full 40-character commit SHA"),
        subdir=cutlass.get("subdir", _relative_path, _RELATIVE_PATH_EXPECTED),
        distribution=cutlass.get("distribution", _distribution_name, "a distribution name"),
        module=cutlass.get("module", _module, "a module name"),
        extras=cutlass.get("extras", _extras, "a list of extra names", ()),
        why=cutlass.text("why", ""),
    )
    cutlass.done()
    return source


def _build(data: dict, origins: _Origins) -> Policy:
    source = origins.named
    top = _Table(data, origins, "")
    schema = top.raw("schema", SCHEMA)
    if type(schema) is not int or schema != SCHEMA:  # not true (a bool is an int), not 1.0 (equal to 1)
        raise top._error("schema", schema, f"the integer {SCHEMA} (this envcheck reads schema {SCHEMA})")

    python = top.table("python")
    torch = top.table("torch")
    cuda = top.table("cuda")
    cutedsl = top.table("cutedsl")

    floors = []
    for entry in cuda.tables("driver-floor"):
        floors.append((entry.get("cuda", _version, "a CUDA version such as '13.1'"),
                       entry.get("driver", _version, "a driver version such as '590.44.01'")))
        entry.done()
    if not floors:
        raise cuda._error("driver-floor", [], "at least one [[cuda.driver-floor]] entry")

    gpus = []
    for entry in top.tables("gpu", []):
        gpus.append(GpuRule(
            capability=entry.get("capability", _capability, "a compute capability such as '9.0'"),
            status=entry.get("status", _status, "'pass', 'warn' or 'fail'"),
            kernels=entry.text("kernels"),
            gpus=entry.text("gpus", ""),
        ))
        entry.done()
    below_table = top.table("gpu-below")
    gpu_below = GpuRule(
        capability=below_table.get("capability", _capability, "a compute capability such as '8.0'"),
        status=below_table.get("status", _status, "'pass', 'warn' or 'fail'"),
        kernels=below_table.text("kernels"),
    )
    gpu_why = below_table.text("why", "")
    below_table.done()

    inductor_modules: tuple[str, ...] = ()
    if "inductor" in top.data:
        inductor = top.table("inductor")
        inductor_modules = inductor.get("modules", _names(_module), "a list of module names such as ['cutlass', 'cutlass_api']")
        inductor.done()
    else:
        top.used.add("inductor")

    torch_range = torch.get("version", _specifier, "a version specifier such as '>=2.11'")
    backend = top.get("backend", _backend_name, "an Inductor backend name such as 'NVGEMM'")
    dsl = _rule(cutedsl, "distribution")
    policy = Policy(
        id=top.get("id", lambda v: _git_ref(v), "a profile id (letters, digits, '.', '-', '_')"),
        title=top.get("title", _one_line, "a one-line title (no line breaks, control or invisible characters)"),
        source=source,
        backend=backend,
        link=top.get("link", _url, "an https URL", ""),
        python=python.get("version", _specifier, "a version specifier such as '>=3.12'"),
        python_why=python.text("why", ""),
        torch=torch_range,
        torch_verified=torch.get("verified", _specifier, "a version specifier such as '>=2.14,<2.16'", torch_range),
        torch_cuda=torch.get("cuda", _specifier, "a CUDA version specifier such as '>=13,<14'"),
        torch_requirement=torch.get("requirement", _requirement, "a requirement such as 'torch>=2.11'"),
        torch_index_url=torch.get("index-url", _index_url, "an https or file URL of a package index", ""),
        torch_why=torch.text("why", ""),
        toolkit=cuda.get("toolkit", _specifier, "a CUDA version specifier such as '>=13.1,<14'"),
        toolkit_level=cuda.get("toolkit-level", _level, "'required' or 'recommended'", "required"),
        toolkit_requirement=cuda.get("toolkit-requirement", _requirement, "a requirement such as 'cuda-toolkit[nvcc]==13.1.*'"),
        driver_cuda=cuda.get("driver-cuda", _version, "a CUDA version such as '13.1'"),
        driver_floors=tuple(sorted(floors)),
        cuda_why=cuda.text("why", ""),
        forward_compat=cuda.get("forward-compat", _apt_package, "a Debian package name such as 'cuda-compat-13-1'", ""),
        cuda_basis=cuda.get("basis", _basis, "'runtime' or 'recipe'", RUNTIME),
        cutedsl=replace(dsl, module=dsl.module or cutedsl.get("module", _module, "a module name")),  # required here
        cutlass=_cutlass(top),
        packages=tuple(_package(t) for t in top.tables("packages", [])),
        conflicts=tuple(_conflict(t) for t in top.tables("conflicts", [])),
        stand_ins=tuple(_stand_in(t) for t in top.tables("stand-ins", [])),
        gpus=tuple(sorted(gpus, key=lambda g: g.capability)),
        gpu_below=gpu_below,
        inductor_modules=inductor_modules,
        smoke=_smoke(top, backend),
        mixed_cuda_exempt=top.get("mixed-cuda-exempt", _names(_name_prefix), "a list of distribution name prefixes", ()),
        gpu_why=gpu_why,
        origins=tuple(origins.where.items()),
    )
    for table in (python, torch, cuda, cutedsl, top):
        table.done()
    return policy
