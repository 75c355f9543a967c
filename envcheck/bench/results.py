"""A saved bench result (`envcheck bench --json`), read back: strictly, by one parsing function, into the same
BenchResult a live run makes, its verdicts judged again by today's rule (analysis.py, noise.py).

What this envcheck reads: schema_version 1, from envcheck 0.1.0 on, and 2, whose `profile` is doctor's object
{id, reason, source, verified} where 1 had the id alone. Older 0.1.0 files lack fields added since
(call_spread, mode, a verdict's drift); a missing optional field reads as unknown. A saved verdict without its
drift (the run-to-run drift of the repeated measurement, in the noise but not saved on its own before) lends its
whole noise on the shape as the bound of that drift: the noise of a saved run is never less than it said.

Anything else is refused with the file and what was expected: not JSON, JSON that is not a bench result (doctor's
report, a smoke result), an unknown schema_version, a field of the wrong type.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import UsageError
from ..model import Status
from ..model.candidates import GemmCandidates, LostCandidates
from ..userfile import parse_json, read_text
from . import analysis
from .data import DTYPES, Peak
from .result import BenchResult
from .shapes import LAYOUTS, MAX_DIM, OPS, ROW_MAJOR, Shape

__all__ = ["SCHEMAS", "SavedRun", "read_result", "parse_result"]

SCHEMAS = (1, 2)
MAX_BYTES = 16 << 20  # a --library run of the llm set: 30 shapes x 29 kernels, about 1 KiB each
STATUSES = ("ok", "refused", "wrong-result", "error", "skipped")
EXPECTED = "the output of `envcheck bench --json`"


@dataclass(frozen=True)
class SavedRun:
    path: str
    profile: Optional[str]
    envcheck_version: Optional[str]
    result: BenchResult
    drift_saved: bool  # its verdicts carried their drift (else their noise bounds it)


class _Bad(Exception):
    def __init__(self, where: str, expected: str, found=None, missing: bool = False):
        shown = "it is missing" if missing else f"found {json.dumps(found)[:60]}"
        super().__init__(f"{where}: expected {expected}, {shown}")


_KINDS = {"a string": (str,), "an integer": (int,), "a number": (int, float), "true or false": (bool,),
          "a list": (list,), "an object": (dict,)}


def _get(obj: dict, key: str, where: str, kind: str, *, null: bool = False, required: bool = False):
    if key not in obj:
        if required:
            raise _Bad(f"{where}.{key}" if where else key, kind, missing=True)
        return None
    value = obj[key]
    if value is None and null:
        return None
    types = _KINDS[kind]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise _Bad(f"{where}.{key}" if where else key, kind + (" or null" if null else ""), value)
    return value


def _number(obj: dict, key: str, where: str) -> Optional[float]:
    value = _get(obj, key, where, "a number", null=True)
    return None if value is None else float(value)


def _shape(obj: dict, where: str) -> Shape:
    raw = _get(obj, "shape", where, "an object", required=True)
    dims = []
    for key in "mnk":
        value = _get(raw, key, f"{where}.shape", "an integer", required=True)
        if not 1 <= value <= MAX_DIM:
            raise _Bad(f"{where}.shape.{key}", f"an integer from 1 to {MAX_DIM}", value)
        dims.append(value)
    layout = _get(raw, "layout", f"{where}.shape", "a string", null=True) or ROW_MAJOR  # saved before layouts: row-major
    if layout not in LAYOUTS:
        raise _Bad(f"{where}.shape.layout", f"one of {', '.join(LAYOUTS)}", layout)
    op = _get(raw, "op", f"{where}.shape", "a string", null=True) or "mm"  # saved before ops were named: mm
    if op not in OPS:
        raise _Bad(f"{where}.shape.op", f"one of {', '.join(OPS)}", op)
    batch = _get(raw, "batch", f"{where}.shape", "an integer", null=True)
    batch = 1 if batch is None else batch
    if not 1 <= batch <= MAX_DIM:
        raise _Bad(f"{where}.shape.batch", f"an integer from 1 to {MAX_DIM}", batch)
    bias = _get(raw, "bias", f"{where}.shape", "a list", null=True) or []
    if not all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= MAX_DIM for d in bias) or len(bias) > 3:
        raise _Bad(f"{where}.shape.bias", "a list of at most 3 dimensions (the added input's shape)", bias)
    return Shape(*dims, _get(raw, "label", f"{where}.shape", "a string") or "", layout, op, batch, tuple(bias))


_NUMBERS = ("kernel_ms", "spread", "tflops", "pct_peak", "call_ms", "call_spread", "host_ms", "do_bench_ms",
            "max_error", "compile_s")
_TEXTS = ("choice", "kernel", "mode")


def _count(obj: dict, key: str, where: str, least: int = 0) -> int:
    value = _get(obj, key, where, "an integer", required=True)
    if value < least:
        raise _Bad(f"{where}.{key}", f"an integer of at least {least}", value)
    return value


def _lost(obj, where: str) -> LostCandidates:
    if not isinstance(obj, dict):
        raise _Bad(where, "an object", obj)
    return LostCandidates(cause_id=_get(obj, "cause", where, "a string", required=True), count=_count(obj, "count", where, 1),
                          first_line=_get(obj, "first_line", where, "a string") or "",
                          where=_get(obj, "where", where, "a string") or "")


def _gemm(obj, where: str) -> GemmCandidates:
    """One GEMM's candidates as the run saved them (GemmCandidates.to_dict), its counts adding up."""
    if not isinstance(obj, dict):
        raise _Bad(where, "an object", obj)
    lost = tuple(_lost(item, f"{where}.lost[{i}]") for i, item in enumerate(_get(obj, "lost", where, "a list") or []))
    gemm = GemmCandidates(op=_get(obj, "gemm", where, "a string", null=True) or "",
                          sizes=_get(obj, "sizes", where, "a string") or "", strides=_get(obj, "strides", where, "a string") or "",
                          dtypes=_get(obj, "dtypes", where, "a string") or "", left=_count(obj, "left", where), lost=lost,
                          listed=bool(_get(obj, "exact", where, "true or false")), line=_get(obj, "line", where, "an integer") or 0)
    for key, value in (("failed", gemm.failed), ("offered", gemm.offered)):
        if key in obj and _get(obj, key, where, "an integer") != value:
            raise _Bad(f"{where}.{key}", f"{value} (the sum of its lost and left candidates)", obj[key])
    return gemm


