"""A run from what it printed: the format a user contributes a run in (`envcheck smoke --json`, or `doctor --smoke
--json`, whose facts also name the driver, and `envcheck bench --json`), read into the entry of an evidence file
(runs.py). The reader is strict: anything that is not such a result, a smoke that did not run (skip), a GPU without
its compute capability, a key of the wrong type, is a UsageError naming the file and the key (exit 2). Nothing read
here executes; a run is data.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from ..errors import UsageError
from ..model import Run, Status, canonical_name
from ..userfile import expect, read_text
from .load import builtin_profiles, load_builtin
from .runs import parse_capability, parse_date, parse_outcome

__all__ = ["read_run", "run_from_result"]

_GPU = re.compile(r"(?P<name>.+) \((?P<capability>\d+\.\d)\)")  # a smoke's gpu: "NVIDIA H200 (9.0)"



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
    return replace(run, date=parse_date(expect(said, str, what, "date"), what, "date"), driver=run.driver or driver,
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
    return parse_outcome(text, what, key)


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
        capability=parse_capability(gpu["capability"], what, "smoke.gpu"),
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
        environment=_compiled_with(smoke, what, "smoke"),
    )


def _compiled_with(section: dict, what: str, key: str) -> tuple[tuple[str, str], ...]:
    """The compile target the run's child had (its `compile_target`, where the child was passed one); none else."""
    target = section.get("compile_target")
    if target is None:
        return ()
    target = expect(target, dict, what, f"{key}.compile_target")
    if target.get("value") is None:
        return ()
    return ((expect(target.get("variable"), str, what, f"{key}.compile_target.variable"),
             expect(target.get("value"), str, what, f"{key}.compile_target.value")),)


def _libraries(process: Any, what: str) -> list[dict]:
    if process is None:
        return []
    libraries = expect(expect(process, dict, what, "smoke.process").get("libraries", []), list, what,
                       "smoke.process.libraries")
    return [expect(lib, dict, what, f"smoke.process.libraries[{i}]") for i, lib in enumerate(libraries)]


def _profile_library(profile: Any) -> str:
    """The kernel library of the built-in profile a result names (a smoke through Inductor calls it)."""
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
        capability=parse_capability(f"{capability[0]}.{capability[1]}", what, "bench.gpu.capability"),
        what="bench",
        outcome=outcome,
        date="",
        source="",
        versions=_versions(bench.get("versions"), what, "bench.versions"),
        library=_profile_library(data.get("profile")),
        environment=_compiled_with(bench, what, "bench"),
    )
