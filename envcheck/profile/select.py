"""Which profile a run is judged by: the one choice every command makes. The profile the user named (--profile ID or
FILE, --policy its hidden alias; else [tool.envcheck] of the project's pyproject.toml), or else the built-in profile
that covers the target's torch. Without torch (none installed, or no interpreter to read it from), the profile of the
torch a plain `pip install torch` gives on the target's Python (`torch.newest`, and the Python each torch needs:
[python] and [[python.by-torch]]), the others named as the other way (`--profile ID`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Union

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..errors import UsageError
from ..model import LogStack, ProfileChoice
from .build import build
from .load import _read, _read_toml, builtin_profiles, load, load_builtin
from .newest import pip_torch
from .origins import PolicyError
from .project import project_file
from .schema import DEFAULT_PROFILE, Policy, spec_text

__all__ = ["Candidates", "candidates", "builtin_only", "choose", "lower_bound", "named_profile", "resolve", "select",
           "torch_release"]

FLAG = "--profile"  # the flag that names a profile on every command; --policy is its hidden alias
NO_TARGET = "no target interpreter to read torch from"


def named_profile(profile: Optional[str], policy: Optional[str]) -> Optional[str]:
    """The one profile named on a command line: --profile ID|FILE, or its hidden alias --policy; both is an error."""
    if profile is not None and policy is not None:
        raise UsageError("--profile and --policy (its old name) both name the profile to use: give one of them")
    return profile if profile is not None else policy


def choose(named: Optional[Union[str, Path]] = None, torch: Optional[str] = None, *, target: bool = True,
           cwd: Optional[Path] = None, python: Optional[str] = None) -> tuple[Policy, ProfileChoice]:
    """The profile a command is judged by, and why: `named` (--profile ID|FILE), else the project's [tool.envcheck],
    else the built-in profile that covers `torch`, the target's (target=False: the command has no target
    interpreter), or without one the profile of what `pip install torch` gives on `python` (the target's Python:
    an interpreter's, a lock's --python-version; None: not known)."""
    return candidates(named, cwd).select(torch, target=target, python=python)


def resolve(named: Optional[Union[str, Path]] = None, cwd: Optional[Path] = None, torch: Optional[str] = None) -> Policy:
    """choose()'s profile alone."""
    return choose(named, torch, cwd=cwd)[0]


@dataclass(frozen=True)
class Candidates:
    """The profiles a run may be judged by: one the user named, or every built-in one (picked by the torch found)."""

    policies: tuple[Policy, ...]
    reason: Optional[str] = None  # why, when the user named it; None: pick by the installed torch

    @property
    def probe_modules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for p in self.policies for m in p.probe_modules))

    @property
    def torch_values(self) -> tuple[tuple[str, str], ...]:
        """The numbers of torch's sources any of them judges by (read by the probe)."""
        return tuple(dict.fromkeys(v for p in self.policies for v in p.torch_values))

    @property
    def variables(self) -> tuple[str, ...]:
        """The environment variables any of them judges (gathered as facts)."""
        return tuple(dict.fromkeys(v for p in self.policies for v in p.variables))

    def select(self, torch: Optional[str], *, target: bool = True, python: Optional[str] = None) -> tuple[Policy, ProfileChoice]:
        """The profile for the target's torch version (None: no torch; target=False: no target interpreter at all),
        and why; without torch, by what `pip install torch` gives on `python`, the target's Python (None: unknown)."""
        if self.reason is not None or len(self.policies) == 1:
            policy = self.policies[0]
            release = torch_release(torch)
            verified = release is None or policy.torch_verified.contains(release)
            return policy, ProfileChoice(policy.id, self.reason or "the only profile", policy.source, verified)
        return select(self.policies, torch if target else None, NO_TARGET if not target else None, python=python)


    @property
    def libraries(self) -> tuple[str, ...]:
        """The kernel-library modules of the candidates (`smoke.library`), for a log to be read for."""
        return tuple(dict.fromkeys(p.smoke.library for p in self.policies if p.smoke.library))

    def from_log(self, stack: LogStack) -> tuple[Policy, ProfileChoice]:
        """The profile for a log read without a target (explain without --python), from what the log says of its
        stack, the strongest evidence first: the torch version it names; the torch release its Inductor frames are
        ([[torch.frames]]); the one kernel library its lines go through; the folder its DSL's `cutlass` is in, where
        one profile's DSL lives there; its interpreter's Python, where one profile takes it; its lines going through
        Inductor at all: the profile of the newest torch (`torch.newest`, what `pip install torch` gives); else the
        default. Weaker evidence that points to another profile is named in the reason."""
        if self.reason is not None or len(self.policies) == 1:
            return self.select(None, target=False)
        clues = _log_clues(self.policies, stack)

        def others(chosen: Policy) -> str:
            """The weaker evidence that points to one other profile, named after the reason."""
            return "".join(f"; though {why}" for owners, why in clues if len(owners) == 1 and owners[0] is not chosen)

        if torch_release(stack.torch) is not None:
            policy, choice = select(self.policies, stack.torch)
            return policy, replace(choice, reason=f"the log names torch {stack.torch}: {choice.reason}{others(policy)}")
        decided = next(((owners[0], why) for owners, why in clues if len(owners) == 1), None)
        if decided is None:
            return select(self.policies, None, "the log names no torch and shows no one stack", python=stack.python)
        policy, why = decided
        return policy, ProfileChoice(policy.id, why + others(policy), policy.source, True)