def _measurement(obj, where: str) -> analysis.Measurement:
    if not isinstance(obj, dict):
        raise _Bad(where, "an object", obj)
    status = _get(obj, "status", where, "a string", required=True)
    if status not in STATUSES:
        raise _Bad(f"{where}.status", f"one of {', '.join(STATUSES)}", status)
    numbers = {key: _number(obj, key, where) for key in _NUMBERS}
    if status == "ok" and not (numbers["kernel_ms"] or 0) > 0:
        raise _Bad(f"{where}.kernel_ms", "a time above 0 (the status is ok)", obj.get("kernel_ms"))
    _number(obj, "do_bench_gap", where)  # computed from the others when read; checked, not kept
    kernels = _get(obj, "device_kernels", where, "a list") or []
    if not all(isinstance(k, str) for k in kernels):
        raise _Bad(f"{where}.device_kernels", "a list of strings", kernels)
    return analysis.Measurement(
        shape=_shape(obj, where), backend=_get(obj, "backend", where, "a string", required=True), status=status,
        reason=_get(obj, "reason", where, "a string", null=True) or "", reps=_get(obj, "reps", where, "an integer", null=True),
        warm=_get(obj, "warm", where, "true or false", null=True), device_kernels=tuple(kernels),
        gaps=bool(_get(obj, "gaps", where, "true or false")), gpu=_get(obj, "gpu", where, "an object", null=True) or {},
        candidates=tuple(_gemm(g, f"{where}.candidates[{i}]")
                         for i, g in enumerate(_get(obj, "candidates", where, "a list") or [])),
        **numbers, **{key: _get(obj, key, where, "a string", null=True) for key in _TEXTS})


def _drifts(verdicts: list, shapes: set) -> tuple[dict[Shape, float], bool]:
    """Each saved verdict's drift: its own where saved (None: no repeat), else its noise as the bound."""
    drifts, saved = {}, True
    for index, obj in enumerate(verdicts):
        where = f"bench.verdicts[{index}]"
        if not isinstance(obj, dict):
            raise _Bad(where, "an object", obj)
        shape = _shape(obj, where)
        noise = _get(obj, "noise", where, "a number", required=True)
        if "drift" in obj:
            drift = _number(obj, "drift", where)
        else:
            drift, saved = float(noise), False
        if drift is not None and shape in shapes:
            drifts[shape] = drift
    return drifts, saved


