"""`extends`: a profile merged over the ones it stands on, recording which file set each value.

Tables merge key by key; the arrays of tables in ENTRY_KEYS merge entry by entry on their key (the first entry of a
key is replaced in place, a new key appends, `remove = true` drops the entry); everything else is replaced. Linear:
one pass over each list, one lookup per entry.
"""

from __future__ import annotations

from typing import Any, Optional

from ..model import canonical_name

__all__ = ["ENTRY_KEYS", "merge", "merge_entries"]

# The arrays of tables that merge entry by entry under `extends`, and the key(s) that name an entry.
ENTRY_KEYS = {"packages": ("name",), "conflicts": ("name", "prefix"), "stand-ins": ("missing",), "gpu": ("capability",),
              "driver-floor": ("cuda",), "caveats": ("name",), "by-torch": ("torch",),
              "gemm-ops": ("op",), "frames": ("torch",), "more-choices": ("variable",)}


def merge(base: dict, override: dict, source: str, where: dict, path: str = "") -> dict:
    """`override` over `base` (tables merge key by key), recording in `where` which source set each key."""
    merged = dict(base)
    for key, value in override.items():
        at = f"{path}.{key}" if path else key
        where[at] = source
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value, source, where, at)
        elif key in ENTRY_KEYS and isinstance(value, list) and isinstance(merged.get(key), list):
            merged[key] = merge_entries(merged[key], value, ENTRY_KEYS[key], source, where, at)
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
    elif key in ENTRY_KEYS and isinstance(value, list):
        for entry in value:
            name = _entry_key(entry, ENTRY_KEYS[key])
            if name is not None:
                where[_entry_path(at, name)] = source


_GONE = object()


def merge_entries(base: list, override: list, keys: tuple[str, ...], source: str, where: dict, at: str) -> list:
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
