"""A shape's rows timed together, for the bench child (bench_child.py): each row's method first, then the rows one
after another in an order that keeps the GPU in the state each is timed in, then rounds for the rows whose figures
are not yet enough, until stoprule.py lets each stop. How one row is timed: timing.py.

Standard library only at module level, Python 3.8 syntax (copied into the run folder as envcheck_shape_timing.py).
"""

from __future__ import annotations

import math
import sys
import time
import traceback

try:  # imported as envcheck.inside.shape_timing by envcheck's own process (tests)
    from . import stoprule, timing
except ImportError:  # run by path in its run folder, beside the envcheck_*.py copies (envcheck/runner.py)
    import envcheck_stoprule as stoprule, envcheck_timing as timing

LOADED_GAP_S = 0.05  # a row timed within this of the last GPU-bound work finds the GPU as that work left it


def time_shape(torch, ctx, shape, rows, out_of_time):
    """A shape's rows timed; rows: [(row, call or None: nothing to time)] in the plan's order, the repeat last.

    First each row's method (timing.start; the repeat takes its first's). Then the rows in turn: those the GPU runs
    back to back, one after another (one warm-up to the sustained state for them all, the probes counted: LOADED),
    the repeat among them if its first is one, then those behind a sleep kernel; each for MIN_REPS at least and on
    until its own figures are enough (stoprule.alone), with do_bench (back to back only) and the call time (not for
    a repeat) right after, so that the GPU is in the state it was timed in. Then the rows not yet stopped get a round
    each in turn until stoprule.reason lets them stop: their comparisons with the shape's other rows decided, or
    the cap. Errors become the row's status; `out_of_time`: the budget ran out."""
    firsts, timed, probed = {}, [], 0.0
    for row, call in rows:
        if call is None:
            continue
        try:
            first = firsts.get(row["backend"]) if row["repeat"] else None
            method = first.again(call) if first is not None else timing.start(torch, call, ctx["flush"],
                                                                                ctx["cycles_per_ms"])
        except Exception as exc:  # noqa: BLE001 - one backend's failure is that row's result, the run goes on
            failed(row, exc)
            continue
        if not row["repeat"]:
            firsts[row["backend"]] = method
            probed += timing.busy_ms(method) if method.host_fast else 0.0
        timed.append((row, method))
    _loaded(ctx, probed)
    pending = []
    for row, method in sorted(timed, key=lambda item: (not item[1].host_fast, item[0]["repeat"])):
        if out_of_time():
            row.update(status="skipped", reason="the time budget (%g s) ran out before it was timed" % ctx["budget_s"])
            continue
        try:
            row["window"] = [time.time(), None]
            _sustain(ctx, method)
            while True:
                timing.one_round(torch, method, ctx["flush"], ctx["cycles_per_ms"])
                if len(method.samples) >= timing.MIN_REPS:
                    break
            method.stop = stoprule.alone(timing.summarize(method.samples), ctx["noise_target"])
            row["kernel_ms"] = method.summary()
            if not row["repeat"]:
                if ctx["do_bench"] is not None and method.host_fast:  # a check of the kernel time where both time it
                    row["do_bench_ms"] = ctx["do_bench"](method.call, return_mode="median", **timing.DO_BENCH)
                row["call_ms"], row["host_ms"], row["call_spread"] = timing.call_time(torch, method.call)
            row["window"][1] = time.time()
            if method.host_fast:
                _loaded(ctx, timing.SUSTAIN_MS)
            if not row["repeat"] and ctx["profile_kernels"]:
                try:
                    row["device_kernels"] = timing.device_kernels(torch, method.call)
                except Exception as exc:  # the profiler is a witness, not the measurement
                    row["device_kernels"] = ["(profiler failed: %s)" % str(exc)[:200]]
            row["status"] = "ok"
        except Exception as exc:  # noqa: BLE001
            failed(row, exc)
            continue
        if method.stop is None:
            pending.append((row, method))
    fastest_ms = shape_fastest_ms(shape, ctx["peak_tflops"])
    while pending:
        for item in list(pending):
            row, method = item
            figures = {id(r): _figure(r, m, fastest_ms) for r, m in timed if r["status"] == "ok"}
            drift, drift_error, drifting = _drift(timed, figures)
            firsts_ok = [r for r, _ in timed if id(r) in figures and not r["repeat"]]
            pairs = [(figures[id(a)], figures[id(b)]) for i, a in enumerate(firsts_ok) for b in firsts_ok[i + 1:]
                     if id(row) in drifting or row in (a, b)]
            method.stop = stoprule.reason(figures[id(row)], pairs, ctx["noise_target"], ctx["noise_floor"],
                                          method.spent_s, ctx["time_cap_s"], drift,
                                          drift_error if id(row) in drifting else 0.0)
            if method.stop is None and out_of_time():
                method.stop = "budget"
            if method.stop is None:
                try:
                    _sustain(ctx, method)
                    timing.one_round(torch, method, ctx["flush"], ctx["cycles_per_ms"])
                    if method.host_fast:
                        _loaded(ctx, timing.SUSTAIN_MS)
                except Exception as exc:  # noqa: BLE001
                    failed(row, exc)
                    pending.remove(item)
                continue
            row["kernel_ms"] = method.summary()
            row["window"][1] = time.time()
            pending.remove(item)


