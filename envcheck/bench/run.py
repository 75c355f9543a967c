"""The bench run: time each GEMM backend through Inductor in the target interpreter, and decide.

The flow: NVML first (no GPU: commands/bench.py says so within a second or two, nothing started), the target's facts
and the preflight smoke uses too (no torch, a CPU build, no cutlass_api: the same causes and remedies, causes/), then
the child (envcheck/inside/bench_child.py and its helpers, through runner.py) under a timeout of the budget plus a
start-up allowance, while a thread samples NVML; then analysis (pure) and the result, saved as the last bench under
the cache (doctor --bench embeds it).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Callable, Mapping, Optional

from .. import paths, runner, shell
from ..atomic import replace_text
from ..inside.protocol import BENCH_COMPILED, BENCH_PHASE, BENCH_RESULT, BENCH_ROW, phase_of, result_lines
from ..judge.target import needed_environment
from ..model import Status
from ..runner import BENCH_SCRIPTS
from . import analysis
from .autotune import autotune_report, mix_backends
from .data import peak_for
from .gpustate import gpu_samples, gpu_state
from .noise import NOISE_FLOOR
from .result import BenchOptions, BenchResult
from .watch import GpuWatch

__all__ = ["run_bench", "last_bench", "save_last", "no_gpu_reason", "rows_and_candidates", "SCHEMA_VERSION", "DTYPE_FLAGS"]

SCHEMA_VERSION = 2  # 2: `profile` is an object {id, reason, source, verified}, as doctor's (1: the id)
STARTUP_S = 180.0  # beyond the budget: interpreter start, imports, the first NVGEMM kernel lookup
# --library times nvMatmulHeuristics' best 5 candidates per shape (--all-candidates: every one). Why 5: it is what
# torch 2.11's Inductor autotunes (nvgemm_max_profiling_configs; 2.14's 10 is for mid-M ~512, where the winner can
# rank deeper); a candidate costs ~2 s on the H200 (compile ~1.2 s, timing ~0.8 s: bench-library.txt), so the three
# anchor shapes take 3 x (1 + 5) rows, ~35 s with the start, where 10 would need ~65 s, over the 60 s goal; and on
# the captured sweeps (benchmarks/bench_time_budget.py) the heuristic's first is the measured best at 4096^3, and at
# 8192^3 its top 5 is within 3.4% of the best measured, which it does not propose at all (no K finds it there).
LIBRARY_TOP_K = 5
DTYPE_FLAGS = {"bf16": "bfloat16", "fp16": "float16"}
LAST = "last.json"


def _failed(summary: str, cause_id: str, **fields) -> BenchResult:
    return BenchResult(status=Status.FAIL, summary=f"bench failed: {summary}", cause=summary, cause_id=cause_id, **fields)


def run_bench(
    python: str,
    facts,
    policy,
    options: BenchOptions,
    *,
    cache_dir: Optional[Path] = None,
    env: Optional[Mapping[str, str]] = None,
    child: Optional[Path] = None,
    progress: Callable[[str], None] = lambda message: None,
) -> BenchResult:
    """Measure and decide. Never raises for anything the target does: every outcome is a BenchResult.

    child: the script to run (default envcheck/inside/bench_child.py; tests pass others that replay captured
    output).

    The backends are compiled ATEN, mix, TRITON, NVGEMM: mix autotunes the union of the others' choices, which
    fills Inductor's local autotune cache (autotune_local_cache) for the shape, so that TRITON's and NVGEMM's
    compiles find every one of their choices timed and benchmark none again (PersistentCache.lookup re-benchmarks
    only on a miss; ATEN, one choice, is never benchmarked, so mix last missed it and re-timed all ~25). Each
    choice is then timed once per shape, by the same Inductor code, and every row still measures what Inductor
    picked (benchmarks/bench_time_budget.py: cold compiles were 73-87% of the time)."""
    from ..causes import Evidence, context_from, diagnose, preflight
    from ..causes.candidates import environment_cause

    base_env = dict(os.environ if env is None else env)
    cache_root = Path(cache_dir) if cache_dir is not None else paths.cache_dir(base_env)
    backend = policy.backend
    ctx = context_from(facts, policy, python, backend, options.dtype)
    way = runner.compile_way(base_env, facts, policy)
    common = dict(backend=backend, dtype=options.dtype, gpu=_plain_name(ctx.gpu), budget_s=options.budget_s,
                  cache_dir=str(runner.cache_dirs(cache_root, way.value)[0]))
    early = preflight(facts, policy, ctx)
    if early is not None:  # no child ran: it compiled no way
        return _failed(early.text, early.id, **common)
    common["compile_target"] = way
    run_dir, _ = runner.prepare_run(cache_root, "bench", fresh=options.fresh, env=base_env,
                                    named=cache_dir is not None, way=way)
    code_dir = run_dir / "code"
    code_dir.mkdir()
    script = runner.write_scripts(run_dir, BENCH_SCRIPTS, child)
    library = policy.smoke.library if options.library else None
    plan = {
        "shapes": [s.to_dict() for s in options.shapes],
        "dtype": options.dtype,
        "cutedsl_backend": backend,
        "backends": [{"name": "ATEN", "backends": "ATEN"},
                     {"name": analysis.MIX, "backends": mix_backends(backend)},
                     {"name": "TRITON", "backends": "TRITON"},
                     {"name": backend, "backends": backend}],
        "library": library,
        "top_k": None if options.all_candidates else LIBRARY_TOP_K,
        "budget_s": options.budget_s,
        "noise_target": options.noise_target,
        "noise_floor": NOISE_FLOOR,  # the analysis' noise rule, which the child's stop rule reads (inside/stoprule.py)
        "peak_tflops": _peak_tflops(ctx.gpu, options.dtype),  # a faster figure is broken: it decides nothing
        "time_cap_s": options.time_cap_s,
        "seed": 0,
    }
    if library:
        plan["backends"] = [{"name": "cuBLAS", "backends": "torch.mm"}, {"name": library, "backends": library}]
        backend = library
        common["backend"] = library
    (run_dir / "plan.json").write_text(json.dumps(plan, indent=1), encoding="utf-8")

    argv = [python, str(script), "--plan", str(run_dir / "plan.json"), "--code-dir", str(code_dir),
            *runner.lookup_arguments(policy.smoke.library, cache_root)]
    log_path = run_dir / "bench.log"
    common["log"] = str(log_path)
    timeout = options.timeout_s if options.timeout_s is not None else options.budget_s + STARTUP_S
    which = "every" if options.all_candidates else f"nvMatmulHeuristics' best {LIBRARY_TOP_K} of the"
    what = (f"cuBLAS and {which} {library} kernels, called directly" if library
            else f"4 backends ({backend}, ATEN, TRITON, mix) through Inductor")
    progress(f"{len(options.shapes)} shapes x {what}, in {python}, budget {options.budget_s:g} s; log: {log_path}")
    watch = GpuWatch().start()
    before = list(watch.samples)
    environment = runner.child_environment(
        base_env, cache_root, {"TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS": mix_backends(policy.backend)}, way)
    common["environment"] = environment.record
    stop = threading.Event()
    with open(log_path, "w", encoding="utf-8") as log:
        log.write(f"# envcheck bench: {shell.line(argv)}\n# timeout {timeout:g} s, cache {cache_root}\n")
        log.flush()
        follower = threading.Thread(target=_follow, args=(log_path, progress, stop), daemon=True)
        follower.start()

        def started(pid: int) -> None:
            watch.session = pid

        try:
            end = runner.run_child(argv, environment.variables, run_dir, log, timeout, started=started)
        except OSError as exc:
            watch.stop()
            return _failed(f"could not start {python}: {exc.strerror or exc}", "interpreter", **common)
        finally:
            stop.set()
    samples = watch.stop()
    follower.join(timeout=2)
    text = log_path.read_text(encoding="utf-8", errors="replace")
    rows, candidates = rows_and_candidates(text)
    results = result_lines(text, BENCH_RESULT)
    result = results[-1] if results else None
    gpu = (result or {}).get("gpu") or {}
    peak = peak_for(gpu.get("name") or ctx.gpu or "")
    found, repeats = analysis.measurements(rows, peak, options.dtype, samples, gpu.get("uuid"), candidates=candidates)
    if not library:
        found = _shown_order(found, backend)
    verdicts = analysis.shape_verdicts(found, repeats, backend)
    gpu_name = gpu.get("name") or _plain_name(ctx.gpu) or "this GPU"
    mine = gpu_samples(samples, gpu.get("uuid"))
    fields = dict(
        common,
        gpu=gpu_name,
        capability=tuple(gpu["capability"]) if gpu.get("capability") else ctx.capability,
        peak=peak,
        measurements=tuple(found),
        verdicts=tuple(verdicts),
        gpu_before=gpu_state(mine[:1]),
        gpu_after=gpu_state(mine[-1:]),
        busy_before=tuple(sorted({p for s in before for p in s.foreign + s.unknown})),
        watch_error=watch.error,
        versions=runner.versions_of(result),
        elapsed_s=end.elapsed_s,
    )
    trusted = [m for m in found if m.trusted]
    if not trusted:
        evidence = Evidence(result=_as_smoke_result(result), log=text, returncode=end.returncode,
                            timed_out=end.timed_out, timeout_s=timeout, last_phase=(result or {}).get("phase"))
        cause = diagnose(evidence, ctx)
        first_failure = next((m.reason for m in found if m.reason), "")
        said = cause.text if result is None or (result.get("error") or end.timed_out) else (first_failure or cause.text)
        return _failed(said, cause.id, **fields)
    decision = analysis.decide(verdicts, found, backend, gpu_name, library=bool(library),
                               environment=needed_environment(facts, policy))
    problems = [m for m in found if m.status in ("refused", "wrong-result")]
    skipped = [m for m in found if m.status == "skipped"]
    lost = environment_cause(tuple(g for v in verdicts for g in v.candidates), ctx)
    if lost is not None:  # measured, but not what a process with the remedy would pick from
        fields.update(cause=lost.text, cause_id=lost.id, remedy=lost.remedy)
    status = Status.WARN if problems or skipped or fields["busy_before"] or end.timed_out or lost else Status.PASS
    summary = decision.text
    candidates = "; ".join((result or {}).get("candidates") or ()) or None
    if library and candidates:
        summary += f" ({library}: {candidates} per shape)"
    if problems:
        summary += f" ({len(problems)} figures refused or wrong)"
    if skipped or end.timed_out:
        summary += f" (incomplete: {len(skipped)} measurements not taken within the budget)"
    cost = None if library else autotune_report(verdicts, mix_backends(backend), options.weights)
    return BenchResult(status=status, summary=summary, decision=decision, autotune=cost, candidates=candidates,
                       **fields)


def rows_and_candidates(text: str) -> tuple[list[dict], list[tuple]]:
    """The child's row lines, each with the NVGEMM candidates its compile autotuned (causes/candidates.py): what the
    log shows before the row's compile mark (BENCH_COMPILED), since the mark or row line before it. A log without
    marks (a child of envcheck before them, which timed each row right after its compile): before the row line."""
    from ..causes.candidates import read_candidates, split_at
    from ..causes.log import clean_line

    compiled: dict = {}
    rows, candidates = [], []
    for first, lines in split_at(text, (BENCH_ROW, BENCH_COMPILED)):
        if not lines:
            continue
        found = read_candidates((clean_line(line) for line in lines[:-1]), first)
        mark = result_lines(lines[-1], BENCH_COMPILED)
        row = result_lines(lines[-1], BENCH_ROW)
        if mark:
            compiled[_row_key(mark[0])] = found
        elif row:
            rows.append(row[0])
            candidates.append(() if row[0].get("repeat") else compiled.pop(_row_key(row[0]), ()) + found)
    return rows, candidates


def _row_key(line: dict) -> str:
    return json.dumps([line.get("shape"), line.get("backend")], sort_keys=True)


def _shown_order(found: list, backend: str) -> list:
    """The measurements per shape in the order a reader compares them (ATEN, TRITON, the backend, mix), whatever
    order they were compiled in (stable: anything else keeps its place after them)."""
    rank = {name: i for i, name in enumerate(("ATEN", "TRITON", backend, analysis.MIX))}
    first: dict = {}
    for m in found:
        first.setdefault(m.shape, len(first))
    return sorted(found, key=lambda m: (first[m.shape], rank.get(m.backend, len(rank))))


def _peak_tflops(gpu: Optional[str], dtype: str) -> Optional[float]:
    """The dense peak of the GPU the facts name, for the dtype (None: not in peaks.toml)."""
    peak = peak_for(gpu or "")
    return peak.for_dtype(dtype) if peak is not None else None


def _plain_name(gpu: Optional[str]) -> Optional[str]:
    """"NVIDIA H200" from the facts' "NVIDIA H200 (9.0)" (the capability is shown on its own)."""
    return gpu.rsplit(" (", 1)[0] if gpu and gpu.endswith(")") else (gpu or None)


