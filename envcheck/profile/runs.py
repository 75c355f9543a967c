"""The real runs that support a profile: its evidence file (envcheck/profile/evidence/<id>.toml, one `[[runs]]` entry
per run), and the reader that makes such an entry from what a run printed.

What a run printed is the format a user contributes a run in: `envcheck smoke --json` (or `doctor --smoke --json`,
whose facts also name the driver) and `envcheck bench --json`. The reader is strict: anything that is not such a
result, a smoke that did not run (skip), a GPU without its compute capability, a key of the wrong type, is a
UsageError naming the file and the key (exit 2). Nothing read here executes; a run is data.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from ..errors import UsageError
from ..model import Run, Status, canonical_name, capability_of
from ..userfile import expect, read_text, read_toml

__all__ = ["EVIDENCE", "builtin_runs", "runs_from_toml", "run_from_result", "read_run"]

EVIDENCE = Path(__file__).parent / "evidence"  # <profile id>.toml, shipped in the wheel beside builtin/
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_GPU = re.compile(r"(?P<name>.+) \((?P<capability>\d+\.\d)\)")  # a smoke's gpu: "NVIDIA H200 (9.0)"
_OUTCOMES = (Status.PASS, Status.WARN, Status.FAIL)
# The keys of a [[runs]] entry: (key, type, required).
_KEYS = (("gpu", str, True), ("capability", str, True), ("what", str, True), ("outcome", str, True),
         ("date", str, True), ("source", str, True), ("driver", str, False), ("versions", dict, False),
         ("dsl-flavour", str, False), ("library", str, False), ("kernel", str, False), ("simulated", str, False),
         ("note", str, False))


@functools.lru_cache(maxsize=None)
def builtin_runs(profile_id: str) -> tuple[Run, ...]:
    """The recorded runs of a built-in profile (none when it has no evidence file)."""
    path = EVIDENCE / f"{profile_id}.toml"
    if not path.is_file():
        return ()
    what = f"evidence of built-in profile {profile_id}"
    return runs_from_toml(read_toml(path, what), what)


def runs_from_toml(data: dict, what: str) -> tuple[Run, ...]:
    """The `[[runs]]` of an evidence file, every key known and of its type."""
    unknown = sorted(set(data) - {"runs"})
    if unknown:
        raise UsageError(f"{what}: key {unknown[0]} is not an evidence key (expected only [[runs]])")
    entries = expect(data.get("runs", []), list, what, "runs", toml=True)
    return tuple(_entry(expect(item, dict, what, f"runs[{i}]", toml=True), what, f"runs[{i}]")
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
        capability=_capability(value["capability"], what, f"{at}.capability"),
        what=value["what"],
        outcome=_outcome(value["outcome"], what, f"{at}.outcome"),
        date=_date(value["date"], what, f"{at}.date"),
        source=value["source"],
        driver=value.get("driver"),
        versions=versions,
        dsl_flavour=value.get("dsl-flavour", ""),
        library=value.get("library", ""),
        kernel=value.get("kernel", ""),
        simulated=value.get("simulated", ""),
        note=value.get("note", ""),
    )


def _capability(text: str, what: str, key: str) -> tuple[int, int]:
    try:
        return capability_of(text)
    except ValueError:
        raise UsageError(f"{what}: key {key} = {text[:40]!r}: expected a compute capability such as '9.0'") from None


def _outcome(text: str, what: str, key: str) -> Status:
    if text not in {s.value for s in _OUTCOMES}:
        raise UsageError(f"{what}: key {key} = {text[:40]!r}: expected 'pass', 'warn' or 'fail'")
    return Status(text)


def _date(text: str, what: str, key: str) -> str:
    if not _DATE.fullmatch(text):
        raise UsageError(f"{what}: key {key} = {text[:40]!r}: expected a date YYYY-MM-DD")
    return text


# --------------------------------------------------------------------------------------------------------------
# A run from what it printed


def read_run(path: Path, what: str, *, date: Optional[str] = None, source: Optional[str] = None) -> Run:
    """The run a result file records (`envcheck smoke --json`, `doctor --smoke --json`, `envcheck bench --json`);
    dated by the result itself, else `date`, else the file's modification day."""
    text = read_text(path, what)
    if date is None:
        import datetime
        import os

        date = datetime.date.fromtimestamp(os.stat(path).st_mtime).isoformat()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{what}: not JSON ({str(exc)[:120]}); expected the output of `envcheck smoke "
                         "--json`") from None
    return run_from_result(data, what, date=date, source=source or str(path))


