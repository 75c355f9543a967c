"""A `bench --model` run as text: the GEMMs the model runs (which of them bench timed, as what op, and how many
choices Inductor offered the backend for each), the product ops it ran that are no GEMM bench times, the model timed
per set of backends with the GEMMs each set ran on each backend, and the model-level verdict. The same lines under
bench's own report, in the table and in markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .bench_text import columns, markdown_table, number, percent

if TYPE_CHECKING:
    from ..bench.model_outcome import ModelBench

__all__ = ["model_lines", "model_markdown"]

GEMM_HEADER = ("op", "shape", "layout", "dtype", "calls", "modules", "benched")
TIME_HEADER = ("backends", "ms per forward", "spread", "vs ATEN,TRITON", "compile s", "max err vs eager",
               "GEMMs per backend", "")


def _gemm_rows(model: "ModelBench") -> list[tuple[str, ...]]:
    skipped = dict(model.skipped)
    offered = dict(model.offered)
    backend = model.backend or "NVGEMM"
    rows = [GEMM_HEADER + ((f"{backend} choices",) if offered else ())]
    for g in model.recording.gemms:
        why = skipped.get(g)
        shape = g.shape.text.split(" ")[-1] + (f" + bias {list(g.bias)}" if g.bias else "")
        dtype = g.dtype if g.dtype == g.run_dtype else f"{g.dtype} -> {g.run_dtype}"
        row = (f"aten.{g.op}", shape, g.layout or "other", dtype, str(g.count), g.label,
               "yes" if why is None else f"no: {why}")
        rows.append(row + ((offered[g].text(backend) if g in offered else "",) if offered else ()))
    return rows


def _calls(row, backend: str) -> str:
    """"NVGEMM 0 of 5, ATEN 3, TRITON 2": the GEMMs of the compiled model each backend runs per forward."""
    if not row.gemm_calls:
        return ""
    others = ", ".join(f"{name} {count}" for name, count in row.gemm_calls if count and name != backend)
    return f"{backend} {row.served(backend)} of {row.gemms}" + (f", {others}" if others else "")


def _time_rows(model: "ModelBench") -> list[tuple[str, ...]]:
    timing = model.timing
    base = timing.row("ATEN,TRITON") if timing else None
    rows = [TIME_HEADER]
    for r in timing.rows if timing else ():
        against = f"{base.ms / r.ms:.3f}x" if r.trusted and base is not None and base.trusted else ""
        status = "" if r.status == "ok" else r.failure
        rows.append((r.backends + (" (recommended)" if r.recommended else ""), number(r.ms), percent(r.spread),
                     against, number(r.compile_s, 3), number(r.max_error, 3), _calls(r, model.backend or "NVGEMM"),
                     status))
    return rows


def _head(model: "ModelBench") -> list[str]:
    recording = model.recording
    module = recording.module or {}
    inputs = ", ".join(f"{i['dtype']}{i['shape']}" for i in module.get("inputs") or ())
    lines = [f"model  {model.spec.text}" + (f": {module['class']}" if module.get("class") else "")
             + (f", {module['parameters']:,} parameters" if module.get("parameters") else "")
             + (f", inputs {inputs}" if inputs else "")]
    if not recording.ok:
        lines.append(f"  recording failed: {recording.error}")
        return lines
    calls = sum(g.count for g in recording.gemms)
    where = recording.decompositions or (f"recorded on the {recording.device} device, one real forward"
                                         + (f" ({recording.device} after: " + "; ".join(
                                             f"{d}: {e}" for d, e in recording.tried) + ")" if recording.tried else ""))
    lines.append(f"  {len(recording.gemms)} distinct GEMMs, {calls} calls per forward, {where}")
    for other in recording.others:
        modules = f" ({', '.join(other.modules)})" if other.modules else ""
        lines.append(f"  not a GEMM bench times: aten.{other.op} x{other.count}{modules}: {other.reason}")
    return lines


def _tail(model: "ModelBench") -> list[str]:
    lines = []
    timing = model.timing
    if timing is not None:
        eager = f"; eager {timing.eager_ms:.4g} ms" if timing.eager_ms else ""
        drift = f"; drift of the repeated first set {percent(timing.drift)}" if timing.drift is not None else ""
        lines.append(f"the model per forward (triton.testing.do_bench, no CUDA graphs{eager}{drift}):")
        if timing.error:
            lines.append(f"  timing failed: {timing.error}")
    if model.verdict is not None:
        lines.append(f"model verdict: {model.verdict.text}")
    for log in (model.recording.log, timing.log if timing else None):
        if log:
            lines.append(f"log: {log}")
    return lines


def model_lines(model: "ModelBench") -> list[str]:
    lines = _head(model)
    if model.recording.gemms:
        lines += ["", *columns(_gemm_rows(model))]
    tail = _tail(model)
    if model.timing is not None and model.timing.rows:
        lines += ["", tail[0], *columns(_time_rows(model)), *tail[1:]]
    else:
        lines += ["", *tail] if tail else []
    return lines


def model_markdown(model: "ModelBench") -> list[str]:
    lines = [f"#### envcheck bench --model {model.spec.text}", "", *(f"    {line}" for line in _head(model)), ""]
    if model.recording.gemms:
        lines += markdown_table(_gemm_rows(model)) + [""]
    if model.timing is not None and model.timing.rows:
        lines += markdown_table(_time_rows(model)) + [""]
    lines += [f"    {line}" for line in _tail(model)]
    return lines
