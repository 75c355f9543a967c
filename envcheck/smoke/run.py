"""The smoke run: prove the stack by compiling and running one CuteDSL GEMM in the target interpreter.

The flow: preflight from the gathered facts (no GPU: skip; no cutlass_api, no torch: fail within seconds, without a
compile), then the child (envcheck/inside/smoke_child.py, copied into the run directory with its helpers and run by
path in the target interpreter, in a process group of its own, with a clean environment and a timeout: runner.py),
then its one result line read back and every failure mapped to a cause and a remedy (envcheck/causes/). The child's
whole output goes to a log whose path the result names. `envcheck smoke` itself is commands/smoke.py.

Inductor's caches live in a directory envcheck owns (paths.cache_dir()/inductor, with triton/ and cutedsl/ beside
it), so that a second smoke run is warm; --fresh empties them first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping, Optional

from packaging.version import InvalidVersion, Version

from .. import paths, runner, shell
from ..causes import Cause, Context, Evidence, context_from, diagnose, preflight
from ..causes.candidates import environment_cause, read_log_candidates
from ..inside.gemm import LINEAR
from ..inside.protocol import SMOKE_PHASE, SMOKE_RESULT, phase_of, result_lines
from ..model import CompileWay, Facts, GemmProof, Remedy, SmokeResult, Status
from ..model.candidates import lost_text
from ..profile import Policy
from ..runner import SMOKE_SCRIPTS, ChildEnd, run_child
from .forensics import process_from

__all__ = [
    "SmokeShape",
    "run_smoke",
    "child_environment",
    "parse_child_output",
    "smoke_backends",
    "write_child",
    "DEFAULT_TIMEOUT",
    "SCHEMA_VERSION",
]

SCHEMA_VERSION = 2  # 2: `profile` is an object {id, reason, source, verified}, as doctor's (1: the id)
DEFAULT_TIMEOUT = 300.0

@dataclass(frozen=True)
class SmokeShape:
    """The GEMM the smoke run compiles, one per layout of B (inside/gemm.py: nn.Linear's by default, the one LLM
    layers run): a decode step of 64 sequences through Llama's attention projection (4096 -> 4096), for which torch
    2.14.1 offers 10 NVGEMM candidates on an H200 and so, as for a model's GEMMs, sends them to its compile workers
    (8 or more: select_algorithm.py:4753-4767). The earlier 256x512x256 got 3, compiled in process: the smoke passed
    where a model lost 4 of 10 to the workers' target (tests/data/h200-s4/smoke-child-64.log). torch 2.15.0 offers it
    4, as it does a model's GEMMs, and compiles them in process (tests/data/h200-s5). Still cheap to run."""

    m: int = 64
    n: int = 4096
    k: int = 4096
    dtype: str = "bfloat16"
    layouts: tuple[str, ...] = (LINEAR,)

    @property
    def text(self) -> str:
        return f"{self.m}x{self.n}x{self.k} {self.dtype}, B {' and '.join(self.layouts)}"


# --------------------------------------------------------------------------------------------------------------
# The child


def smoke_backends(policy: Policy, capability: Optional[tuple[int, int]]) -> str:
    """The backends the smoke run allows: the profile's (`[smoke] backends`), plus those it names for this GPU
    (the CUTEDSL grouped-mm path on CC 10.x). Never ATEN or TRITON, so nothing can fall back silently."""
    return ",".join(policy.smoke.backends_for(capability))