def _loaded(ctx, busy_ms):
    """The GPU ran busy_ms of work just now (the probes; a row timed back to back: SUSTAIN_MS, it is sustained)."""
    ctx["loaded_at"], ctx["loaded_ms"] = time.perf_counter(), busy_ms


def _sustain(ctx, method):
    """The row's warm-up, the work the GPU ran moments ago (LOADED_GAP_S) counted."""
    recent = time.perf_counter() - ctx["loaded_at"] < LOADED_GAP_S
    timing.sustain(method, ctx["flush"], ctx["loaded_ms"] if recent else 0.0)


def shape_fastest_ms(shape, peak_tflops):
    """The least time the shape's GEMM can take at the GPU's dense peak, its batch counted as bench.shapes.Shape.flops
    counts it for the analysis that refuses a faster figure (None: no peak known)."""
    if not peak_tflops:
        return None
    return 2.0 * shape["m"] * shape["n"] * shape["k"] * shape.get("batch", 1) / (peak_tflops * 1e12) * 1e3


def _figure(row, method, fastest_ms):
    """What stoprule reads of a row: its samples' summary so far, do_bench's distance where it times the same thing,
    and the least time the GPU's peak allows."""
    figure = timing.summarize(method.samples)
    if row.get("do_bench_ms") and method.host_fast:
        figure["gap"] = abs(row["do_bench_ms"] / figure["median"] - 1)
    figure["fastest_ms"] = fastest_ms
    return figure


def _drift(timed, figures):
    """(the largest drift between a repeat and its first, its standard error, the ids of the rows measuring it):
    (None, 0.0, ()) where no repeat was timed."""
    firsts = {r["backend"]: r for r, _ in timed if not r["repeat"] and id(r) in figures}
    found = []
    for row, _ in timed:
        first = firsts.get(row["backend"]) if row["repeat"] and id(row) in figures else None
        if first is not None:
            a, b = figures[id(first)], figures[id(row)]
            found.append((abs(b["median"] - a["median"]) / a["median"],
                          math.hypot(stoprule.median_error(a), stoprule.median_error(b)), (id(first), id(row))))
    if not found:
        return None, 0.0, ()
    drift, error, ids = max(found)
    return drift, error, ids


def failed(row, exc):
    """The row's status, reason and error from an exception (its traceback to stderr: the log)."""
    row["status"] = "error"
    row["reason"] = "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:500] if str(exc) else "")
    row["error"] = {"type": type(exc).__module__ + "." + type(exc).__qualname__, "message": str(exc)[:4000]}
    sys.stderr.write(traceback.format_exc())
