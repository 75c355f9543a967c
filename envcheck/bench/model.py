"""`envcheck bench --model FILE.py[:FUNCTION]`: bench exactly the GEMMs a user's model runs, then check the
per-shape decision on the model itself.

The flow, each step a child in the target interpreter (runner.py: a run folder, a clean environment, a timeout that
kills the process group):
1. envcheck/inside/model_record.py runs one real forward of the model on the device it is timed on (CUDA; the CPU
   where there is no GPU; the meta device where the user asks, --record-on meta, or the device cannot run it) and
   records every GEMM (op, shapes, strides, dtype, bias, how often) and the other product ops it ran (SDPA's fused
   kernel...).
2. bench/run.py benches those GEMMs each as its own op, in their layouts, weighted by their counts
   (model_result.bench_inputs); its child's log says how many choices Inductor offered the backend for each
   (model_result.nvgemm_offered).
3. envcheck/inside/model_time.py compiles the module with ATEN,TRITON; ATEN,TRITON,<backend>; <backend> alone (and
   a backend bench pinned, if any), times each per forward and counts the GEMMs each runs on each backend; a set
   that fails gets its cause (causes/, as smoke and explain name it) and the op it failed on;
   model_outcome.model_verdict says whether the per-shape advice holds on the model, and why.

The file is code the user names to run: it runs only in those children, only with --model, never from a profile or
other data. A path that is not a .py file, or a FUNCTION that is not a name, is exit 2 before anything runs; a
function the child cannot use (missing, or returning something else than a module and its inputs) is exit 2 naming
--model and the log; the user's own code failing is a failed result with its traceback in the log.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Callable, Mapping, Optional

from .. import paths, runner, shell
from ..errors import UsageError
from ..inside.protocol import MODEL_RECORD, MODEL_RESULT, MODEL_ROW, result_lines
from ..inside.usermodel import DEFAULT_FUNCTION
from ..userfile import read_text
from .autotune import mix_backends
from .model_outcome import ModelBench, model_verdict
from .model_result import (ModelGemm, ModelRow, ModelSpec, ModelTiming, OtherOp, Recording, bench_inputs, drift_of,
                           nvgemm_offered, timing_sets)
from .result import BenchOptions, BenchResult

__all__ = ["parse_model", "record_gemms", "time_model", "run_model_bench", "RECORD_SCRIPTS", "TIME_SCRIPTS"]

RECORD_SCRIPTS = ("model_record", "protocol", "gemm", "usermodel")
TIME_SCRIPTS = ("model_time", "protocol", "gemm", "usermodel")
RECORD_TIMEOUT_S = 300.0  # import torch, build the module on the device, one forward (on the CPU: more)
RECORD_DEVICES = ("cuda", "cpu", "meta")  # --record-on
STARTUP_S = 180.0  # beyond the budget for the timing child, as bench's own


def parse_model(value: str) -> ModelSpec:
    """--model FILE.py[:FUNCTION]: the file must be a regular, readable .py file (read, not run, here); FUNCTION a
    Python name (default "model")."""
    path, colon, function = value.rpartition(":")
    if not colon or not path.endswith(".py"):  # no FUNCTION (a colon elsewhere belongs to the path)
        path, function = value, DEFAULT_FUNCTION
    where = f"--model {value}"
    if not path.endswith(".py"):
        raise UsageError(f"{where}: expected FILE.py or FILE.py:FUNCTION (a Python file and the function in it that "
                         f"returns the module and its example inputs; default {DEFAULT_FUNCTION})")
    if not function.isidentifier():
        raise UsageError(f"{where}: {function!r} is not a function name; expected FILE.py:FUNCTION")
    read_text(Path(path), where)  # a regular file, UTF-8, not too large: else a UsageError naming it
    return ModelSpec(str(Path(path).resolve()), function)


def _child(kind: str, scripts, python: str, tail: list, cache_root: Path, base_env: Mapping[str, str],
           settings: Mapping[str, str], timeout: float, child: Optional[Path], progress, what: str, way=None):
    """Run one model child: (its log's text, how it ended, the log's path). OSError when it cannot start. way: the
    compile target it runs with (runner.compile_way: the timing child compiles as bench's child does)."""
    run_dir, _ = runner.prepare_run(cache_root, kind, fresh=False, env=base_env, named=True, way=way)
    script = runner.write_scripts(run_dir, scripts, child)
    argv = [python, str(script), *tail]
    log_path = run_dir / f"{kind}.log"
    progress(f"{what} in {python}; log: {log_path}")
    environment = runner.child_environment(base_env, cache_root, settings, way)
    with open(log_path, "w", encoding="utf-8") as log:
        log.write(f"# envcheck bench --model: {shell.line(argv)}\n# timeout {timeout:g} s, cache {cache_root}\n")
        log.flush()
        end = runner.run_child(argv, environment.variables, run_dir, log, timeout)
    return log_path.read_text(encoding="utf-8", errors="replace"), end, log_path


def _failure(result: Optional[dict], end, timeout: float, spec: ModelSpec, log: Path) -> str:
    """Why a child proved nothing: its error, a timeout, or its death; UsageError where the --model function cannot
    be used (the user's input, not the stack)."""
    error = (result or {}).get("error") or {}
    if error.get("type") == "ModelUnusable":
        raise UsageError(f"{error.get('message')} (log: {log})")
    if end.timed_out:
        return f"killed after {timeout:g} s (phase {(result or {}).get('phase') or 'start'})"
    if error:
        return f"{error.get('type')}: {(error.get('message') or '').splitlines()[0][:300] if error.get('message') else ''}"
    return f"it ended with exit status {end.returncode} and no result line (a crash)"


def record_gemms(python: str, spec: ModelSpec, cache_root: Path, base_env: Mapping[str, str], *, device: str,
                 fallback: Optional[str] = None, asked: bool = False, timeout: float = RECORD_TIMEOUT_S,
                 child: Optional[Path] = None, progress: Callable[[str], None] = lambda message: None) -> Recording:
    """Step 1: the model's GEMMs, one forward on `device` (else on `fallback`); asked: the user chose the device.
    Never raises for what the target does, except UsageError for an unusable --model function."""
    tail = ["--model", spec.path, "--function", spec.function, "--device", device]
    tail += ["--fallback", fallback] if fallback else []
    try:
        text, end, log = _child("model", RECORD_SCRIPTS, python, tail, cache_root, base_env, {}, timeout, child,
                                progress, f"recording the GEMMs of {spec.text} ({device} device)")
    except OSError as exc:
        return Recording(ok=False, error=f"could not start {python}: {exc.strerror or exc}")
    found = result_lines(text, MODEL_RECORD)
    result = found[-1] if found else None
    tried = tuple((str(t.get("device")), str(t.get("error"))) for t in (result or {}).get("tried") or ())
    if result is None or not result.get("ok"):
        return Recording(ok=False, tried=tried, error=_failure(result, end, timeout, spec, log), log=str(log))
    gemms = tuple(ModelGemm(op=str(g["op"]), m=int(g["m"]), n=int(g["n"]), k=int(g["k"]), batch=int(g.get("batch") or 1),
                            dtype=str(g["dtype"]), layout=g.get("layout"), count=int(g["count"]),
                            a_strides=tuple(g.get("a_strides") or ()), b_strides=tuple(g.get("b_strides") or ()),
                            modules=tuple(str(m) for m in g.get("modules") or ()),
                            out_dtype=str(g.get("out_dtype") or ""), bias=tuple(int(d) for d in g.get("bias") or ()))
                  for g in result.get("gemms") or ())
    others = tuple(OtherOp(str(o["op"]), int(o["count"]), tuple(str(m) for m in o.get("modules") or ()))
                   for o in result.get("others") or ())
    return Recording(ok=True, gemms=gemms, device=result.get("device"), tried=tried, module=result.get("module") or {},
                     log=str(log), others=others, asked=asked and result.get("device") == device)


def time_model(python: str, spec: ModelSpec, sets: list, cache_root: Path, base_env: Mapping[str, str], backend: str, *,
               budget_s: float, timeout: Optional[float] = None, child: Optional[Path] = None, way=None,
               progress: Callable[[str], None] = lambda message: None) -> ModelTiming:
    """Step 3: the module compiled with each set and timed per forward, the compile target passed on as bench's
    child gets it (`way`)."""
    cache_root.mkdir(parents=True, exist_ok=True)
    plan_path = cache_root / "model" / "time-plan.json"
    plan_path.parent.mkdir(parents=True, exist_ok=True)
    plan_path.write_text(json.dumps({"sets": [{"name": s["name"], "backends": s["backends"]} for s in sets],
                                     "warmup_ms": 50, "rep_ms": 300, "budget_s": budget_s}), encoding="utf-8")
    limit = timeout if timeout is not None else budget_s + STARTUP_S
    tail = ["--model", spec.path, "--function", spec.function, "--plan", str(plan_path)]
    try:
        text, end, log = _child("model", TIME_SCRIPTS, python, tail, cache_root, base_env,
                                {"TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS": mix_backends(backend)}, limit, child,
                                progress, f"timing {spec.text} compiled with {len(sets)} sets of backends", way)
    except OSError as exc:
        return ModelTiming(error=f"could not start {python}: {exc.strerror or exc}")
    found = result_lines(text, MODEL_RESULT)
    result = found[-1] if found else None
    raw = result_lines(text, MODEL_ROW)
    advised = {s["name"] for s in sets if s.get("recommended")}
    rows = tuple(ModelRow(name=str(r.get("name")), backends=str(r.get("backends")), status=str(r.get("status")),
                          reason=str(r.get("reason") or ""), ms=(r.get("ms") or {}).get("median"),
                          spread=(r.get("ms") or {}).get("spread"), compile_s=r.get("compile_s"),
                          max_error=r.get("max_error"), gemm_calls=tuple(sorted((r.get("gemm_calls") or {}).items())),
                          recommended=r.get("name") in advised, error=str((r.get("error") or {}).get("message") or ""))
                 for r in raw if not r.get("repeat"))
    eager = ((result or {}).get("eager_ms") or {}).get("median")
    error = None if result is not None and result.get("ok") else _failure(result, end, limit, spec, log)
    return ModelTiming(rows=rows, eager_ms=eager, drift=drift_of(raw), error=error, log=str(log))


def run_model_bench(python: str, facts, policy, spec: ModelSpec, options: BenchOptions, *, gpu: bool,
                    record_on: Optional[str] = None, cache_dir: Optional[Path] = None,
                    env: Optional[Mapping[str, str]] = None, children: Mapping[str, Path] = {},
                    progress: Callable[[str], None] = lambda message: None,
                    ) -> tuple[ModelBench, Optional[BenchResult]]:
    """The three steps (gpu False: the first alone, on a machine without a GPU: what would be benched). record_on:
    the device the user asked to record on (--record-on; default the one the model is timed on). children:
    stand-ins for "record", "bench" and "time" (tests replay captured output with them)."""
    from ..causes import context_from
    from .run import run_bench

    base_env = dict(os.environ if env is None else env)
    cache_root = Path(cache_dir) if cache_dir is not None else paths.cache_dir(base_env)
    timed_on = "cuda" if gpu else "cpu"
    device = record_on or timed_on
    recording = record_gemms(python, spec, cache_root, base_env, device=device,
                             fallback=timed_on if device == "meta" else "meta", asked=record_on is not None,
                             child=children.get("record"), progress=progress)
    if not recording.ok:
        return ModelBench(spec, recording, backend=policy.backend), None
    shapes, weights, dtype, skipped = bench_inputs(recording, spec.path)
    model = ModelBench(spec, recording, skipped, backend=policy.backend)
    if not gpu or not shapes:
        return model, None
    bench = run_bench(python, facts, policy, replace(options, shapes=shapes, weights=weights, dtype=dtype),
                      cache_dir=cache_root, env=base_env, child=children.get("bench"), progress=progress)
    ctx = context_from(facts, policy, python, policy.backend, dtype or "bfloat16")
    model = replace(model, offered=_offered(recording, skipped, bench, policy.backend, ctx))
    if not bench.measurements:
        return model, bench
    sets = timing_sets(policy.backend, bench.decision, bench.autotune)
    timing = time_model(python, spec, sets, cache_root, base_env, policy.backend, budget_s=options.budget_s,
                        timeout=options.timeout_s, child=children.get("time"),
                        way=runner.compile_way(base_env, facts, policy), progress=progress)
    timing = replace(timing, rows=tuple(_explained(row, ctx) for row in timing.rows))
    return replace(model, timing=timing, verdict=model_verdict(timing, bench.decision, policy.backend)), bench


def _cause(error: dict, ctx):
    """The cause of one failed compile, as smoke and explain name it (causes/signatures.toml, through diagnose)."""
    from ..causes import Evidence, diagnose

    return diagnose(Evidence(result={"ok": False, "error": error}, log="", returncode=1), ctx)


def _explained(row: ModelRow, ctx) -> ModelRow:
    """A set that failed to compile, with its cause (the first signature its error shows) and the op it failed on
    (its error's `target:` line)."""
    from ..causes import lowering_target

    if row.status != "error" or not (row.error or row.reason):
        return row
    cause = _cause({"type": "", "message": row.error or row.reason}, replace(ctx, backends=row.backends))
    return replace(row, cause_id=cause.id, cause=cause.text, failed_on=lowering_target(row.error))


def _offered(recording: Recording, skipped, bench: BenchResult, backend: str, ctx) -> tuple:
    """Per GEMM benched: what Inductor offered the backend for it (model_result.nvgemm_offered), from the bench's
    verdict on its shape and its compile with the backend alone."""
    verdicts = {v.shape.key: v for v in bench.verdicts}
    alone = {m.shape.key: m for m in bench.measurements if m.backend == backend}
    left = {g for g, _ in skipped}
    found = []
    for g in recording.gemms:
        if g in left:
            continue
        row = alone.get(g.shape.key)
        failed = row is not None and row.status == "error" and bool(row.reason)
        cause = _cause({"type": "", "message": row.reason}, replace(ctx, backends=backend)).id if failed else ""
        found.append((g, nvgemm_offered(verdicts.get(g.shape.key), row, backend, cause)))
    return tuple(found)
