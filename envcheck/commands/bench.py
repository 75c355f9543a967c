"""`envcheck bench`: time each GEMM backend on this GPU and decide (bench/run.py); with --model FILE.py[:FUNCTION],
the GEMMs that model runs, then the model itself (bench/model.py); or, with --compare A.json B.json [...], saved
results side by side (bench/compare.py); as a table, markdown or JSON (-o FILE: to a file), with the plot
(--plot FILE.png|.svg). The comparison needs no GPU and no target interpreter: only the files."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from .. import paths
from ..errors import UsageError, check_choice
from ..userfile import emit, progress

__all__ = ["bench_command", "compare_command"]

# What --model decides itself: the shapes, their layouts and counts, the dtype come from the model's GEMMs
MODEL_DECIDES = (("--shapes", "shapes"), ("--layout", "layout"), ("--dtype", "dtype"), ("--weights", "weights"),
                 ("--library", "library"))


def bench_command(
    python: Optional[str] = None,
    profile: Optional[str] = None,
    *,
    shapes: Optional[str] = None,
    layout: Optional[str] = None,
    dtype: Optional[str] = None,
    model: Optional[str] = None,
    record_on: Optional[str] = None,
    budget: float = 600.0,
    timeout: Optional[float] = None,
    output_format: str = "table",
    output: Optional[Path] = None,
    plot: Optional[Path] = None,
    fresh: bool = False,
    library: bool = False,
    weights: Optional[Path] = None,
    all_candidates: bool = False,
    cache_dir: Optional[Path] = None,
    out=None,
    err=None,
) -> int:
    """`envcheck bench`: 0 when it measured and decided, 1 when it proved nothing (no GPU, nothing ran). The report
    goes to `output` (-o FILE, written whole) or standard output; the plot to `plot` (--plot FILE). shapes, layout,
    dtype: default llm, linear, bf16; model: --model FILE.py[:FUNCTION] instead of them; record_on: --record-on, the
    device its GEMMs are recorded on (default the one it is timed on)."""
    from ..bench.result import BenchOptions
    from ..bench.run import DTYPE_FLAGS, SCHEMA_VERSION, no_gpu_reason, run_bench, save_last
    from ..bench.shapes import parse_layout, parse_shapes
    from ..bench.weights import EQUAL, read_weights
    from ..render import bench as render
    from ..gather.target import resolve_python

    out = out or sys.stdout
    err = err or sys.stderr
    check_choice("--format", output_format, render.FORMATS)
    if plot is not None:
        render.check_plot(plot)
    if record_on is not None:
        from ..bench.model import RECORD_DEVICES

        if model is None:
            raise UsageError("--record-on: it chooses the device --model's GEMMs are recorded on; add --model FILE.py")
        check_choice("--record-on", record_on, RECORD_DEVICES)
    if model is not None:
        given = dict(shapes=shapes, layout=layout, dtype=dtype, weights=weights, library=library or None)
        for flag, name in MODEL_DECIDES:
            if given[name] is not None:
                raise UsageError(f"{flag}: --model benches the GEMMs the model runs, in their own shapes, layouts, "
                                 f"dtype and counts; leave {flag} out")
        from ..bench.model import parse_model

        spec = parse_model(model)
        parsed, counts, dtype = (), EQUAL, "bf16"
    else:
        dtype = dtype or "bf16"
        check_choice("--dtype", dtype, tuple(DTYPE_FLAGS))
        parsed = parse_shapes(shapes or "llm", parse_layout(layout or "linear"))
        counts = read_weights(weights) if weights is not None else EQUAL
    target = resolve_python(python)
    reason = no_gpu_reason()
    if model is not None:
        return _model_command(target, profile, spec, reason, output_format, output, plot, cache_dir, out, err,
                              record_on, budget_s=float(budget), fresh=fresh, timeout_s=timeout)
    if reason is not None:
        message = f"no GPU to measure on: {reason}"
        print(f"envcheck bench: {message}", file=err)
        if output_format == "json":  # JSON on standard output whatever happens (envcheck/jsonanswer.py)
            from ..jsonanswer import failure_json

            emit(failure_json("bench", 1, message, status="skip", target=target), output, out)
        return 1

    from ..diagnose import run_facts
    from ..profile import candidates
    from ..render.text import profile_json, profile_line

    # The profile named, else the one that covers the target's torch: the choice doctor, smoke and fix make.
    chosen, choice, facts = run_facts(target, candidates(profile))
    say = progress(err)
    say(profile_line(choice))
    began = time.monotonic()
    options = BenchOptions(shapes=parsed, dtype=DTYPE_FLAGS[dtype], budget_s=float(budget), fresh=fresh, library=library,
                           all_candidates=all_candidates, timeout_s=timeout, weights=counts)
    result = run_bench(target, facts, chosen, options, cache_dir=cache_dir, progress=say)  # None: says which variable chose it
    from .. import __version__

    data = {"schema_version": SCHEMA_VERSION, "envcheck_version": __version__, "profile": profile_json(choice), "target": target,
            "wall_s": round(time.monotonic() - began, 3), "bench": result.to_dict()}
    if result.measurements:
        save_last(Path(cache_dir) if cache_dir is not None else paths.cache_dir(), data)
    from ..redact import Redactor

    emit(Redactor()(render.render(result, data, output_format)), output, out)
    if plot is not None and result.measurements:
        render.plot(result, plot)
        say(f"plot written to {plot}")
    return result.exit_code


def _model_command(target, profile, spec, no_gpu, output_format, output, plot, cache_dir, out, err, record_on,
                   **options) -> int:
    """bench --model: the model's GEMMs recorded (with or without a GPU), benched and the model timed (with one)."""
    from .. import __version__
    from ..bench.model import run_model_bench
    from ..bench.result import BenchOptions
    from ..bench.run import SCHEMA_VERSION, save_last
    from ..diagnose import run_facts
    from ..jsonanswer import failure_json
    from ..profile import candidates
    from ..redact import Redactor
    from ..render import bench as render
    from ..render.bench_model import model_lines, model_markdown
    from ..render.text import profile_json, profile_line

    chosen, choice, facts = run_facts(target, candidates(profile))
    say = progress(err)
    say(profile_line(choice))
    began = time.monotonic()
    found, result = run_model_bench(target, facts, chosen, spec, BenchOptions(shapes=(), **options), gpu=no_gpu is None,
                                    record_on=record_on, cache_dir=cache_dir, progress=say)
    data = {"schema_version": SCHEMA_VERSION, "envcheck_version": __version__, "profile": profile_json(choice),
            "target": target, "wall_s": round(time.monotonic() - began, 3),
            "bench": None if result is None else result.to_dict(), "model": found.to_dict()}
    if result is None:  # nothing measured: why, and what the model runs
        message = (f"no GPU to measure on: {no_gpu}" if no_gpu is not None and found.recording.ok
                   else f"the GEMMs of {spec.text} could not be recorded: {found.recording.error}"
                   if not found.recording.ok else
                   f"none of the {len(found.recording.gemms)} GEMMs {spec.text} runs can be benched")
        print(f"envcheck bench: {message}", file=err)
        if output_format == "json":
            text = failure_json("bench", 1, message, status="skip" if no_gpu is not None and found.recording.ok else None,
                                target=target, model=found.to_dict())
        else:
            text = "\n".join(model_lines(found)) + "\n"
        emit(Redactor()(text), output, out)
        return 1
    if result.measurements:
        save_last(Path(cache_dir) if cache_dir is not None else paths.cache_dir(), data)
    text = render.render(result, data, output_format)
    if output_format == "table":
        text += "\n" + "\n".join(model_lines(found)) + "\n"
    elif output_format == "markdown":
        text += "\n" + "\n".join(model_markdown(found)) + "\n"
    emit(Redactor()(text), output, out)
    if plot is not None and result.measurements:
        render.plot(result, plot)
        say(f"plot written to {plot}")
    return result.exit_code


