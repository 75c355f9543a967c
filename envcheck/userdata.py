"""The values inside a file the user (or a child, or a bundle) gave: TOML and JSON text read into dicts, every number
in it one envcheck can compute with, and each failure an error naming the file and the key.

What the readers of the standard library let through, and envcheck would then crash or compute nonsense with:
- an integer of more than 4,300 digits: tomllib and json raise a bare ValueError (Python's conversion limit);
- any integer past 64 bits (`0x` and 5,000 hex digits convert fine): float() of it overflows;
- `1e999`, `inf`, `nan` (TOML's literals, JSON's Infinity/NaN): an infinite time makes every ratio nonsense;
- a subnormal number (`5e-324`): a time indistinguishable from zero, which divides into infinity;
- nesting deeper than the parser's recursion: RecursionError;
- in TOML, a dotted key of many parts: tomllib takes time and memory by the square of its parts (200 KB took 24 GB).
Each is a UsageError (or the error class the caller names) saying the file, the key (`checks[3].seconds`), or the
line, and what was expected.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, Callable, Optional

from .errors import UsageError

if sys.version_info >= (3, 11):  # the one place the TOML reader is chosen: `from .userdata import tomllib`
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = ["INT_BITS", "MAX_KEY_PARTS", "key_path", "parse_json", "parse_toml", "checked_numbers", "tomllib"]

INT_BITS = 63  # the largest integer any envcheck datum holds (a size, a count, a time in ns) is below 2**63
_DIGITS = len(str(2 ** INT_BITS))  # a decimal text longer than this is out of range whatever its digits
MAX_KEY_PARTS = 32  # a profile's longest key has three; tomllib's time and memory grow with the square of the parts


class _Unreadable:
    """A number json read as text (too long to convert, or a NaN/Infinity constant): named by checked_numbers."""

    def __init__(self, text: str):
        self.text = text


def key_path(parent: str, key: object) -> str:
    """`checks[3].seconds`: an object's key after a dot (quoted when it is not a plain word), a list's index in []."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    text = str(key)
    shown = text if re.fullmatch(r"[A-Za-z0-9_-]{1,80}", text) else json.dumps(text[:80] + ("..." if len(text) > 80 else ""))
    return f"{parent}.{shown}" if parent else shown


def _number_problem(value: object) -> Optional[str]:
    if isinstance(value, _Unreadable):
        return f"{value.text[:20]}{'...' if len(value.text) > 20 else ''} is not a number envcheck can use"
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and not -(2 ** INT_BITS) <= value < 2 ** INT_BITS:
        return f"an integer of {value.bit_length()} bits, past 2^{INT_BITS}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"{value} (a number too large, or not a number)"
        if value != 0 and abs(value) < sys.float_info.min:
            return f"{value!r}, too small to tell from zero"
    return None


