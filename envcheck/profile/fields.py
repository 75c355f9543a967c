"""Reading a profile's values: a table whose every key must be known (`_Table`, its errors naming the file that set
the value), and one small parser per kind of value, each raising TypeError or ValueError for `_Table.get` to name.

The names with a leading underscore are the profile package's own: build.py reads with them, nothing outside
imports them.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..errors import UsageError
from ..gitsafe import checked_index_url, checked_url, is_commit_id, is_plain_name, is_relative_path
from ..model import Status, canonical_name, capability_of, is_distribution_name
from ..shell import unsafe_character
from .merge import ENTRY_KEYS, _entry_key, _entry_path
from .origins import _MISSING, PolicyError, _Origins
from .schema import LEVELS, RECIPE, RUNTIME

_MAX_TEXT = 4096  # characters of any one value: a branch name or a URL is far shorter, a why a paragraph


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
        keys = ENTRY_KEYS.get(name)
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


_MINOR_VERSION = re.compile(r"[0-9]+\.[0-9]+")


def _minor_version(value: Any) -> str:
    """A Python version as MAJOR.MINOR ('3.12'): what a new environment's interpreter is named by (python3.12)."""
    if not _MINOR_VERSION.fullmatch(_string(value)):
        raise ValueError
    return value


def _capability(value: Any) -> tuple[int, int]:
    return capability_of(_string(value))


def _requirement(value: Any) -> Requirement:
    requirement = Requirement(_plain_requirement_text(value))
    if requirement.url or requirement.marker:
        raise ValueError  # pins are names and versions; sources come from flags, not the policy
    return requirement


def _distribution_name(value: Any) -> str:
    name = _string(value)
    if not is_distribution_name(name):
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


def _checked(accepts: Callable[[str], bool]) -> Callable[[Any], str]:
    """A string value that `accepts` takes (gitsafe's checks of a name, a commit id, a path; ValueError else)."""
    def value(raw: Any) -> str:
        text = _string(raw)
        if not accepts(text):
            raise ValueError
        return text
    return value


_git_ref = _checked(is_plain_name)
_sha = _checked(is_commit_id)


# A folder inside a repository or a site directory (gitsafe.is_relative_path says why so few characters).
_RELATIVE_PATH_EXPECTED = ("a relative path inside the repository: names of letters, digits, '_', '.', '+' or '-' "
                           "joined by '/' (no '..', no leading '/', '.' or '-', no spaces or other characters)")


_relative_path = _checked(is_relative_path)
# A text shown on one line (a title): no line break, control or invisible formatting character.
_one_line = _checked(lambda text: unsafe_character(text) is None)


def _status(value: Any) -> Status:
    status = Status(_string(value))
    if status not in (Status.PASS, Status.WARN, Status.FAIL):
        raise ValueError
    return status


def _level(value: Any) -> str:
    if value not in LEVELS:
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
_aten_op = _matching(r"[a-z_][a-z0-9_]*")  # an aten op's name: 'addmm', '_scaled_mm'
_frame = _matching(r"torch/[\w/]+\.py:[0-9]+ \w+")  # a torch frame: 'torch/_inductor/graph.py:1595 call_function'


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


def _regex(value: Any) -> str:
    pattern = _string(value)
    try:
        re.compile(pattern)
    except re.error:
        raise ValueError from None
    return pattern
