"""The policy: what the stack must look like, read from a TOML profile and validated the moment it is read.

A profile is a TOML file (the built-in ones live in envcheck/profiles/). It may start from another with
`extends = "<built-in id or path>"` and override any key; `[tool.envcheck]` in a pyproject.toml is read the same way.
Every requirement string is parsed with packaging here, so a bad value is reported with its file and key before
anything runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .errors import UsageError
from .gitsafe import checked_url
from .userfile import parse_toml, read_toml
from .model import Status, canonical_name

__all__ = [
    "DEFAULT_PROFILE",
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

DEFAULT_PROFILE = "torch-2.11-nvgemm"
SCHEMA = 1
_GIT_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_CHECK_ID = re.compile(r"^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$")


class PolicyError(UsageError):
    """A profile that cannot be used: names the file, the key, the value and what was expected."""

    def __init__(self, source: str, key: str, value: Any, expected: str):
        self.source, self.key, self.value, self.expected = source, key, value, expected
        shown = "(missing)" if value is _MISSING else _shown(value)
        key_shown = key if len(key) <= _SHOWN_CHARS else f"{key[:_SHOWN_CHARS]}..."
        super().__init__(f"{source}: key '{key_shown}' = {shown}: expected {expected}")


_MISSING = object()
_SHOWN_CHARS = 200  # of a bad value, in an error message
_MAX_TEXT = 4096  # characters of any one value: a branch name or a URL is far shorter, a why a paragraph


def _shown(value: Any) -> str:
    """A value as an error message shows it: its repr, cut short so that a huge value is not echoed in full."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS]}... ({len(text)} characters)"


@dataclass(frozen=True)
class PackageRule:
    name: str  # canonical distribution name
    specifier: SpecifierSet
    level: str  # "required" (fail) or "recommended" (warn)
    why: str

    @property
    def requirement(self) -> str:
        """What pip is asked for: the name with the policy's versions."""
        return f"{self.name}{self.specifier}"


@dataclass(frozen=True)
class Conflict:
    """A distribution that must not be installed: an exact name, or every name with a prefix."""

    match: str
    is_prefix: bool
    why: str

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
class Policy:
    id: str
    title: str
    source: str  # where it was read from, for messages
    backend: str
    link: str
    python: SpecifierSet
    python_why: str
    torch: SpecifierSet
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
    cutedsl: PackageRule
    cutedsl_module: str
    cutlass: CutlassSource
    packages: tuple[PackageRule, ...]
    conflicts: tuple[Conflict, ...]
    stand_ins: tuple[StandIn, ...]
    gpus: tuple[GpuRule, ...]  # ascending by capability
    gpu_below: GpuRule

    @property
    def driver_floor(self) -> Version:
        """The oldest driver that supports the policy's CUDA."""
        return driver_floor_for(self.driver_floors, self.driver_cuda)


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
    folder = Path(__file__).parent / "profiles"  # a plain directory in the wheel; importlib.resources costs start-up
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.toml"))}


def resolve(policy_file: Optional[Path] = None, cwd: Optional[Path] = None) -> Policy:
    """The policy in force: --policy FILE, else [tool.envcheck] of the nearest pyproject.toml, else the default."""
    if policy_file is not None:
        return load(policy_file)
    project = _nearest_pyproject(cwd or Path.cwd())
    if project is not None:
        table = _read_toml(project).get("tool", {}).get("envcheck")
        if table is not None:
            if not isinstance(table, dict):
                raise PolicyError(str(project), "tool.envcheck", table, "a table")
            return _build(_with_base(table, f"{project} [tool.envcheck]", project.parent), f"{project} [tool.envcheck]")
    return load_builtin(DEFAULT_PROFILE)


def load(path: Path) -> Policy:
    """A profile file, or a built-in profile id."""
    if not Path(path).exists() and str(path) in builtin_profiles():
        return load_builtin(str(path))
    data = _read_toml(Path(path))
    return _build(_with_base(data, str(path), Path(path).parent), str(path))


def load_builtin(profile_id: str) -> Policy:
    profiles = builtin_profiles()
    if profile_id not in profiles:
        raise PolicyError("--policy", "extends", profile_id, f"a file or one of the built-in profiles {sorted(profiles)}")
    source = f"built-in profile {profile_id}"
    return _build(_parse_toml(profiles[profile_id], source), source)