def child_environment(base: Mapping[str, str], cache_root: Path, backends: str,
                      way: Optional[CompileWay] = None) -> runner.ChildEnvironment:
    """The child's environment: the caller's, less what would change the measurement (runner.ENVIRONMENT), plus
    envcheck's caches and the smoke's settings; and the record of it the result carries. way: the compile target it
    runs with (runner.compile_way)."""
    return runner.child_environment(base, cache_root, {
        # Nothing else of Inductor's is set: the GEMM compiles as the user's process compiles it, with the number of
        # NVGEMM candidates torch and the user's TORCHINDUCTOR_NVGEMM_* settings give it (passed on: runner.py) and
        # its pool of compile workers, which torch 2.14 and 2.15 send 8 or more NVGEMM candidates to
        # (select_algorithm.py 2.14.1 :4753-4840, 2.15.0 :4924-5011). One candidate, in process, proved the kernel
        # but hid what the workers lose (STACK.md section 9).
        "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS": backends,
    }, way)


def parse_child_output(text: str) -> tuple[Optional[dict], Optional[str]]:
    """(the result line's JSON or None, the last phase the child reached) from the child's log."""
    results = result_lines(text, SMOKE_RESULT)
    result = results[-1] if results else None
    phase = None
    for line in text.splitlines():
        words = (phase_of(line, SMOKE_PHASE) or "").split()
        phase = words[0] if words else phase
    if result is not None and result.get("phase"):
        phase = result["phase"]
    return result, phase


# --------------------------------------------------------------------------------------------------------------
# The run


def run_smoke(
    python: str,
    facts: Facts,
    policy: Policy,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    fresh: bool = False,
    cache_dir: Optional[Path] = None,
    shape: SmokeShape = SmokeShape(),
    env: Optional[Mapping[str, str]] = None,
    child: Optional[Path] = None,
    backends: Optional[str] = None,
    library: bool = False,
    progress: Callable[[str], None] = lambda message: None,
) -> SmokeResult:
    """Prove the stack with one GEMM. Never raises for anything the target does: every outcome is a SmokeResult.

    cache_dir: envcheck's cache root (default paths.cache_dir()); Inductor's cache is cache_dir/inductor.
    child: the script to run (default envcheck/inside/smoke_child.py; tests pass others). backends: override the
    backends the policy and the GPU imply (used to capture failures). library: call the profile's kernel library
    directly (inside/library.py) instead of going through Inductor.
    """
    base_env = dict(os.environ if env is None else env)
    cache_root = Path(cache_dir) if cache_dir is not None else paths.cache_dir(base_env)
    ctx = context_from(facts, policy, python, backends or "", shape.dtype)
    backends = backends or smoke_backends(policy, ctx.capability)
    ctx = replace(ctx, backends=backends)
    way = runner.compile_way(base_env, facts, policy)
    common = dict(backends=backends, shape=shape.text, cache_dir=str(runner.cache_dirs(cache_root, way.value)[0]),
                  gpu=ctx.gpu or None)

    early = preflight(facts, policy, ctx)
    if early is not None:  # no child ran: it compiled no way
        return _from_cause(early, **common)
    common["compile_target"] = way
    module = library_module(policy)
    if library and not module:  # before anything is made or --fresh empties the caches: a refused run changes nothing
        return _from_cause(Cause("no-library", f"The profile {policy.id} names no kernel library ([smoke] library), so "
                                 "there is nothing to call directly.", Remedy(text="Run `envcheck smoke` without --library.")),
                           **common)

    run_dir, warm_before = runner.prepare_run(cache_root, "smoke", fresh=fresh, env=base_env,
                                              named=cache_dir is not None, way=way)
    log_path = run_dir / "smoke.log"
    script = write_child(run_dir, child)
    argv = [
        python, str(script), "--m", str(shape.m), "--n", str(shape.n), "--k", str(shape.k),
        "--dtype", shape.dtype, "--layout", ",".join(shape.layouts), *profile_arguments(policy),
    ]
    if library:
        argv += ["--library", module]
        progress(f"running a {shape.text} GEMM through {module} directly in {python}; log: {log_path}")
    else:
        argv += [
            "--backends", backends, "--code-out", str(run_dir / "output_code.py"),
            *runner.lookup_arguments(module, cache_root),
        ]
        progress(
            f"compiling a {shape.text} GEMM with {backends} in {python} "
            f"({'warm cache' if warm_before else 'cold cache: half a minute or more'}); log: {log_path}"
        )
    environment = child_environment(base_env, cache_root, backends, way)
    common.update(log=str(log_path), environment=environment.record)
    with open(log_path, "w", encoding="utf-8") as log:
        log.write(f"# envcheck smoke: {shell.line(argv)}\n# timeout {timeout:g} s, cache {cache_root}\n")
        log.flush()
        try:
            end = run_child(argv, environment.variables, run_dir, log, timeout)
        except OSError as exc:  # the interpreter is not there, or not executable
            log.write(f"# could not start {python}: {exc}\n")
            cause = Cause("interpreter", f"Could not start {python}: {exc.strerror or exc}.",
                          Remedy(text="Pass a working interpreter with --python PATH."))
            return _from_cause(cause, **common)
    text = log_path.read_text(encoding="utf-8", errors="replace")
    result, phase = parse_child_output(text)
    measured = {**_measured(result, end, ctx), "candidates": () if library else read_log_candidates(text)}
    if result is not None and result.get("ok"):
        return _passed(result, ctx, policy, {**common, **measured})
    cause = diagnose(
        Evidence(result=result, log=text, returncode=end.returncode, timed_out=end.timed_out, timeout_s=timeout, last_phase=phase),
        ctx,
    )
    return _from_cause(cause, **{**common, **measured})


