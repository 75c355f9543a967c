"""One BenchResult, several texts: a table for people, JSON for programs, markdown for an issue, and a plot."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..errors import UsageError
from ..jsonanswer import answer
from .bench_autotune import autotune_lines
from .bench_text import columns
from ..model.candidates import lost_text
from .text import FORMATS, remedy_lines

if TYPE_CHECKING:
    from ..bench.result import BenchResult

__all__ = ["FORMATS", "render", "table_rows", "check_plot", "plot"]

COLUMNS = ("shape", "layout", "from", "backend", "kernel ms", "spread", "TF/s", "% peak", "call ms", "host ms", "do_bench ms",
           "max err", "compile s", "status", "kernel")


def _num(value: Optional[float], digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def _kernel(m) -> str:
    name = (m.device_kernels[0] if m.device_kernels else None) or m.kernel or m.choice or ""
    return name if len(name) <= 70 else name[:67] + "..."


def table_rows(result: "BenchResult") -> list[tuple[str, ...]]:
    rows = []
    for m in result.measurements:
        compile_s = "" if m.compile_s is None else f"{m.compile_s:.1f}" + (" warm" if m.warm else " cold" if m.warm is False else "")
        status = m.status if m.status == "ok" else f"{m.status}: {m.reason}"
        if m.backend == "mix" and m.choice:
            status += f" (picked {m.choice})"
        rows.append((
            m.shape.text, m.shape.layout, m.shape.label, m.backend, _num(m.kernel_ms), "" if m.spread is None else f"{100 * m.spread:.1f}%",
            _num(m.tflops, 4), "" if m.pct_peak is None else f"{m.pct_peak:.1f}%", _num(m.call_ms), _num(m.host_ms),
            _num(m.do_bench_ms), _num(m.max_error, 3), compile_s, status, _kernel(m),
        ))
    return rows


def _header(result: "BenchResult") -> list[str]:
    peak = result.peak
    peak_text = (f"dense peak {peak.for_dtype(result.dtype):g} TF/s ({peak.name}: {peak.source})" if peak
                 else "no dense peak known for this GPU: figures above peak cannot be refused")
    lines = [f"bench  {result.status.value.upper():5}  {result.summary}",
             f"  gpu       {result.gpu} {'' if not result.capability else '(' + '.'.join(map(str, result.capability)) + ')'}, "
             f"{result.dtype}, {peak_text}"]
    if result.versions:
        lines.append("  stack     " + ", ".join(f"{k} {v}" for k, v in result.versions))
    lines.append(f"  method    {result.method}")
    if result.compile_target is not None:
        lines.append(f"  compiled  {result.compile_target.said}")
    if result.environment is not None and result.environment.settings:
        lines.append(f"  settings  {result.environment.settings_said}")
    for label, state in (("before", result.gpu_before), ("after", result.gpu_after)):
        if state:
            clocks = state.get("sm_mhz") or [None]
            lines.append(f"  {label:9} SM {clocks[-1]} MHz, {state.get('power_w_max')} W, {state.get('temp_c_max')} C"
                         + (f", throttle: {', '.join(state['throttle'])}" if state.get("throttle") else ""))
    throttled = sorted({r for m in result.measurements for r in (m.gpu or {}).get("throttle", [])})
    if throttled:
        lines.append(f"  throttle  seen while timing: {', '.join(throttled)}")
    if result.watch_error:
        lines.append(f"  nvml      {result.watch_error}: other processes on the GPU could not be ruled out")
    if result.busy_before:
        lines.append(f"  busy      processes on the GPU before bench started: {', '.join(map(str, result.busy_before))}")
    return lines


LEGEND = (
    "kernel ms: device time, L2 flushed, launch cost hidden (median; spread = (q75-q25)/median); "
    "call ms: wall time per call through the compiled function, calls back to back; host ms: CPU time to launch one "
    "call; do_bench ms: triton.testing.do_bench on the same function, right after (it includes launch gaps when the "
    "host is slower than the kernel; where it is not, its distance from kernel ms counts in the noise); TF/s and "
    "% peak from kernel ms."
)


def _footer(result: "BenchResult") -> list[str]:
    lines = [LEGEND, ""] if result.measurements else []
    for v in result.verdicts:
        extra = f" ({v.note})" if v.note else ""
        speed = f", kernel {v.speedup:.2f}x as fast as {v.baseline}'s" if v.speedup else ""
        mix = f", mix picked {v.mix_choice}" if v.mix_choice else ""
        lost = lost_text(v.candidates)
        lost = f"; {lost.split(': ', 1)[0]}" if lost else ""
        lines.append(f"  {v.shape.text:>20} {v.shape.layout:9} {v.shape.label:24} {result.backend} {v.verdict}{speed} "
                     f"(noise {100 * v.noise:.1f}%){mix}{lost}{extra}")
    if result.cause_id and result.remedy is not None:
        lines += ["", f"cause  {result.cause_id}: {result.cause}", *remedy_lines(result.remedy)]
    if result.autotune is not None:
        lines += ["", *autotune_lines(result.autotune)]
    if result.decision is not None:
        lines += ["", f"decision: {result.decision.text}", "", result.decision.snippet]
    if result.log:
        lines += ["", f"log: {result.log}"]
    return lines


def render(result: "BenchResult", data: dict, output_format: str) -> str:
    if output_format == "json":
        return answer(data, result.exit_code, result.status.value)
    rows = table_rows(result)
    if output_format == "markdown":
        lines = [f"### envcheck bench: {result.status.value}", "", *(f"    {line}" for line in _header(result)), ""]
        if rows:
            lines += ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
            lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        lines += ["", "```", *_footer(result), "```"]
        return "\n".join(lines) + "\n"
    lines = _header(result)
    if rows:
        lines += [""] + columns([COLUMNS, *rows])
    lines += [""] + _footer(result)
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------------------
# The plot (matplotlib is the optional extra `plot`)


def check_plot(path: Path) -> None:
    """--plot FILE: a .png or .svg, and matplotlib to draw it."""
    if path.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"--plot {path}: expected a file name ending in .png or .svg")
    require_matplotlib()


def require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401 - only whether it imports
    except ImportError:
        raise UsageError("--plot: a plot needs matplotlib, which is not installed; "
                         "install envcheck's extra with: pip install 'nvgemm-envcheck[plot]'") from None


def plot(result: "BenchResult", path: Path) -> None:
    from .bench_plot import plot_result

    plot_result(result, path)