def run_from_result(data: Any, what: str, *, date: Optional[str] = None, driver: Optional[str] = None,
                    source: Optional[str] = None) -> Run:
    """The evidence entry of one result. `date` (YYYY-MM-DD) where the result does not carry one; `driver` where
    nothing in it names the driver (a bench). source: what the entry names as its capture (default `what`)."""
    expect(data, dict, what, "(top level)")
    if isinstance(data.get("smoke"), dict):
        run = _from_smoke(data, what)
    elif isinstance(data.get("bench"), dict):
        run = _from_bench(data, what)
    else:
        raise UsageError(f"{what}: expected the output of `envcheck smoke --json` (an object with `smoke`) or of "
                         "`envcheck bench --json` (with `bench`)")
    said = data.get("date", date)
    if said is None:
        raise UsageError(f"{what}: the result does not say when it ran: give its date (YYYY-MM-DD)")
    return replace(run, date=_date(expect(said, str, what, "date"), what, "date"), driver=run.driver or driver,
                   source=source or what)


def _versions(value: Any, what: str, key: str) -> tuple[tuple[str, str], ...]:
    table = expect(value, dict, what, key)
    found = tuple((canonical_name(name), expect(v, str, what, f"{key}.{name}"))
                  for name, v in table.items() if v is not None)
    if not any(name == "torch" for name, _ in found):
        raise UsageError(f"{what}: key {key} names no torch version: expected the versions the run recorded")
    return found


def _ran(status: Any, what: str, key: str) -> Status:
    text = expect(status, str, what, key)
    if text == Status.SKIP.value:
        raise UsageError(f"{what}: key {key} is 'skip': a run that did not run is no evidence")
    return _outcome(text, what, key)


def _from_smoke(data: dict, what: str) -> Run:
    smoke = data["smoke"]
    outcome = _ran(smoke.get("status"), what, "smoke.status")
    gpu = _GPU.fullmatch(expect(smoke.get("gpu"), str, what, "smoke.gpu", present="gpu" in smoke))
    if gpu is None:
        raise UsageError(f"{what}: key smoke.gpu: expected a GPU and its compute capability, 'NVIDIA H200 (9.0)'")
    libraries = _libraries(smoke.get("process"), what)
    library = smoke.get("library")
    module = expect(library.get("module"), str, what, "smoke.library.module") if isinstance(library, dict) else ""
    if not module:
        module = _profile_library(data.get("profile"))
    driver = next((lib["version"] for lib in libraries if lib.get("kind") == "libcuda" and lib.get("version")), None)
    facts = data.get("facts")
    if driver is None and isinstance(facts, dict) and isinstance(facts.get("driver"), dict):
        driver = facts["driver"].get("version")  # doctor --smoke --json: NVML's answer
    majors = sorted({lib["cuda_major"] for lib in libraries
                     if lib.get("kind") == "dsl" and isinstance(lib.get("cuda_major"), int)})
    cause = smoke.get("cause") if outcome is Status.FAIL else None
    note = expect(cause.get("text", ""), str, what, "smoke.cause.text") if isinstance(cause, dict) else ""
    return Run(
        gpu=gpu["name"],
        capability=_capability(gpu["capability"], what, "smoke.gpu"),
        what="smoke --library" if isinstance(library, dict) else "smoke",
        outcome=outcome,
        date="",
        source="",
        driver=expect(driver, str, what, "smoke.process.libraries[libcuda].version") if driver is not None else None,
        versions=_versions(smoke.get("versions"), what, "smoke.versions"),
        dsl_flavour="+".join(f"cu{m}" for m in majors),
        library=module,
        kernel=expect(smoke.get("kernel") or "", str, what, "smoke.kernel"),
        note=note,
    )


def _libraries(process: Any, what: str) -> list[dict]:
    if process is None:
        return []
    libraries = expect(expect(process, dict, what, "smoke.process").get("libraries", []), list, what,
                       "smoke.process.libraries")
    return [expect(lib, dict, what, f"smoke.process.libraries[{i}]") for i, lib in enumerate(libraries)]


def _profile_library(profile: Any) -> str:
    """The kernel library of the built-in profile a result names (a smoke through Inductor calls it)."""
    from .load import builtin_profiles, load_builtin

    name = profile.get("id") if isinstance(profile, dict) else profile
    return load_builtin(name).smoke.library if isinstance(name, str) and name in builtin_profiles() else ""


def _from_bench(data: dict, what: str) -> Run:
    bench = data["bench"]
    outcome = _ran(bench.get("status"), what, "bench.status")
    gpu = expect(bench.get("gpu"), dict, what, "bench.gpu")
    capability = expect(gpu.get("capability"), list, what, "bench.gpu.capability")
    if len(capability) != 2 or not all(isinstance(c, int) and not isinstance(c, bool) for c in capability):
        raise UsageError(f"{what}: key bench.gpu.capability: expected [major, minor]")
    return Run(
        gpu=expect(gpu.get("name"), str, what, "bench.gpu.name"),
        capability=_capability(f"{capability[0]}.{capability[1]}", what, "bench.gpu.capability"),
        what="bench",
        outcome=outcome,
        date="",
        source="",
        versions=_versions(bench.get("versions"), what, "bench.versions"),
        library=_profile_library(data.get("profile")),
    )