def checked_numbers(data: Any, what: str, error: type = UsageError) -> Any:
    """data, when every number in it is finite, normal (or zero) and an integer within 64 bits; else `error` naming
    `what` and the key. Iterative, and a key's path is spelled only for the error: as deep as the parser let it be."""
    stack: list[tuple[Optional[tuple], Any]] = [(None, data)]  # (trail: (parent's trail, key) or None, value)
    while stack:
        trail, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(((trail, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((trail, i), v) for i, v in enumerate(value))
        else:
            problem = _number_problem(value)
            if problem is not None:
                raise error(f"{what}: key {_spelled(trail)}: {problem}; expected a finite number "
                            f"(an integer below 2^{INT_BITS})")
    return data


def _spelled(trail: Optional[tuple], most: int = 12) -> str:
    """A trail of keys as key_path spells it; past `most` keys, the first and the last few around `...`."""
    keys = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    keys.reverse()
    if not keys:
        return "(top level)"
    if len(keys) <= most:
        return _spelled_keys(keys)
    head, tail = _spelled_keys(keys[: most // 2]), _spelled_keys(keys[-(most // 2):])
    return f"{head}...{tail if tail.startswith('[') else '.' + tail}"


def _spelled_keys(keys: list) -> str:
    shown = ""
    for key in keys:
        shown = key_path(shown, key)
    return shown


def parse_json(text: str, what: str, error: type = UsageError, *, expected: str = "",
               object_pairs_hook: Optional[Callable[[list], Any]] = None) -> Any:
    """JSON text as Python values, every number checked (checked_numbers). Invalid JSON, JSON nested too deeply and
    a number envcheck cannot use are `error`s naming `what` (and the key, or the line); `expected` says what the
    file should have been, after invalid JSON ("the output of `envcheck bench --json`")."""
    try:
        data = json.loads(text, parse_int=_integer, parse_constant=_Unreadable, object_pairs_hook=object_pairs_hook)
    except json.JSONDecodeError as exc:
        raise error(f"{what}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
                    + (f"; expected {expected}" if expected else "")) from None
    except RecursionError:
        raise error(f"{what}: not usable JSON: nested too deeply") from None
    return checked_numbers(data, what, error)


def _integer(text: str) -> Any:
    return int(text) if len(text.lstrip("-")) <= _DIGITS else _Unreadable(text)


# What in TOML text is not a key: strings (multi-line first) and comments. Blanked before keys are looked for, so
# that dots in a comment or inside a string never count as a key's parts.
_NOT_KEYS = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""+|\'\'\'(?:[^\']|\'(?!\'\'))*\'\'\'+'
                       r'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*', re.S)
# One part of a dotted key: a bare word (never starting inside a word) or a blanked quoted part.
_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"")"""
_DOTTED = re.compile(r"(?<![A-Za-z0-9_-])" + _KEY_PART + r"(?:[ \t]*\.[ \t]*" + _KEY_PART + r")+")
_KEY_AT_LINE = re.compile(r"^[ \t]*(?P<key>[^=\[\n]+?)[ \t]*=", re.M)
_TABLE_AT_LINE = re.compile(r"^[ \t]*\[\[?[ \t]*(?P<table>[^\]\n]+?)[ \t]*\]", re.M)


def _code(text: str) -> str:
    """text with every string's inside and every comment blanked, line breaks kept (so that line numbers hold)."""
    return _NOT_KEYS.sub(lambda m: ("" if m.group().startswith("#") else '""') + "\n" * m.group().count("\n"), text)


def _line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _key_at(text: str, code: str, at: int) -> str:
    """The key (table.key) on the line of position `at` of code (text with its strings blanked), as the text
    spells it, and the table the nearest header above it opens, as near as the text says."""
    number = _line_of(code, at) - 1
    lines = text.split("\n")
    key = _KEY_AT_LINE.match(lines[number]) if number < len(lines) else None
    header = next((found for found in map(_TABLE_AT_LINE.match, reversed(lines[:number])) if found), None)
    parts = [header["table"].strip()] if header else []
    if key is not None:
        parts.append(key["key"].strip())
    return ".".join(parts)[:120]


def parse_toml(text: str, what: str, error: type = UsageError) -> dict:
    """TOML text as a dict, every number checked (checked_numbers); invalid or too deeply nested TOML is `error`
    naming `what`, and so is a dotted key of more than MAX_KEY_PARTS parts, found in the text outside its strings
    and comments. A key stands on one line, so only a line with MAX_KEY_PARTS dots can hold one that long: text
    without such a line (every profile) is not scanned, which is most of the read's time (doctor's start-up is a
    measured goal)."""
    if any(line.count(".") >= MAX_KEY_PARTS for line in text.split("\n")):
        code = _code(text)
        for found in _DOTTED.finditer(code):
            if found.group().count(".") >= MAX_KEY_PARTS:
                raise error(f"{what}: not usable TOML: a dotted key of more than {MAX_KEY_PARTS} parts "
                            f"(line {_line_of(code, found.start())})")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what}: not valid TOML: {exc}") from None
    except RecursionError:
        raise error(f"{what}: not usable TOML: nested too deeply") from None
    except ValueError:  # Python's integer conversion limit, raised from inside tomllib
        limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
        code = _code(text)
        found = re.search(r"(?<![A-Za-z0-9_.])[+-]?(?:\d_?){%d,}" % (limit + 1), code)
        at = found.start() if found else 0
        key = _key_at(text, code, at) if found else ""
        raise error(f"{what}: key {key or '?'} (line {_line_of(code, at)}): an integer of more than {limit} digits; "
                    f"expected a finite number (an integer below 2^{INT_BITS})") from None
    return checked_numbers(data, what, error)
