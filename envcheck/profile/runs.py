"""The real runs that support a profile: its evidence file (envcheck/profile/evidence/<id>.toml, one `[[runs]]` entry
per run), read strictly: an unknown key, a key of the wrong type, a capability, outcome or date that is not one is a
UsageError naming the file and the key (exit 2). results.py makes such an entry from what a run printed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from pathlib import Path

from ..errors import UsageError
from ..model import Run, Status, canonical_name, capability_of
from ..userfile import expect, read_toml

__all__ = ["EVIDENCE", "builtin_runs", "runs_from_toml", "parse_capability", "parse_outcome", "parse_date"]

EVIDENCE = Path(__file__).parent / "evidence"  # <profile id>.toml, shipped in the wheel beside builtin/
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_OUTCOMES = (Status.PASS, Status.WARN, Status.FAIL)
# The keys of a [[runs]] entry: (key, type, required).
_KEYS = (("gpu", str, True), ("capability", str, True), ("what", str, True), ("outcome", str, True),
         ("date", str, True), ("source", str, True), ("driver", str, False), ("versions", dict, False),
         ("dsl-flavour", str, False), ("library", str, False), ("kernel", str, False), ("simulated", str, False),
         ("note", str, False), ("environment", dict, False))


@functools.lru_cache(maxsize=None)
def builtin_runs(profile_id: str) -> tuple[Run, ...]:
    """The recorded runs of a built-in profile (none when it has no evidence file)."""
    path = EVIDENCE / f"{profile_id}.toml"
    if not path.is_file():
        return ()
    what = f"evidence of built-in profile {profile_id}"
    return runs_from_toml(read_toml(path, what), what, f"envcheck/profile/evidence/{profile_id}.toml")


def runs_from_toml(data: dict, what: str, where: str = "") -> tuple[Run, ...]:
    """The `[[runs]]` of an evidence file, every key known and of its type. where: the file as a user opens it (the
    record of each run is `where runs[i]`)."""
    unknown = sorted(set(data) - {"runs"})
    if unknown:
        raise UsageError(f"{what}: key {unknown[0]} is not an evidence key (expected only [[runs]])")
    entries = expect(data.get("runs", []), list, what, "runs", toml=True)
    return tuple(replace(_entry(expect(item, dict, what, f"runs[{i}]", toml=True), what, f"runs[{i}]"),
                         recorded_in=f"{where} runs[{i}]" if where else "")
                 for i, item in enumerate(entries))


def _entry(item: dict, what: str, at: str) -> Run:
    known = {key for key, _, _ in _KEYS}
    unknown = sorted(set(item) - known)
    if unknown:
        raise UsageError(f"{what}: key {at}.{unknown[0]} is not a key of a run (known: {', '.join(sorted(known))})")
    value = {key: expect(item.get(key), kind, what, f"{at}.{key}", toml=True, present=key in item)
             for key, kind, required in _KEYS if required or key in item}
    versions = tuple((canonical_name(name), expect(v, str, what, f"{at}.versions.{name}", toml=True))
                     for name, v in value.get("versions", {}).items())
    return Run(
        gpu=value["gpu"],
        capability=parse_capability(value["capability"], what, f"{at}.capability"),
        what=value["what"],
        outcome=parse_outcome(value["outcome"], what, f"{at}.outcome"),
        date=parse_date(value["date"], what, f"{at}.date"),
        source=value["source"],
        driver=value.get("driver"),
        versions=versions,
        dsl_flavour=value.get("dsl-flavour", ""),
        library=value.get("library", ""),
        kernel=value.get("kernel", ""),
        simulated=value.get("simulated", ""),
        note=value.get("note", ""),
        environment=tuple((name, expect(v, str, what, f"{at}.environment.{name}", toml=True))
                          for name, v in value.get("environment", {}).items()),
    )


def parse_capability(text: str, what: str, key: str) -> tuple[int, int]:
    try:
        return capability_of(text)
    except ValueError:
        raise UsageError(f"{what}: key {key} = {text[:40]!r}: expected a compute capability such as '9.0'") from None


def parse_outcome(text: str, what: str, key: str) -> Status:
    if text not in {s.value for s in _OUTCOMES}:
        raise UsageError(f"{what}: key {key} = {text[:40]!r}: expected 'pass', 'warn' or 'fail'")
    return Status(text)


def parse_date(text: str, what: str, key: str) -> str:
    """A day of the calendar, YYYY-MM-DD (not 2026-13-45); else a UsageError naming the key."""
    import datetime

    try:
        valid = bool(_DATE.fullmatch(text)) and bool(datetime.date.fromisoformat(text))
    except ValueError:
        valid = False
    if not valid:
        raise UsageError(f"{what}: key {key} = {text[:40]!r}: expected a date YYYY-MM-DD")
    return text