def write_child(run_dir: Path, child: Optional[Path] = None) -> Path:
    """Copy the child script (smoke_child.py, the name logs and users know) and the helpers it imports into run_dir;
    return the script's path. child: another script in place of smoke_child.py (tests)."""
    return runner.write_scripts(run_dir, SMOKE_SCRIPTS, child)


def library_module(policy: Policy) -> str:
    """The module of the profile's kernel library, the one Inductor's NVGEMM backend calls ("" when it names none)."""
    return policy.smoke.library


def profile_arguments(policy: Policy) -> list[str]:
    """What the child must know of the profile: the modules Inductor looks for (imported first, so that a broken
    one shows its real error), and how the generated code names the kernel call and the kernel."""
    library = library_module(policy)
    modules = policy.inductor_modules or (policy.cutedsl_module, *((library,) if library else ()))
    argv = ["--modules", ",".join(modules)]
    if policy.smoke.call_pattern:
        argv += ["--call-pattern", policy.smoke.call_pattern]
    if policy.smoke.kernel_pattern:
        argv += ["--kernel-pattern", policy.smoke.kernel_pattern]
    return argv


def _measured(result: Optional[dict], end: ChildEnd, ctx: Context) -> dict:
    result = result or {}
    gpu = result.get("gpu") or {}
    capability = gpu.get("capability") or []
    versions = runner.versions_of(result)
    warm = runner.warm_compile(result.get("cache"))
    tolerance = result.get("tolerance")
    return {
        "kernel": result.get("kernel"),
        "call": result.get("call"),
        "gpu": f"{gpu['name']} ({'.'.join(map(str, capability))})" if gpu.get("name") else (ctx.gpu or None),
        "compile_s": result.get("compile_s"),
        "run_s": result.get("run_s"),
        "elapsed_s": end.elapsed_s,
        "max_error": result.get("max_error"),
        "tolerance": f"atol {tolerance['atol']:g} + rtol {tolerance['rtol']:g}" if tolerance else None,
        "warm": warm,
        "kernel_lookup": result.get("kernel_lookup"),
        "library": result.get("library"),
        "tried": tuple((str(t.get("kernel")), str(t.get("error"))) for t in (result.get("tried") or []) if isinstance(t, dict)),
        "versions": versions,
        "timings": tuple((str(p), float(t)) for p, t in (result.get("timings") or [])),
        "process": process_from(result),
        "layout": result.get("layout"),
        "gemms": tuple(_proof(g) for g in (result.get("gemms") or []) if isinstance(g, dict)),
    }