def _nearest_pyproject(start: Path) -> Optional[Path]:
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _read_toml(path: Path) -> dict:
    return read_toml(path, f"policy file {path}")


def _parse_toml(text: str, source: str) -> dict:
    return parse_toml(text, source)


def _with_base(data: dict, source: str, folder: Path, depth: int = 0) -> dict:
    """Merge a profile over the one it extends (tables merge key by key; everything else replaces)."""
    data = dict(data)
    base_name = data.pop("extends", None)
    if base_name is None:
        return data
    if not isinstance(base_name, str) or depth > 8:
        raise PolicyError(source, "extends", base_name, "a built-in profile id or a path to a profile, without cycles")
    profiles = builtin_profiles()
    if base_name in profiles:
        base = _parse_toml(profiles[base_name], f"built-in profile {base_name}")
    else:
        base_path = (folder / base_name).resolve()
        if not base_path.is_file():
            raise PolicyError(source, "extends", base_name, f"a file or one of the built-in profiles {sorted(profiles)}")
        base = _with_base(_read_toml(base_path), str(base_path), base_path.parent, depth + 1)
    return _merge(base, data)


def _merge(base: dict, override: dict) -> dict:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# --------------------------------------------------------------------------------------------------------------
# Validation: one small reader per value type, each naming the key it failed on.


class _Table:
    """A TOML table being read: every key must be known, and every value of the expected type."""

    def __init__(self, data: Any, source: str, path: str):
        if not isinstance(data, dict):
            raise PolicyError(source, path or "(top level)", data, "a table")
        self.data, self.source, self.path, self.used = data, source, path, set()

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def raw(self, name: str, default: Any = _MISSING) -> Any:
        self.used.add(name)
        value = self.data.get(name, default)
        if value is _MISSING:
            raise PolicyError(self.source, self.key(name), _MISSING, "a value (the key is required)")
        return value

    def get(self, name: str, parse: Callable[[Any], Any], expected: str, default: Any = _MISSING) -> Any:
        if name not in self.data and default is not _MISSING:
            self.used.add(name)
            return default
        value = self.raw(name)
        if isinstance(value, str) and len(value) > _MAX_TEXT:
            raise PolicyError(self.source, self.key(name), value, f"{expected}, of at most {_MAX_TEXT} characters")
        try:
            return parse(value)
        except (TypeError, ValueError, InvalidSpecifier, InvalidVersion, InvalidRequirement):
            raise PolicyError(self.source, self.key(name), value, expected) from None

    def text(self, name: str, default: Any = _MISSING) -> str:
        return self.get(name, _string, "a string", default)

    def table(self, name: str) -> "_Table":
        return _Table(self.raw(name), self.source, self.key(name))

    def tables(self, name: str, default: Any = _MISSING) -> list["_Table"]:
        value = self.raw(name, default)
        if not isinstance(value, list):
            raise PolicyError(self.source, self.key(name), value, "an array of tables ([[...]])")
        return [_Table(item, self.source, f"{self.key(name)}[{i}]") for i, item in enumerate(value)]

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            known = ", ".join(sorted(self.used))
            raise PolicyError(self.source, self.key(unknown[0]), self.data[unknown[0]], f"no such key here (known: {known})")


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError
    return value


def _specifier(value: Any) -> SpecifierSet:
    return SpecifierSet(_string(value))


def _version(value: Any) -> Version:
    return Version(_string(value))


def _capability(value: Any) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)\.(\d)", _string(value))
    if not match:
        raise ValueError
    return int(match[1]), int(match[2])


def _requirement(value: Any) -> Requirement:
    requirement = Requirement(_string(value))
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


def _relative_path(value: Any) -> str:
    path = _string(value)
    if path.startswith(("/", "-")) or ".." in Path(path).parts or not path:
        raise ValueError
    return path


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


def _package(table: _Table) -> PackageRule:
    rule = PackageRule(
        name=table.get("name", _distribution_name, "a distribution name"),
        specifier=table.get("version", _specifier, "a version specifier such as '==0.1.7' or '' for any", SpecifierSet()),
        level=table.get("level", _level, "'required' or 'recommended'", "required"),
        why=table.text("why", ""),
    )
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


