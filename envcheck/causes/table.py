"""The known-failure table (signatures.toml beside this file): read once, validated, in priority order.

Data only: what each signature means for a target (its cause sentence and remedy) is code in explanations.py, keyed
by the same id. `envcheck smoke`, `envcheck bench` and `envcheck explain` all read this one table. Each pattern is
compiled as guard.py rewrites it, so that no row's search takes more than linear time on a long line, and a row keeps
the literal text its matches hold (`needles`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Sequence

from ..model import Status
from ..profile import PolicyError
from ..userfile import tomllib
from .guard import guarded, needles

__all__ = ["ABOVE_LINES", "SignatureRow", "load_signatures", "parse_signatures", "TABLE"]

TABLE = Path(__file__).with_name("signatures.toml")
_ID = re.compile(r"^[a-z][a-z0-9-]*$")
_KEYS = {"id", "patterns", "checks", "status", "above"}
ABOVE_LINES = 3  # how far above the matched line a row's `above` line may be (a LoweringException's: the next line)


@dataclass(frozen=True)
class SignatureRow:
    """One known failure: its id, the line patterns that show it, and the doctor checks that confirm it."""

    id: str
    patterns: tuple["re.Pattern[str]", ...]
    checks: tuple[str, ...] = ()
    status: Status = Status.FAIL  # "warn": a message that names a problem without failing the run (a deprecation)
    above: Optional["re.Pattern[str]"] = None  # a line that must come at most ABOVE_LINES lines before the match's
    # Text that every match of the row holds, one of them at least (guard.needles); None: a pattern has none
    needles: Optional[tuple[str, ...]] = None

    def may_match(self, text: str) -> bool:
        """Whether text holds one of the needles every match holds (True where the row has none): the cheap test a
        reader makes before it searches text line by line."""
        return self.needles is None or any(needle in text for needle in self.needles)

    def search(self, text: str, before: Sequence[str] = ()) -> Optional["re.Match[str]"]:
        """The first match of any of its patterns in text, in pattern order. A row with `above` matches only where a
        line at most ABOVE_LINES above the match's own shows `above`: in text (a whole log, a traceback) or, for the
        first lines of text, in `before` (the lines a log had just before a line searched alone)."""
        for pattern in self.patterns:
            if self.above is None:
                found = pattern.search(text)
                if found:
                    return found
                continue
            for found in pattern.finditer(text):
                if self._above(text, found.start(), before):
                    return found
        return None

    def _above(self, text: str, at: int, before: Sequence[str]) -> bool:
        """Whether `above` shows in the match's line up to `at` or in the ABOVE_LINES lines before it."""
        start = text.rfind("\n", 0, at) + 1  # the match's own line
        up = 0
        while up < ABOVE_LINES and start > 0:
            start = text.rfind("\n", 0, start - 1) + 1
            up += 1
        window = text[start:at]
        if start == 0 and up < ABOVE_LINES and before:
            window = "\n".join((*before[-(ABOVE_LINES - up):], window))
        return self.above is not None and bool(self.above.search(window))


def parse_signatures(text: str, source: str) -> tuple[SignatureRow, ...]:
    """The table from its TOML text; a bad row names the file, the key and what was expected."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(source, "(file)", str(exc), "valid TOML") from None
    unknown = set(data) - {"signature"}
    if unknown:
        raise PolicyError(source, sorted(unknown)[0], data[sorted(unknown)[0]], "only [[signature]] tables")
    rows: list[SignatureRow] = []
    for index, row in enumerate(data.get("signature", [])):
        rows.append(_row(row, f"signature[{index}]", source, {r.id for r in rows}))
    return tuple(rows)


def _row(row: Any, where: str, source: str, seen: set[str]) -> SignatureRow:
    if not isinstance(row, dict):
        raise PolicyError(source, where, row, "a table")
    extra = sorted(set(row) - _KEYS)
    if extra:
        raise PolicyError(source, f"{where}.{extra[0]}", row[extra[0]], f"no such key here (known: {', '.join(sorted(_KEYS))})")
    sig_id = row.get("id")
    if not isinstance(sig_id, str) or not _ID.match(sig_id) or sig_id in seen:
        raise PolicyError(source, f"{where}.id", sig_id, "a new lower-case id such as 'dsl-too-new'")
    patterns = row.get("patterns")
    if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) and p for p in patterns):
        raise PolicyError(source, f"{where}.patterns", patterns, "a non-empty list of regular expressions")
    compiled = [_compiled(pattern, source, f"{where}.patterns") for pattern in patterns]
    for pattern, made in zip(patterns, compiled):
        if made.groups > 1:
            raise PolicyError(source, f"{where}.patterns", pattern, "at most one group (what the failure names)")
    checks = row.get("checks", [])
    if not isinstance(checks, list) or not all(isinstance(c, str) and c for c in checks):
        raise PolicyError(source, f"{where}.checks", checks, "a list of doctor check ids")
    status = row.get("status", "fail")
    if status not in ("fail", "warn"):
        raise PolicyError(source, f"{where}.status", status, "'fail' or 'warn'")
    above = row.get("above")
    if above is not None:
        if not isinstance(above, str) or not above:
            raise PolicyError(source, f"{where}.above", above, "a regular expression (a line that must come at most "
                              f"{ABOVE_LINES} lines before the pattern's)")
        above = _compiled(above, source, f"{where}.above")
    found = [needles(pattern) for pattern in patterns]
    held = None if None in found else tuple(dict.fromkeys(n for each in found for n in each))
    return SignatureRow(sig_id, tuple(compiled), tuple(checks), Status(status), above, held)


def _compiled(pattern: str, source: str, key: str) -> "re.Pattern[str]":
    """A row's regular expression as it is searched: guarded (guard.py) against taking more than linear time."""
    try:
        re.compile(pattern)
        return re.compile(guarded(pattern))
    except re.error as exc:
        raise PolicyError(source, key, pattern, f"a regular expression ({exc})") from None


@lru_cache(maxsize=None)
def load_signatures() -> tuple[SignatureRow, ...]:
    """The shipped table."""
    return parse_signatures(TABLE.read_text(encoding="utf-8"), str(TABLE))
