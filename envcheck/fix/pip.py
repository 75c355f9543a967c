"""pip in the target interpreter: validated sources and requirements, and the exact argv of every pip call.

Nothing here runs anything. Every value that came from
a policy file, a flag or the environment is checked before it is put into an argv: requirement strings are parsed with packaging and written back in their normalised form, URLs
are limited to https and file, paths are made absolute, and every value is joined to its option (`--index-url=URL`)
or placed after `--`, so none of them can become a pip option of its own.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence
from urllib.parse import urlparse

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from ..errors import UsageError
from ..gitsafe import checked_index_url
from ..model import canonical_name, is_distribution_name
from ..piprun import ISOLATED
from ..redact import redact_url

__all__ = [
    "PipSources",
    "sources_from_flags",
    "parse_requirement",
    "requirement_names",
    "merge_requirements",
    "checked_name",
    "install_argv",
    "uninstall_argv",
    "pip_prefix",
]

# Options every pip call gets: never ask, never nag, and take no option from PIP_* variables or the user's pip
# configuration files (envcheck/piprun). The runner removes PIP_CONFIG_FILE too, so pip reads exactly the
# machine-wide files (global, the environment's own): an administrator's mirror, CA bundle and proxy apply.
_QUIET = ("--disable-pip-version-check", "--no-input", ISOLATED)


@dataclass(frozen=True)
class PipSources:
    """Where pip may take packages from, as the user said with --find-links, --index-url and --no-index."""

    find_links: tuple[str, ...] = ()  # absolute directories
    index_url: str = ""
    no_index: bool = False
    break_system_packages: bool = False  # the user's consent to change an externally managed interpreter

    @property
    def given(self) -> bool:
        """The user chose the sources: they replace any index a step would bring."""
        return bool(self.find_links or self.index_url or self.no_index)

    def options(self, step_index_url: str = "") -> tuple[str, ...]:
        """pip options for these sources; a step's own index (torch's CUDA index) only when the user chose none."""
        out: list[str] = ["--break-system-packages"] if self.break_system_packages else []
        if self.no_index:
            out.append("--no-index")
        index = self.index_url or ("" if self.given else step_index_url)
        if index and not self.no_index:
            out.append(f"--index-url={checked_index_url(index, '--index-url')}")
        out += [f"--find-links={path}" for path in self.find_links]
        return tuple(out)

    def to_json(self) -> dict:
        return {"find_links": list(self.find_links), "index_url": redact_url(self.index_url), "no_index": self.no_index}


def sources_from_flags(
    find_links: Sequence[str] = (), index_url: Optional[str] = None, no_index: bool = False,
    break_system_packages: bool = False,
) -> PipSources:
    """Check the source flags; a mistake is a UsageError naming the flag."""
    links = []
    for value in find_links:
        if value.startswith("file://"):
            value = urlparse(value).path
        if not value or any(ord(ch) < 32 for ch in value):
            raise UsageError(f"--find-links {value!r}: expected a directory of wheels")
        path = Path(value).expanduser().absolute()
        if not path.is_dir():
            raise UsageError(f"--find-links {value!r}: no such directory (expected a directory of wheels)")
        links.append(str(path))
    if index_url is not None:
        checked_index_url(index_url, "--index-url")
    if no_index and index_url:
        raise UsageError("--index-url and --no-index cannot be used together")
    return PipSources(tuple(links), index_url or "", bool(no_index), bool(break_system_packages))


def parse_requirement(text: str, origin: str = "a requirement") -> Requirement:
    """A requirement pip may be given: a name, extras, a version specifier; no URL, nothing that looks like an option."""
    if not isinstance(text, str) or text.strip().startswith("-"):
        raise UsageError(f"{origin}: {text!r} is not a requirement")
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise UsageError(f"{origin}: {text!r} is not a requirement: {exc}") from None
    if requirement.url:
        raise UsageError(f"{origin}: {text!r} names a URL; envcheck takes packages only from --find-links/--index-url")
    return requirement


def checked_name(name: str, origin: str = "a distribution name") -> str:
    if not isinstance(name, str) or not is_distribution_name(name):
        raise UsageError(f"{origin}: {name!r} is not a distribution name")
    return canonical_name(name)


def merge_requirements(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    """One requirement per distribution: extras joined, specifiers intersected, markers kept when all agree.

    The order of first appearance is kept, so a plan's argv is stable.
    """
    merged: dict[str, Requirement] = {}
    for requirement in requirements:
        key = canonical_name(requirement.name)
        if key not in merged:
            merged[key] = Requirement(str(requirement))
            continue
        previous = merged[key]
        combined = Requirement(previous.name)
        combined.extras = set(previous.extras) | set(requirement.extras)
        combined.specifier = SpecifierSet(str(previous.specifier & requirement.specifier))
        combined.marker = previous.marker if str(previous.marker) == str(requirement.marker) else None
        merged[key] = combined
    return tuple(merged.values())


def _normalised(requirement: Requirement) -> str:
    text = str(requirement)
    if text.startswith("-"):  # cannot happen for a parsed Requirement; kept as a last guard
        raise UsageError(f"{text!r} is not a requirement")
    return text


def pip_prefix(target: str, target_has_pip: bool, own_python: Optional[str] = None) -> tuple[str, ...]:
    """How to run pip for the target: its own pip, or (a venv made without pip) envcheck's pip with --python.

    Either way pip acts on the target interpreter's environment, never on envcheck's.
    """
    if target_has_pip:
        return (target, "-m", "pip")
    return (own_python or sys.executable, "-m", "pip", f"--python={_absolute(target)}")


def install_argv(
    pip: Sequence[str],
    requirements: Sequence[Requirement] = (),
    *,
    sources: PipSources = PipSources(),
    step_index_url: str = "",
    constraints: Optional[str] = None,
    editable: Optional[str] = None,
    target: Optional[str] = None,
    no_deps: bool = False,
    reinstall: bool = False,
    upgrade: bool = False,
    build_isolation: bool = True,
) -> tuple[str, ...]:
    """`<pip> install ...` with every value joined to its option or after `--`. pip is pip_prefix()'s value."""
    argv = [*pip, "install", *_QUIET]
    if reinstall:
        argv.append("--force-reinstall")
    if upgrade:
        argv.append("--upgrade")
    if no_deps:
        argv.append("--no-deps")
    if not build_isolation:
        argv.append("--no-build-isolation")
    argv += sources.options(step_index_url)
    if constraints:
        argv.append(f"--constraint={_absolute(constraints)}")
    if target:
        argv.append(f"--target={_absolute(target)}")
    if editable:
        argv.append(f"--editable={_absolute(editable)}")
    if requirements:
        argv += ["--", *(_normalised(r) for r in requirements)]
    return tuple(argv)


def uninstall_argv(pip: Sequence[str], names: Sequence[str], sources: PipSources = PipSources()) -> tuple[str, ...]:
    extra = ("--break-system-packages",) if sources.break_system_packages else ()
    return (*pip, "uninstall", *_QUIET, *extra, "--yes", "--", *(checked_name(n) for n in names))


def requirement_names(argv: Sequence[str]) -> list[str]:
    """The distribution names a pip argv installs or removes: what follows its `--`."""
    if "--" not in argv:
        return []
    names = []
    for text in argv[list(argv).index("--") + 1:]:
        try:
            names.append(Requirement(text).name)
        except InvalidRequirement:  # a plain distribution name for uninstall
            names.append(text)
    return names


def _absolute(path: str) -> str:
    """A path made absolute, so it can never start with '-'. Extras in brackets ("dir[torch]") are kept."""
    base, bracket, extras = path.partition("[")
    absolute = os.path.abspath(os.path.expanduser(base))
    return absolute + (bracket + extras if bracket else "")