MAX_COMPARED = 26  # results one comparison takes: its table names each by a letter (render/bench_compare.py)


def compare_command(files: Sequence[Path], *, weights: Optional[Path] = None, output_format: str = "table",
                    output: Optional[Path] = None, plot: Optional[Path] = None, out=None, err=None) -> int:
    """`envcheck bench --compare`: 0 when the results were read and compared; every unusable input is a UsageError
    (exit 2) naming it."""
    from ..bench.compare import compare
    from ..bench.results import read_result
    from ..bench.weights import EQUAL, read_weights
    from ..redact import Redactor
    from ..render import bench as render
    from ..render.bench_compare import FORMATS, render_comparison

    out = out or sys.stdout
    err = err or sys.stderr
    if not 2 <= len(files) <= MAX_COMPARED:
        raise UsageError(f"--compare: expected two to {MAX_COMPARED} bench results (`envcheck bench --json > FILE`; "
                         f"the comparison names each by a letter, A to Z), got {len(files)}")
    check_choice("--format", output_format, FORMATS)
    if plot is not None:
        render.check_plot(plot)
    counts = read_weights(weights) if weights is not None else EQUAL
    comparison = compare([read_result(Path(f)) for f in files], counts)
    if plot is not None:  # first: a plot that cannot be written is exit 2 with nothing printed
        from ..render.bench_plot import plot_comparison

        plot_comparison(comparison, plot)
        progress(err)(f"plot written to {plot}")
    emit(Redactor()(render_comparison(comparison, output_format)), output, out)
    return 0
