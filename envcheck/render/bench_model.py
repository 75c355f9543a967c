"""A `bench --model` run as text: the GEMMs the model runs (and which of them bench timed), the model timed per set
of backends, and the model-level verdict. The same lines under bench's own report, in the table and in markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .bench_text import columns, markdown_table, number, percent

if TYPE_CHECKING:
    from ..bench.model_result import ModelBench

__all__ = ["model_lines", "model_markdown"]

GEMM_HEADER = ("op", "shape", "layout", "dtype", "calls", "modules", "benched")
TIME_HEADER = ("backends", "ms per forward", "spread", "vs ATEN,TRITON", "compile s", "max err vs eager",
               "GEMM kernels", "")


def _gemm_rows(model: "ModelBench") -> list[tuple[str, ...]]:
    skipped = dict(model.skipped)
    rows = [GEMM_HEADER]
    for g in model.recording.gemms:
        shape = f"{g.batch}x{g.m}x{g.n}x{g.k}" if g.batch != 1 else f"{g.m}x{g.n}x{g.k}"
        why = skipped.get(g)
        rows.append((f"aten.{g.op}", shape, g.layout or "other", g.dtype, str(g.count), g.label,
                     "yes" if why is None else f"no: {why}"))
    return rows


def _time_rows(model: "ModelBench") -> list[tuple[str, ...]]:
    timing = model.timing
    base = timing.row("ATEN,TRITON") if timing else None
    rows = [TIME_HEADER]
    for r in timing.rows if timing else ():
        against = f"{base.ms / r.ms:.3f}x" if r.trusted and base is not None and base.trusted else ""
        kernels = ", ".join(f"{name} {count}" for name, count in r.gemm_kernels if count)
        status = "" if r.status == "ok" else f"{r.status}: {r.reason}"
        rows.append((r.backends + (" (recommended)" if r.recommended else ""), number(r.ms), percent(r.spread),
                     against, number(r.compile_s, 3), number(r.max_error, 3), kernels, status))
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
    else:
        calls = sum(g.count for g in recording.gemms)
        lines.append(f"  {len(recording.gemms)} distinct GEMMs, {calls} calls per forward, recorded on the "
                     f"{recording.device} device" + (f" ({recording.device} after: " + "; ".join(
                         f"{d}: {e}" for d, e in recording.tried) + ")" if recording.tried else ""))
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
