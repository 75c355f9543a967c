"""The profile's composite values: an inline table of known keys, and the lists and tables built of fields.py's values
(module folders and CUDA flavours per version, floors beside another distribution, exempt name prefixes)."""

from __future__ import annotations

from typing import Any

from packaging.specifiers import SpecifierSet

from .fields import (_RELATIVE_PATH_EXPECTED, _distribution_name, _name_prefix, _names, _relative_path, _requirement,
                     _specifier, _string)
from .schema import Beside

__all__ = ["_BESIDE", "_MODULE_DIRS", "_besides", "_exempt", "_fields", "_flavours", "_module_dirs"]


def _fields(value: Any, keys: dict) -> dict:
    """An inline table of known keys, each read by its parser; ValueError (or TypeError) on anything else."""
    required = {k for k, (_, need) in keys.items() if need}
    if not isinstance(value, dict) or not required <= set(value) <= set(keys):
        raise ValueError
    return {key: parse(value[key]) for key, (parse, _) in keys.items() if key in value}


def _module_dirs(value: Any) -> tuple[tuple[SpecifierSet, tuple[str, ...]], ...]:
    """A list of folders (every version), or a table of version specifier -> list of folders."""
    dirs = _names(_relative_path)
    if isinstance(value, list):
        return ((SpecifierSet(), dirs(value)),)
    if not isinstance(value, dict):
        raise TypeError
    return tuple((_specifier(versions), dirs(folders)) for versions, folders in value.items())


def _flavours(value: Any) -> tuple[tuple[SpecifierSet, tuple[str, ...]], ...]:
    """A table of version specifier -> distribution names, one of which must be installed beside such a version."""
    if not isinstance(value, dict):
        raise TypeError
    return tuple((_specifier(versions), _names(_distribution_name)(names)) for versions, names in value.items())


def _besides(value: Any) -> tuple[Beside, ...]:
    if not isinstance(value, list):
        raise TypeError
    keys = {"when": (_requirement, True), "version": (_specifier, True), "source": (_string, False)}
    return tuple(Beside(**_fields(item, keys)) for item in value)


def _exempt(value: Any) -> tuple[tuple[str, SpecifierSet], ...]:
    """Name prefixes, each alone (every version) or as {prefix, version}."""
    if not isinstance(value, list):
        raise TypeError
    keys = {"prefix": (_name_prefix, True), "version": (_specifier, False)}
    found = []
    for item in value:
        entry = {"prefix": _name_prefix(item)} if isinstance(item, str) else _fields(item, keys)
        found.append((entry["prefix"], entry.get("version", SpecifierSet())))
    return tuple(found)


_BESIDE = "a list of {when = 'a requirement such as nvidia-cutlass-dsl>=4.6', version = 'a specifier', source = 'text'}"
_MODULE_DIRS = (f"a list, each {_RELATIVE_PATH_EXPECTED}; or a table of version specifier -> such a list "
                "(e.g. {'<4.6' = ['nvidia_cutlass_dsl/python_packages']})")
