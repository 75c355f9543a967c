"""Which profile a run is judged by: the one the user named (--policy, --profile, [tool.envcheck] of the project's
pyproject.toml), or the built-in profile that covers the installed torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..errors import UsageError
from ..model import ProfileChoice
from .build import build
from .load import _read, _read_toml, builtin_profiles, load, load_builtin
from .origins import PolicyError
from .project import project_file
from .schema import DEFAULT_PROFILE, Policy, spec_text

__all__ = ["Candidates", "candidates", "resolve", "select", "torch_release"]


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
            return Candidates((build(*_read(table, source, project.parent)),), f"[tool.envcheck] in {project}")
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