def _log_clues(policies: tuple[Policy, ...], stack: LogStack) -> list[tuple[tuple[Policy, ...], str]]:
    """What each kind of evidence in a log says, strongest first: (the profiles it admits, why in words)."""
    clues: list[tuple[tuple[Policy, ...], str]] = []
    framed = [(p, row.torch, frame) for frame in stack.frames for p in policies for row in p.torch_frames
              if frame in row.frames]
    if framed:
        _, release, frame = framed[0]
        clues.append((tuple(dict.fromkeys(p for p, _, _ in framed)),
                      f"its Inductor frames are torch {release}'s ({frame.replace(' ', ' in ', 1)})"))
    by_library = tuple(p for p in policies if p.smoke.library and p.smoke.library in stack.libraries)
    if by_library:
        clues.append((by_library, "it goes through " + " and ".join(
            f"{p.smoke.library}, the kernel library of torch {spec_text(p.torch)}" for p in by_library)))
    if stack.dsl_folders:  # two folders: two DSLs in one log, which decide nothing together
        owners = tuple(p for p in policies if any(_dsl_lives_in(p, folder) for folder in stack.dsl_folders))
        keeps = " and ".join(f"profile {p.id}'s DSL ({spec_text(p.cutedsl.specifier)})" for p in owners)
        folders = " and ".join(f"nvidia_cutlass_dsl/{folder}" for folder in stack.dsl_folders)
        clues.append((owners, f"its DSL's `cutlass` is in {folders}, where {keeps or 'no profile'}"
                      f"{' keeps it' if len(owners) == 1 else ' keep it' if owners else ' keeps its DSL'}"))
    if stack.python:
        owners = tuple(p for p in policies if p.python.contains(stack.python))
        clues.append((owners, f"its interpreter is Python {stack.python} ({stack.site or 'its site directory'}), "
                      f"which {' and '.join(f'{p.id} ({spec_text(p.python)})' for p in owners) or 'no profile'} takes"))
    newest = pip_torch(policies, None)  # the profile of the newest torch, on a Python that takes it
    if (stack.inductor or stack.nvgemm) and not by_library and newest is not None:
        code = "Inductor's NVGEMM code (nv_universal_gemm)" if stack.nvgemm else "Inductor (torch/_inductor)"
        clues.append(((newest.policy,), f"the log goes through {code} and shows no torch version, kernel library, DSL "
                      f"or Python of one stack: judged as torch {newest.newest}, what `pip install torch` gives today"))
    return clues


def _dsl_lives_in(policy: Policy, folder: str) -> bool:
    """Whether a DSL the profile takes keeps its `cutlass` in nvidia_cutlass_dsl/<folder> ([cutedsl] module-dirs)."""
    wanted = policy.cutedsl.specifier
    versions = [lower_bound(wanted), *(Version(s.version) for s in wanted if s.operator in ("<=", "=="))]
    return any(dirs_spec.contains(version) and any(d.rstrip("/").endswith(f"/{folder}") for d in dirs)
               for dirs_spec, dirs in policy.cutedsl.module_dirs for version in versions)


def candidates(named: Optional[Union[str, Path]] = None, cwd: Optional[Path] = None) -> Candidates:
    """--profile ID|FILE (a built-in id, else a file), [tool.envcheck] of the nearest pyproject.toml, or else every
    built-in profile. A built-in id always means the built-in profile: a file or folder of that name in the current
    folder (a venv called torch-2.11-nvgemm, a file someone else left in a shared folder) is named as a path,
    ./torch-2.11-nvgemm, never taken in its place."""
    if named is not None:
        text = str(named)
        profiles = builtin_profiles()
        if text in profiles:
            return Candidates((load_builtin(text),), f"named with {FLAG} {text}")
        if not Path(text).exists() and Path(text).suffix != ".toml" and "/" not in text:
            raise UsageError(f"{FLAG} {text!r}: expected one of the built-in profiles {', '.join(sorted(profiles))} "
                             "or a profile file (TOML)")
        return Candidates((load(Path(text)),), f"named with {FLAG} {text}")
    project = _project_profile(cwd)
    if project is not None:
        path, table = project
        source = f"{path} [tool.envcheck]"
        return Candidates((build(*_read(table, source, path.parent)),), f"[tool.envcheck] in {path}")
    return Candidates(tuple(load_builtin(name) for name in builtin_profiles()))