def _proof(entry: dict) -> GemmProof:
    number = lambda key: float(entry[key]) if isinstance(entry.get(key), (int, float)) else None  # noqa: E731
    return GemmProof(layout=str(entry.get("layout")), kernel=entry.get("kernel"), call=entry.get("call"),
                     compile_s=number("compile_s"), run_s=number("run_s"), max_error=number("max_error"))


def _passed(result: dict, ctx: Context, policy: Policy, fields: dict) -> SmokeResult:
    if fields["library"]:
        through = f"{fields['library']} directly (no Inductor)"
        fields = {**fields, "warm": None}
    else:
        through = fields["call"]
    summary = (
        f"{fields['kernel']} ran on {fields['gpu']} through {through}: compile {fields['compile_s']:.1f} s"
        f"{' (warm)' if fields['warm'] else ' (cold)' if fields['warm'] is False else ''}, "
        f"run {fields['run_s'] * 1e3:.3f} ms, max error {fields['max_error']:.3g}"
    )
    for proof in fields["gemms"][1:]:  # the other layouts asked for (--layout both)
        summary += f"; B {proof.layout}: {proof.kernel}, run {(proof.run_s or 0) * 1e3:.3f} ms, max error {proof.max_error:.3g}"
    dsl = dict(fields["versions"]).get(policy.cutedsl.name) or ctx.cutedsl_version
    lost = environment_cause(fields["candidates"], ctx)
    if fields["kernel"] and lost is not None:
        said = lost_text(fields["candidates"])
        return SmokeResult(
            status=Status.WARN,
            summary=f"{summary} — but {said}",
            cause=f"{said}. {lost.text} The kernel that ran was chosen without them.",
            cause_id=lost.id,
            remedy=lost.remedy,
            evidence=lost.evidence,
            **fields,
        )
    if not fields["kernel"]:
        return SmokeResult(
            status=Status.WARN,
            summary=summary + " — but the generated code names no cutedsl.* kernel",
            cause=f"{fields['call']} ran and matched the reference, but Inductor's generated code does not name the "
            "cutlass_api kernel it used: this torch writes its NVGEMM code differently from the one envcheck knows.",
            cause_id="kernel-unnamed",
            remedy=Remedy(text="Read the generated code beside the log; report it if it is a torch envcheck should know."),
            **fields,
        )
    if dsl and not _version_in(dsl, policy):
        return SmokeResult(
            status=Status.WARN,
            summary=summary + f" — but nvidia-cutlass-dsl {dsl} is outside the profile's range ({policy.cutedsl.specifier})",
            cause=f"The smoke run passed with nvidia-cutlass-dsl {dsl}, which profile {policy.id} does not cover "
            f"({policy.cutedsl.requirement}): this GEMM works, but the profile says why that is not enough: "
            f"{policy.cutedsl.why or 'it was not tested'}",
            cause_id="dsl-outside-policy",
            remedy=Remedy(
                text=f"Install {policy.cutedsl.requirement} to match the tested stack.",
                commands=((ctx.python, "-m", "pip", "install", policy.cutedsl.requirement),),
            ),
            **fields,
        )
    return SmokeResult(status=Status.PASS, summary=summary, **fields)


def _version_in(version: str, policy: Policy) -> bool:
    try:
        return Version(version) in policy.cutedsl.specifier
    except InvalidVersion:
        return False


def _from_cause(cause: Cause, **fields) -> SmokeResult:
    verb = "skipped" if cause.status is Status.SKIP else "failed"
    proved = fields.get("gemms") or ()
    if fields.get("layout") and proved:  # --layout both: one layout passed, the next one failed
        verb += f" on B {fields['layout']} (B {' and '.join(g.layout for g in proved)} passed)"
    return SmokeResult(
        status=cause.status,
        summary=f"smoke {verb}: {cause.text}",
        cause=cause.text,
        cause_id=cause.id,
        remedy=cause.remedy,
        evidence=cause.evidence,
        **fields,
    )
