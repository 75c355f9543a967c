"""TOML out: the standard library reads TOML but does not write it. Enough of a writer for a lock's tables."""

from __future__ import annotations

import datetime
import json
import re
from typing import Any, Mapping


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_scalar(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _is_table_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _small(value: Any) -> bool:
    """Written inline: dicts of scalars such as hashes, dependencies' {name = ...}."""
    return isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()) and len(value) <= 2


def _table(lines: list[str], path: list[str], table: Mapping[str, Any]) -> None:
    later = []
    for key, value in table.items():
        if value is None:
            continue
        if isinstance(value, dict) and not _small(value):
            later.append((key, value, False))
        elif _is_table_list(value) and not all(_small(v) for v in value):
            later.append((key, value, True))
        else:
            lines.append(f"{_key(key)} = {_scalar(value)}")
    for key, value, many in later:
        sub = path + [_key(key)]
        if many:
            for item in value:
                lines.extend(["", f"[[{'.'.join(sub)}]]"])
                _table(lines, sub, item)
        else:
            if not all(isinstance(v, dict) and not _small(v) for v in value.values()):
                lines.extend(["", f"[{'.'.join(sub)}]"])  # a table of tables needs no header of its own
            _table(lines, sub, value)


def to_toml(data: Mapping[str, Any], header: str = "") -> str:
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    _table(lines, [], data)
    return "\n".join(lines).lstrip("\n") + "\n"