def _peak(obj, dtype: str) -> Optional[Peak]:
    if obj is None:
        return None
    tflops = _number(obj, "tflops", "bench.peak")
    name = _get(obj, "name", "bench.peak", "a string", required=True)
    return Peak(name=name, match="", tflops=((dtype, tflops),) if tflops else (),
                source=_get(obj, "source", "bench.peak", "a string") or "")


def parse_result(data, path: str) -> SavedRun:
    """A saved bench result from its parsed JSON; a UsageError naming `path` and the field where it is not one."""
    try:
        return _parse(data, path)
    except _Bad as exc:
        raise UsageError(f"{path}: {exc} ({EXPECTED}, schema_version {', '.join(map(str, SCHEMAS))})") from None


def _parse(data, path: str) -> SavedRun:
    if not isinstance(data, dict) or "schema_version" not in data or not isinstance(data.get("bench"), dict):
        raise UsageError(f"{path}: not an envcheck bench result (no \"schema_version\" with a \"bench\" object); "
                         f"expected {EXPECTED}")
    version = data["schema_version"]
    if isinstance(version, bool) or version not in SCHEMAS:
        raise UsageError(f"{path}: schema_version {json.dumps(version)[:20]} is not one this envcheck reads "
                         f"(it reads {', '.join(map(str, SCHEMAS))}: {EXPECTED}); a newer envcheck may read it")
    bench = data["bench"]
    dtype = _get(bench, "dtype", "bench", "a string", required=True)
    if dtype not in DTYPES:
        raise _Bad("bench.dtype", f"one of {', '.join(DTYPES)}", dtype)
    status = _get(bench, "status", "bench", "a string", required=True)
    if status not in {s.value for s in Status}:
        raise _Bad("bench.status", f"one of {', '.join(s.value for s in Status)}", status)
    gpu = _get(bench, "gpu", "bench", "an object", null=True) or {}
    capability = _get(gpu, "capability", "bench.gpu", "a list", null=True)
    if capability is not None and (len(capability) != 2 or not all(type(c) is int for c in capability)):
        raise _Bad("bench.gpu.capability", "[major, minor]", capability)
    versions = _get(bench, "versions", "bench", "an object") or {}
    if not all(isinstance(v, str) for v in versions.values()):
        raise _Bad("bench.versions", "an object of version strings", versions)
    rows = _get(bench, "measurements", "bench", "a list", required=True)
    found = [_measurement(obj, f"bench.measurements[{i}]") for i, obj in enumerate(rows)]
    if not found:
        raise UsageError(f"{path}: a bench result with no measurements (it says: "
                         f"{_get(bench, 'summary', 'bench', 'a string') or status}); nothing to compare")
    backend = _get(bench, "backend", "bench", "a string", required=True)
    drifts, drift_saved = _drifts(_get(bench, "verdicts", "bench", "a list", required=True), {m.shape for m in found})
    verdicts = analysis.shape_verdicts(found, {}, backend, drifts)
    name = _get(gpu, "name", "bench.gpu", "a string", null=True) or "this GPU"
    library = any(m.backend == "cuBLAS" for m in found)  # --library times torch.mm as "cuBLAS" (run.py's plan)
    result = BenchResult(
        status=Status(status), summary=_get(bench, "summary", "bench", "a string") or "", backend=backend,
        dtype=dtype, gpu=name, capability=tuple(capability) if capability else None,
        peak=_peak(_get(bench, "peak", "bench", "an object", null=True), dtype), measurements=tuple(found),
        verdicts=tuple(verdicts), decision=analysis.decide(verdicts, found, backend, name, library=library),
        method=_get(bench, "method", "bench", "a string") or "", versions=tuple(sorted(versions.items())),
        elapsed_s=_number(bench, "elapsed_s", "bench"), budget_s=_number(bench, "budget_s", "bench"))
    profile = data.get("profile")  # schema 2: {id, reason, source, verified}; schema 1: the id
    profile_id = (_get(profile, "id", "profile", "a string", null=True) if isinstance(profile, dict)
                  else _get(data, "profile", "", "a string", null=True))
    return SavedRun(path=path, profile=profile_id,
                    envcheck_version=_get(data, "envcheck_version", "", "a string", null=True), result=result,
                    drift_saved=drift_saved)


def read_result(path: Path) -> SavedRun:
    text = read_text(path, str(path), MAX_BYTES)
    return parse_result(parse_json(text, str(path), expected=EXPECTED), str(path))