def _as_smoke_result(result: Optional[dict]) -> Optional[dict]:
    """The child's result line in the shape smoke's diagnose reads (it looks at "error" and "phase")."""
    if result is None:
        return None
    return {"ok": False, "phase": result.get("phase"), "error": result.get("error")}


def _follow(path: Path, progress: Callable[[str], None], stop: threading.Event) -> None:
    """Tell the user what the child is doing: its phase lines, as they come."""
    position = 0
    while True:
        done = stop.wait(1.0)
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                handle.seek(position)
                chunk = handle.read()
                position = handle.tell()
        except OSError:
            return
        for line in chunk.splitlines():
            said = phase_of(line, BENCH_PHASE)
            if said is not None:
                progress(said)
            elif line.startswith("envcheck-bench: row "):
                progress("  " + line[len("envcheck-bench: row "):])
        if done:
            return


# --------------------------------------------------------------------------------------------------------------
# The last result, for doctor --bench


def save_last(cache_root: Path, data: dict) -> Path:
    path = cache_root / "bench" / LAST
    replace_text(path, json.dumps(data, indent=1))  # two benches at once: each replaces it whole
    return path


def last_bench(cache_root: Optional[Path] = None) -> Optional[dict]:
    """The last bench's JSON, or None when there is none (or it cannot be read)."""
    path = (cache_root or paths.cache_dir()) / "bench" / LAST
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


# --------------------------------------------------------------------------------------------------------------
# Before anything starts


def no_gpu_reason() -> Optional[str]:
    """Why there is no GPU to bench on, from NVML alone (fast: no interpreter is started), or None."""
    from ..gather.driver import NvmlUnavailable, gather_driver

    try:
        driver = gather_driver()
    except NvmlUnavailable as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - NVML itself misbehaving is also "no GPU to bench on"
        return f"NVML failed: {exc}"
    return None if driver.gpus else "the NVIDIA driver reports no GPU"
