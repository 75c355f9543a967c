"""Mistyped copies of a real JSON document, for the readers that must refuse them naming the key (bundle manifests,
doctor reports): every key given each other JSON type, removed, or (where asked) joined by an unknown key."""

from __future__ import annotations

import json
from typing import Any, Iterator

from envcheck.userfile import type_name

# One value of each JSON type, by the name envcheck's readers give it ("expected an object").
WRONG = {"an object": {}, "an array": [1], "a string": "x", "an integer": 7, "a number": 1.5, "true or false": True,
         "null": None}


def mutations(data: Any, *, unknown: bool = False, items: int = 1, path: tuple = ()) -> Iterator[tuple[tuple, str, Any]]:
    """(path, how, new value) for every key of `data` and its first `items` items of every array: each other JSON
    type in its place, the key gone, and with `unknown` an unknown key "zz-unknown" beside the keys of every object."""
    if isinstance(data, dict):
        if unknown:
            yield path + ("zz-unknown",), "added", 1
        for key, value in data.items():
            yield path + (key,), "missing", None
            yield from mutations(value, unknown=unknown, items=items, path=path + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data[:items]):
            yield from mutations(value, unknown=unknown, items=items, path=path + (index,))
    if path:
        for name, wrong in WRONG.items():
            if name != type_name(data):
                yield path, f"as {name}", wrong


def applied(data: Any, path: tuple, how: str, value: Any) -> Any:
    """A deep copy of `data` with one mutation made."""
    data = json.loads(json.dumps(data))
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if how == "missing":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return data


def spelled(path: tuple) -> str:
    """A path as envcheck's messages spell a key: checks[0].status."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
