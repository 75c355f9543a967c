"""The line protocol between envcheck and the scripts it runs in the target interpreter (the smoke and bench children).

The children: smoke_child.py, bench_child.py, and for `bench --model` model_record.py and model_time.py.
While a child works it writes progress lines `PHASE_PREFIX NAME +SECONDS` to stderr; on stdout it writes `PREFIX
{json}` lines (bench: one row per measurement as soon as it is taken), and at the end exactly one result line,
whatever happened, so that a log can surround it. A result says ok or not, the last phase reached, the phases' times,
and on failure the exception's type, message and traceback: the type of an error envcheck raises is its class name
(SmokeNoCuda), which smoke's and explain's table of failure signatures matches. A crash in native code (a signal) or
a hang leaves no result line, and the parent says so.

Child side: Recorder, the errors, run_guarded, exit_now. Parent side: result_lines, phase_of (envcheck reads the log
with them). Standard library only, Python 3.8 syntax: this file is copied into the run folder as envcheck_protocol.py.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

PROTOCOL = 1
SMOKE_RESULT = "ENVCHECK-SMOKE-RESULT "
SMOKE_PHASE = "envcheck-smoke: phase "
BENCH_RESULT = "ENVCHECK-BENCH-RESULT "
BENCH_ROW = "ENVCHECK-BENCH-ROW "
BENCH_COMPILED = "ENVCHECK-BENCH-COMPILED "  # {"shape", "backend"}: a row's compile ended (its autotuning is above)
BENCH_PHASE = "envcheck-bench: phase "
MODEL_RECORD = "ENVCHECK-MODEL-RECORD "  # model_record.py's result: the GEMMs a user's model runs
MODEL_ROW = "ENVCHECK-MODEL-ROW "  # model_time.py: the model compiled with one set of backends, timed
MODEL_RESULT = "ENVCHECK-MODEL-RESULT "  # model_time.py's result
MODEL_PHASE = "envcheck-model: phase "


class SmokeError(Exception):
    """A failure the smoke run itself detects; its class name is the protocol's error type."""


class SmokeNoCuda(SmokeError):
    """torch sees no CUDA device."""


class SmokeFellBack(SmokeError):
    """Inductor's code does not call the CuteDSL kernel: something else computed the GEMM."""


class SmokeWrongResult(SmokeError):
    """The CuteDSL kernel ran and its result does not match the fp32 reference."""


class SmokeNoKernel(SmokeError):
    """The library offers no kernel for this GEMM on this GPU, or none of the ones tried compiled and ran."""


class ModelUnusable(SmokeError):
    """The file `bench --model` names, or its function, cannot be used: no such function, not callable, or what it
    returns is not (an nn.Module, its example inputs). The user's own code failing is its own error, not this one."""


class Recorder:
    """The result line being built (every field of `schema`, null until known), and the phases reached."""

    def __init__(self, schema, phase_prefix, **start):
        self.start = time.perf_counter()
        self.phase_prefix = phase_prefix
        self.result = dict.fromkeys(schema)
        self.result.update(protocol=PROTOCOL, ok=False, phase="start", timings=[], **start)

    def phase(self, name):
        now = round(time.perf_counter() - self.start, 3)
        self.result["phase"] = name
        self.result["timings"].append([name, now])
        sys.stderr.write("%s%s +%.3f\n" % (self.phase_prefix, name, now))
        sys.stderr.flush()

    def elapsed(self):
        return time.perf_counter() - self.start

    @staticmethod
    def emit(prefix, data):
        sys.stdout.flush()
        sys.stderr.flush()
        line = "\n" + prefix + json.dumps(data, default=str) + "\n"
        os.write(1, line.encode("utf-8"))  # one write, so nothing the process prints can land inside it


def error_record(exc, text):
    """{"type", "message", "traceback"} of a failure: the type bare for a built-in exception and for the errors
    above (whether this file is envcheck.inside.protocol or the envcheck_protocol copy), else module.qualname."""
    kind = type(exc)
    bare = kind.__module__ in ("__main__", "builtins", __name__)
    return {
        "type": kind.__name__ if bare else kind.__module__ + "." + kind.__qualname__,
        "message": str(exc)[:8000],
        "traceback": text[-12000:],
    }


def run_guarded(body, recorder):
    """body(); every failure, Ctrl-C included, becomes the result's error (and its traceback goes to the log)."""
    try:
        body()
    except BaseException as exc:  # noqa: BLE001 - every failure, Ctrl-C included, becomes the result line
        text = traceback.format_exc()
        sys.stderr.write(text)
        recorder.result["error"] = error_record(exc, text)


def exit_now(status):
    """End the child once its result is out, skipping the interpreter's teardown (seconds of atexit work in torch,
    CUDA and the DSL): every cache is written when it is filled, and envcheck ends whatever this process leaves in
    its group."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def result_lines(text, prefix):
    """Every `PREFIX {json object}` line of a child's output, in order; a torn or foreign line is skipped."""
    found = []
    for line in text.splitlines():
        if line.startswith(prefix):
            try:
                loaded = json.loads(line[len(prefix):])
            except ValueError:
                continue
            if isinstance(loaded, dict):
                found.append(loaded)
    return found


def phase_of(line, prefix):
    """What a progress line says after its prefix ("compile +12.345"), or None for any other line."""
    return line[len(prefix):] if line.startswith(prefix) else None