def _project_profile(cwd: Optional[Path]) -> Optional[tuple[Path, dict]]:
    """The project's pyproject.toml and its [tool.envcheck] table, or None where there is no such table; a
    PolicyError or UsageError where the file cannot be read as TOML or the table is no table."""
    project = project_file(cwd)  # only the repository the user is in, only files nobody else can write
    if project is None:
        return None
    tool = _read_toml(project).get("tool", {})
    table = tool.get("envcheck") if isinstance(tool, dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise PolicyError(str(project), "tool.envcheck", table, "a table")
    return project, table


def builtin_only(named: Optional[Union[str, Path]] = None, cwd: Optional[Path] = None) -> bool:
    """Whether candidates(named) reads only envcheck's own profiles, which no user input can make it refuse: a
    built-in id named, or none named and no [tool.envcheck] in the project (a pyproject.toml is read to see; one
    that cannot be read is a refusal to come: False). doctor then starts the target before they are read."""
    if named is not None:
        return str(named) in builtin_profiles()
    try:
        return _project_profile(cwd) is None
    except UsageError:
        return False


def torch_release(text: Optional[str]) -> Optional[Version]:
    """The release a torch version belongs to, for range checks: 2.14.0.dev20260101+cu130 is 2.14.0 (None: unreadable)."""
    try:
        return Version(Version(text).base_version) if text else None
    except InvalidVersion:
        return None


def lower_bound(specifier: SpecifierSet) -> Version:
    """The lowest version a specifier admits, as far as its lower bounds say: the largest of them (>=3.10 and >=3.11
    is 3.11); 0 when it has none."""
    bounds = [Version(s.version.rstrip(".*")) for s in specifier if s.operator in (">=", "==", "~=", ">", "===")]
    return max(bounds, default=Version("0"))


def _without_torch(policies: tuple[Policy, ...], default: Policy, missing: str,
                   python: Optional[str]) -> tuple[Policy, ProfileChoice]:
    """No torch to read: the profile of what `pip install torch` gives on the target's Python (pip_torch); on a
    Python no profile's torch takes, the profile of the newest torch, which a new environment gets (python.version
    then says which Python); the published recipe only where no profile knows its newest torch. The other profiles
    are named as the other way (--profile ID)."""
    found = pip_torch(policies, python)
    newest = found or pip_torch(policies, None)
    if newest is None:
        return default, ProfileChoice(default.id, f"{missing}: the published recipe is the default (--profile picks "
                                                  "another)", default.source)
    policy = newest.policy
    if found is None:
        reason = (f"{missing}, and no profile's torch takes Python {python}: judged for torch {newest.newest}, what "
                  f"`pip install torch` gives on Python {newest.needs}")
    else:
        reason = (f"{missing}{':' if python is None else ', and'} {found.said(python)}, in its range "
                  f"({spec_text(policy.torch)})")
    others = sorted((p for p in policies if p is not policy), key=lambda p: lower_bound(p.torch))
    reason += "".join(f"; for torch {spec_text(p.torch)}: {FLAG} {p.id}" for p in others)
    return policy, ProfileChoice(policy.id, reason, policy.source)


def select(policies: tuple[Policy, ...], torch: Optional[str], missing: Optional[str] = None, *,
           python: Optional[str] = None) -> tuple[Policy, ProfileChoice]:
    """The built-in profile that covers an installed torch, and why.

    No torch (`missing`: why there is none to read): the profile of the torch a plain `pip install torch` gives on
    `python`, the target's Python (pip_torch; None: not known). A torch in a profile's range: that profile
    (unverified past its `verified` range). A torch older than every range, or one whose version cannot be read: the
    published recipe, whose torch.version check then fails. Between or beyond ranges: the nearest profile below it,
    marked unverified."""
    by_id = {p.id: p for p in policies}
    default = by_id.get(DEFAULT_PROFILE, policies[0])
    version = torch_release(torch)
    if version is None and not torch:
        return _without_torch(policies, default, missing or "no torch is installed", python)
    if version is None:
        return default, ProfileChoice(default.id, f"torch {torch} is not a version envcheck can read: the published "
                                                  "recipe is the default (--profile picks another)", default.source)
    covering = [p for p in policies if p.torch.contains(version)]
    if covering:
        policy = covering[0]
        verified = policy.torch_verified.contains(version)
        reason = f"torch {torch} is in its range ({spec_text(policy.torch)})"
        if not verified:
            reason += f", newer than the versions it was verified with ({spec_text(policy.torch_verified)}): unverified"
        return policy, ProfileChoice(policy.id, reason, policy.source, verified)
    below = sorted((p for p in policies if lower_bound(p.torch) <= version), key=lambda p: lower_bound(p.torch))
    if not below:
        oldest = min(policies, key=lambda p: lower_bound(p.torch))
        return default, ProfileChoice(
            default.id, f"torch {torch} is older than every profile's range (the oldest starts at {lower_bound(oldest.torch)})",
            default.source)
    nearest = below[-1]
    return nearest, ProfileChoice(
        nearest.id, f"torch {torch} is outside every profile's range; judged by the nearest one below it ({spec_text(nearest.torch)}): unverified",
        nearest.source, verified=False)
