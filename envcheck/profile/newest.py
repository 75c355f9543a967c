"""What a plain `pip install torch` gives on a Python, as the profiles know it: each one's newest torch on the package
index (`torch.newest`) and the Python each torch needs ([python], [[python.by-torch]]). A target without torch is judged
by the profile of that torch (select.py); pip on the index gave torch 2.8.0 on Python 3.9, 2.14.1 on 3.10 and 2.15.0
on 3.11 to 3.14 (`pip install --dry-run --python-version X.Y torch`, 2026-12-04), which the built-in profiles say as
data: the operators profile's newest 2.15.0 needs >= 3.11, its range >= 3.10.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from packaging.version import Version

from ..model import version_or_none
from .schema import Policy, spec_text

__all__ = ["PipTorch", "pip_torch"]


@dataclass(frozen=True)
class PipTorch:
    """What a plain `pip install torch` gives on a Python, as the profiles know it: the profile that covers it, and
    the torch (None: an older one of that profile's range, the newest needing a newer Python)."""

    policy: Policy
    torch: Optional[Version]
    newest: Version  # the profile's newest torch (`torch.newest`)
    needs: str  # the Python the newest needs, in words: '>=3.11'

    def said(self, python: Optional[str]) -> str:
        """'on Python 3.11.7 `pip install torch` gives torch 2.15.0', in words (python None: not known)."""
        if python is None:
            return f"`pip install torch` gives torch {self.newest} (on Python {self.needs})"
        if self.torch is None:
            return (f"on Python {python} `pip install torch` gives a torch older than {self.newest} (which needs Python "
                    f"{self.needs})")
        return f"on Python {python} `pip install torch` gives torch {self.torch}"


def pip_torch(policies: tuple[Policy, ...], python: Optional[str]) -> Optional[PipTorch]:
    """The profile of the torch a plain `pip install torch` gives on this Python (X.Y or X.Y.Z; None: one that takes
    the newest torch), read from the profiles: each one's newest torch on the index (`torch.newest`), newest first,
    where the Python takes it ([[python.by-torch]]: torch 2.15.0 needs >= 3.11); else an older torch of that
    profile's range, where its Python range takes this Python (2.14.1 on Python 3.10). None where no profile's torch
    takes it (on Python 3.9 pip gives a torch older than every profile) or no profile knows its newest torch."""
    version = version_or_none(python)
    for policy in sorted((p for p in policies if p.torch_newest is not None), key=lambda p: p.torch_newest, reverse=True):
        wanted, ranges = policy.python_for(policy.torch_newest)
        needs = " and ".join(spec_text(r.version) for r in ranges) if ranges else spec_text(wanted)
        if version is None or wanted.contains(version):
            return PipTorch(policy, policy.torch_newest, policy.torch_newest, needs)
        if policy.python.contains(version):
            return PipTorch(policy, None, policy.torch_newest, needs)
    return None