def _build(data: dict, source: str) -> Policy:
    top = _Table(data, source, "")
    schema = top.raw("schema", SCHEMA)
    if schema != SCHEMA:
        raise PolicyError(source, "schema", schema, f"{SCHEMA} (this envcheck reads schema {SCHEMA})")

    python = top.table("python")
    torch = top.table("torch")
    cuda = top.table("cuda")
    cutedsl = top.table("cutedsl")
    cutlass = top.table("cutlass")

    floors = []
    for entry in cuda.tables("driver-floor"):
        floors.append((entry.get("cuda", _version, "a CUDA version such as '13.1'"),
                       entry.get("driver", _version, "a driver version such as '590.44.01'")))
        entry.done()
    if not floors:
        raise PolicyError(source, "cuda.driver-floor", [], "at least one [[cuda.driver-floor]] entry")

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
    below_table.done()

    conflicts = []
    for entry in top.tables("conflicts", []):
        name, prefix = entry.raw("name", None), entry.raw("prefix", None)
        if (name is None) == (prefix is None):
            raise PolicyError(source, entry.key("name"), name, "exactly one of 'name' or 'prefix'")
        if name is not None:
            conflicts.append(Conflict(entry.get("name", _distribution_name, "a distribution name"), False, entry.text("why", "")))
        else:
            conflicts.append(Conflict(entry.get("prefix", _name_prefix, "a distribution name prefix"), True, entry.text("why", "")))
        entry.done()

    policy = Policy(
        id=top.get("id", lambda v: _git_ref(v), "a profile id (letters, digits, '.', '-', '_')"),
        title=top.text("title"),
        source=source,
        backend=top.get("backend", lambda v: re.fullmatch(r"[A-Z][A-Z0-9_]*", _string(v))[0], "an Inductor backend name such as 'NVGEMM'"),
        link=top.get("link", _url, "an https URL", ""),
        python=python.get("version", _specifier, "a version specifier such as '>=3.12'"),
        python_why=python.text("why", ""),
        torch=torch.get("version", _specifier, "a version specifier such as '>=2.11'"),
        torch_cuda=torch.get("cuda", _specifier, "a CUDA version specifier such as '>=13,<14'"),
        torch_requirement=torch.get("requirement", _requirement, "a requirement such as 'torch>=2.11'"),
        torch_index_url=torch.get("index-url", _url, "an https or file URL of a package index", ""),
        torch_why=torch.text("why", ""),
        toolkit=cuda.get("toolkit", _specifier, "a CUDA version specifier such as '>=13.1,<14'"),
        toolkit_level=cuda.get("toolkit-level", _level, "'required' or 'recommended'", "required"),
        toolkit_requirement=cuda.get("toolkit-requirement", _requirement, "a requirement such as 'cuda-toolkit[nvcc]==13.1.*'"),
        driver_cuda=cuda.get("driver-cuda", _version, "a CUDA version such as '13.1'"),
        driver_floors=tuple(sorted(floors)),
        cuda_why=cuda.text("why", ""),
        forward_compat=cuda.text("forward-compat", ""),
        cutedsl=PackageRule(
            name=cutedsl.get("distribution", _distribution_name, "a distribution name"),
            specifier=cutedsl.get("version", _specifier, "a version specifier such as '>=4.3.0,<=4.3.5'"),
            level="required",
            why=cutedsl.text("why", ""),
        ),
        cutedsl_module=cutedsl.get("module", lambda v: re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", _string(v))[0], "a module name"),
        cutlass=CutlassSource(
            url=cutlass.get("url", _url, "an https, ssh or file URL"),
            branch=cutlass.get("branch", _git_ref, "a git branch name"),
            commit=cutlass.get("commit", _sha, "a full 40-character commit SHA"),
            subdir=cutlass.get("subdir", _relative_path, "a relative path inside the repository"),
            distribution=cutlass.get("distribution", _distribution_name, "a distribution name"),
            module=cutlass.get("module", lambda v: re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", _string(v))[0], "a module name"),
            extras=cutlass.get("extras", _extras, "a list of extra names", ()),
            why=cutlass.text("why", ""),
        ),
        packages=tuple(_package(t) for t in top.tables("packages", [])),
        conflicts=tuple(conflicts),
        stand_ins=tuple(_stand_in(t) for t in top.tables("stand-ins", [])),
        gpus=tuple(sorted(gpus, key=lambda g: g.capability)),
        gpu_below=gpu_below,
    )
    for table in (python, torch, cuda, cutedsl, cutlass, top):
        table.done()
    return policy
