"""Running a script of envcheck/inside/ in the target interpreter, as smoke and bench do.

The script is copied into a run directory of its own under envcheck's cache (logs and generated code stay there;
the newest KEEP_RUNS are kept), with the helpers it imports beside it (write_scripts), run by path with no shell, in
a session of its own (so a timeout kills its whole process group, Inductor's compile workers included), with an
environment that clears what would change the run (ENVIRONMENT: every variable that bears on NVGEMM, cleared or kept,
and why; the result records each one present, and names the user's settings it compiled with: Inductor's NVGEMM
settings, passed on so that a GEMM gets as many NVGEMM choices as in the user's process) and points Inductor's, Triton's and CuteDSL's caches into envcheck's
cache (so a second run is warm). The DSL's compile target (CUTE_DSL_ARCH) is passed on only where it names this GPU's
own target (compile_way); Inductor's cache is kept apart per compile target, so that a run with the remedy never
answers from one without it, or the other way round. The script speaks envcheck/inside/protocol.py: `PREFIX {json}`
lines on stdout, which protocol.result_lines reads back from the log.
"""

from __future__ import annotations

import datetime
import fnmatch
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Optional, Sequence, TextIO

from . import paths
from .inside import lookup
from .judge.target import DSL_ARCH, device_target
from .model import CompileWay, EnvironmentRecord, Facts
from .model.smoke import CLEARED, REMEDY, YOURS
from .profile import Policy
from .proc import kill_group, stop_group
from .redact import Redactor

__all__ = [
    "BENCH_SCRIPTS",
    "ChildEnd",
    "ChildEnvironment",
    "ENVIRONMENT",
    "KEEP_RUNS",
    "LOOKUP_MARKER",
    "SMOKE_SCRIPTS",
    "Variable",
    "cache_dirs",
    "child_environment",
    "compile_way",
    "lookup_arguments",
    "new_run_dir",
    "run_child",
    "variable_rule",
    "write_scripts",
]

KILL_GRACE = 5.0  # seconds between SIGTERM and SIGKILL for the child's process group
KEEP_RUNS = 20  # run directories kept under the cache (logs, generated code)
LOOKUP_MARKER = "envcheck-kernel-lookup.json"  # the stack on which Inductor's full kernel enumeration worked
INSIDE = Path(__file__).resolve().parent / "inside"  # copied as files (only lookup's LIBRARY is read here)
# What a child needs in its run folder: the script (first), then the envcheck/inside/ helpers it imports.
SMOKE_SCRIPTS = ("smoke_child", "protocol", "gemm", "lookup", "loaded", "library")
BENCH_SCRIPTS = ("bench_child", "protocol", "gemm", "lookup", "timing", "stoprule", "shape_timing", "library")

CLEAR, KEEP = True, False


@dataclass(frozen=True)
class Variable:
    """What a child run does with a variable of the caller's environment, or a family of them (a shell pattern)."""

    name: str  # "CUTE_DSL_*": fnmatch's pattern, case as written
    clear: bool  # CLEAR: not passed on; KEEP: passed on as it is. Either way a present one is recorded.
    why: str
    unless_target: bool = False  # cleared, except where it names this GPU's own compile target (compile_way)
    setting: bool = False  # a setting of the user's that changes what the run compiles: the result's text names it

    def covers(self, variable: str) -> bool:
        return fnmatch.fnmatchcase(variable, self.name)


# Every variable of the caller's that bears on what an NVGEMM run does (facts-17 section 7 lists what torch 2.13-2.15,
# nvidia-cutlass-operators 0.3.0, nvidia-cutlass-dsl 4.8.1 and apache-tvm-ffi read): cleared where it changes what
# runs or how it is measured (the run is envcheck's, the same on every machine), kept where a site needs it and it
# changes no kernel. The first row that covers a name decides. Each one present is recorded in the result (the
# smoke's and the bench's `environment`); envcheck's own caches and settings are set after (child_environment).
ENVIRONMENT = (
    Variable("TVM_FFI_CACHE_DIR", KEEP, "where tvm-ffi builds its torch addon (only for a torch without the DLPack "
             "exchange API): a site's writable folder; it changes no kernel"),
    Variable("CUTLASS_NVMMH_SO_PATH", KEEP, "where the nvMatmulHeuristics library is (cutlass.operators' heuristics): "
             "a site's install location"),
    Variable("CUDA_VISIBLE_DEVICES", KEEP, "which GPUs the run may use: the user's choice; recorded so that a result "
             "says which device 0 was"),
    # Inductor's NVGEMM settings (every TORCHINDUCTOR_NVGEMM_ torch 2.14.1 and 2.15.0 read: config.py 2.14.1
    # :659-679, 2.15.0 :708-746, 2.14.1 kernel/vendored_templates/cutedsl/wrappers/dense_blockscaled_gemm_kernel.py:220)
    # decide how many NVGEMM choices a GEMM gets, and so whether torch sends their precompile to its compile workers
    # (8 or more: cutedsl.arch): the child compiles with the user's, as the user's process does. None makes the run
    # prove nothing: each still compiles through NVGEMM alone, and the generated code names the kernel that ran.
    Variable("TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS", KEEP, "how many heuristic-ranked NVGEMM choices a GEMM "
             "gets per family (10 by default in torch 2.14 and 2.15; all, none or 0: every one): passed on, so the "
             "child's GEMMs get as many as the user's process's (a value torch cannot read fails both alike)",
             setting=True),
    Variable("TORCHINDUCTOR_NVGEMM_SUPPLEMENT_CONFIGS", KEEP, "adds hand-picked tile and cluster configs to each "
             "GEMM's choices: passed on, as the user's process has it", setting=True),
    Variable("TORCHINDUCTOR_NVGEMM_SWAP_AB", KEEP, "adds a family of choices with A and B swapped to each 2-D GEMM: "
             "passed on, as the user's process has it", setting=True),
    Variable("TORCHINDUCTOR_NVGEMM_PDL", KEEP, "programmatic dependent launch of the SM100 block-scaled (NVFP4) "
             "kernel (torch 2.15): passed on, as the user's process has it; a bf16 GEMM does not use it", setting=True),
    Variable("TORCHINDUCTOR_NVGEMM_PREFETCH", KEEP, "the prefetch variant of the SM100 block-scaled kernel (torch "
             "2.14): passed on, as the user's process has it; a bf16 GEMM does not use it", setting=True),
    Variable("TORCHINDUCTOR_NVGEMM_*", KEEP, "Inductor's other NVGEMM settings (a newer torch's): passed on, as the "
             "user's process has them", setting=True),
    Variable("TORCHINDUCTOR_MAX_AUTOTUNE*", CLEAR, "max-autotune, its GEMM backends and search space: each child "
             "sets the backends it proves or times"),
    Variable("TORCHINDUCTOR_*AUTOTUNE*", CLEAR, "how Inductor autotunes and what it may pick: IN_SUBPROC, the "
             "CHOICE_NAME_REGEX and CHOICE_DESC_REGEX filters, FALLBACK_TO_ATEN, local and remote caches, warm-up"),
    Variable("TORCHINDUCTOR_FORCE_DISABLE_CACHES", CLEAR, "Inductor's caches are envcheck's: a second run is warm, "
             "--fresh empties them"),
    Variable("TORCHINDUCTOR_FX_GRAPH_CACHE", CLEAR, "Inductor's caches are envcheck's"),
    Variable("TORCHINDUCTOR_COMPILE_THREADS", CLEAR, "the pool of compile workers: the smoke compiles in-process"),
    Variable("TORCH_COMPILE_DISABLE", CLEAR, "turns torch.compile off: nothing would be proved"),
    Variable("TORCHDYNAMO_DISABLE", CLEAR, "turns torch.compile off: nothing would be proved"),
    Variable("CUTEDSL_*", CLEAR, "CUTEDSL_ENABLE_AUTOTUNING: Inductor's autotuning of its CuteDSL templates"),
    # What the DSL 4.8.1 (nvidia-cutlass-dsl-libs-core) and nvidia-cutlass-operators 0.3.0 read: every os.environ and
    # getenv of both wheels. Only ARCH is a setting a user's process depends on to compile for its own GPU.
    Variable("CUTE_DSL_ARCH", CLEAR, "the DSL's compile target: it wins over the GPU in every process (operators "
             "providers/cutedsl/operator.py:57-62, DSL base_dsl/compile_backend.py:94-95) and is all that Inductor's "
             "compile workers have (torch >= 2.14 compiles without a target there, the DSL falls back to sm_100a: "
             "cutedsl.arch): passed on where it names this GPU's own target (the remedy, as in the user's process), "
             "cleared where it names another or this GPU's is not known", unless_target=True),
    Variable("CUTE_DSL_CACHE_DIR", CLEAR, "where the DSL keeps what it compiled (base_dsl/cache_helpers.py:71): "
             "envcheck sets its own; its key holds every setting that changes a compile, the target too "
             "(env_manager.py:259-268)"),
    Variable("CUTE_DSL_LIBS", CLEAR, "the DSL's MLIR runtime libraries (base_dsl/env_manager.py:725-745): found beside "
             "the installed DSL without it, and the run proves the install"),
    Variable("CUTE_DSL_ENABLE_TVM_FFI", CLEAR, "the DSL's launch path (env_manager.py:964); against "
             "CUTLASS_OPERATORS_USE_TVM_FFI it fails the first launch (operators config.py:125-139); unset, TVM FFI is "
             "on where apache-tvm-ffi is installed (config.py:154-164)"),
    Variable("CUTE_DSL_DRYRUN", CLEAR, "generates IR only (env_manager.py:926): nothing would run"),
    Variable("CUTE_DSL_*", CLEAR, "the rest of CuTeDSL's settings (base_dsl/env_manager.py:763-967, "
             "cutlass_dsl/cutlass.py:1847, base_dsl/dsl.py:1348, base_dsl/utils/leaf_utils.py:528; the operators' "
             "CUTE_DSL_EFC_*: providers/cutedsl/evt/efc/_helpers.py:69, evt/efc/dense_gemm/sm100/_helpers.py:69-73): "
             "compile options that change the code (DEBUG, LINEINFO, COMPILER_OPT, COMPILER_BACKEND, ENABLE_ASSERTIONS, "
             "ENABLE_PYIR, AUTO_M2S, TOLERATE_M2M, LOC_TRACEBACKS, WARNINGS_AS_ERRORS, USE_EXTENSION_COMPILER), "
             "caching (NO_CACHE, DISABLE_FILE_CACHING, JIT_CACHE_MAX_ELEMS), logs and dumps (LOG_*, PRINT_*, KEEP*, "
             "DUMP_DIR, *STACKTRACE, JIT_TIME_PROFILING): none is needed for a process to compile for its GPU"),
    Variable("CUTLASS_OPERATORS_*", CLEAR, "USE_TVM_FFI, the operators' only variable (config.py:110-164): every "
             "operator's launch path; against CUTE_DSL_ENABLE_TVM_FFI it fails the first launch (Conflicting "
             "environment variables); unset, TVM FFI is on where apache-tvm-ffi is installed"),
    Variable("DISABLE_ARGUMENT_FILTERING", CLEAR, "cutlass.operators: any value but 0 turns off the filtering of "
             "operators by the GEMM's arguments"),
    Variable("TVM_FFI_*", CLEAR, "tvm-ffi's switches (DISABLE_TORCH_C_DLPACK) and the flags of its JIT builds"),
    Variable("PYTHONDONTWRITEBYTECODE", CLEAR, "torch without .pyc files costs seconds of byte-compiling in every "
             "warm run"),
)


def variable_rule(name: str) -> Optional[Variable]:
    """The row of ENVIRONMENT that decides what a child run does with `name`; None: passed on, not recorded."""
    return next((rule for rule in ENVIRONMENT if rule.covers(name)), None)


def cache_dirs(cache_root: Path, target: Optional[str] = None) -> tuple[Path, ...]:
    """The compiler caches envcheck owns: Inductor's, Triton's and CuteDSL's. Inductor's is one per compile target a
    child runs with (`target`: the CUTE_DSL_ARCH passed on; None: none), since its autotuning results and the CuteDSL
    artifacts under it are keyed by the GPU, not by the target they were compiled for (torch 2.14.1
    runtime/cutedsl_cache.py:70-85): a warm run with the remedy would skip the compile workers and show no loss only
    because the other way's run had filled it. Triton's ignores the variable; the DSL's keys hold it
    (env_manager.py:259-268)."""
    inductor = "inductor" if target is None else f"inductor-{target}"
    return tuple(cache_root / name for name in (inductor, "triton", "cutedsl"))


def compile_way(base: Mapping[str, str], facts: Facts, policy: Policy) -> CompileWay:
    """Which way a child compiles: the caller's compile-target variable passed on where it is this GPU's own target
    (the GPU CUDA's device 0 is, in the facts), else cleared; unset, as the caller's process does."""
    variable = policy.compile_target.variable if policy.compile_target is not None else DSL_ARCH
    target, yours = device_target(facts, policy), base.get(variable)
    if yours is None:
        return CompileWay(variable, YOURS, target=target)
    if yours == target:
        return CompileWay(variable, REMEDY, yours, target, yours)
    return CompileWay(variable, CLEARED, None, target, Redactor(base)(yours))


@dataclass(frozen=True)
class ChildEnvironment:
    """A child's environment, and what the result says of it."""

    variables: Mapping[str, str]
    record: EnvironmentRecord
    way: Optional[CompileWay] = None


def child_environment(base: Mapping[str, str], cache_root: Path, settings: Mapping[str, str],
                      way: Optional[CompileWay] = None) -> ChildEnvironment:
    """The child's environment: the caller's, less what ENVIRONMENT clears, plus envcheck's caches and settings; and
    the record of it (values redacted: a variable may hold a URL with a password, or a home path). `way`: the compile
    target it runs with (compile_way; None: none passed on), which also picks Inductor's cache folder."""
    passed = way.value if way is not None else None
    caches = dict(zip(("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "CUTE_DSL_CACHE_DIR"), cache_dirs(cache_root, passed)))
    own = {"PYTHONUNBUFFERED": "1", **{name: str(path) for name, path in caches.items()}, **settings}
    rules = {name: variable_rule(name) for name in base}
    kept = {way.variable} if passed is not None else set()
    rules = {name: (replace(rule, clear=False) if rule is not None and rule.unless_target and name in kept else rule)
             for name, rule in rules.items()}
    variables = {k: v for k, v in base.items() if not (rules[k] and rules[k].clear)}
    variables.update(own)
    redact = Redactor(base)
    record = EnvironmentRecord(
        cleared=tuple((k, redact(v)) for k, v in sorted(base.items())
                      if (rules[k] and rules[k].clear or k in own) and v != own.get(k)),
        kept=tuple((k, redact(v)) for k, v in sorted(base.items()) if rules[k] and not rules[k].clear and k not in own),
        settings=tuple((k, redact(v)) for k, v in sorted(base.items())
                       if rules[k] and not rules[k].clear and rules[k].setting and k not in own),
        assigned=tuple((k, redact(v)) for k, v in sorted(own.items())),
    )
    return ChildEnvironment(variables, record, way)


def lookup_arguments(library: str, cache_root: Path) -> list[str]:
    """The child's --lookup-marker, where the profile's kernel library is the one whose kernel lookup
    envcheck/inside/lookup.py seeds (cutlass_api's); none for another library."""
    return ["--lookup-marker", str(cache_root / "inductor" / LOOKUP_MARKER)] if library == lookup.LIBRARY else []


def new_run_dir(cache_root: Path, kind: str) -> Path:
    """A fresh directory under cache_root/kind whose name sorts by time; only the newest KEEP_RUNS stay."""
    runs = cache_root / kind
    runs.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")  # to the microsecond: names sort by time
    run_dir = Path(tempfile.mkdtemp(prefix=f"{stamp}-", dir=runs))  # two runs never share one
    for old in sorted(p for p in runs.iterdir() if p.is_dir())[:-KEEP_RUNS]:
        shutil.rmtree(old, ignore_errors=True)
    return run_dir


def prepare_run(cache_root: Path, kind: str, *, fresh: bool, env: Mapping[str, str], named: bool,
                way: Optional[CompileWay] = None) -> tuple[Path, bool]:
    """Before a child run: the cache folder checked (the one thing here that is the user's, not the target's: one
    that cannot be written is a UsageError naming the variable that chose it, or the caller's cache_dir when named),
    the compiler caches emptied when fresh, a new run folder under cache_root/kind, and Inductor's cache folder made.
    Returns (the run folder, whether Inductor's cache held anything already)."""
    what = " ".join(filter(None, ("" if named else paths.folder_origin(env), "(envcheck's cache folder)")))
    paths.usable_folder(cache_root, what, create=True)
    caches = cache_dirs(cache_root, way.value if way is not None else None)  # this way's (child_environment's)
    inductor = caches[0]
    if fresh:
        for folder in caches:
            shutil.rmtree(folder, ignore_errors=True)
    warm = inductor.is_dir() and any(inductor.iterdir())
    # The run folders, and the compiler caches the child loads compiled code from: the user's alone, or refused.
    for folder, make in ((cache_root / kind, True), (inductor, True), *((f, False) for f in caches[1:])):
        paths.usable_folder(folder, what, create=make, root=cache_root)
    return new_run_dir(cache_root, kind), warm


def _copied_name(scripts: Sequence[str], name: str) -> str:
    """The file name of an envcheck/inside/ module in a run folder: the script (scripts[0]) under its own name, the
    one logs and users know; each helper as envcheck_<name>.py, so that it shadows no top-level module torch, Triton
    or the DSL imports (the run folder is sys.path[0] of the child)."""
    return f"{name}.py" if name == scripts[0] else f"envcheck_{name}.py"


def write_scripts(run_dir: Path, scripts: Sequence[str], source: Optional[Path] = None) -> Path:
    """Copy a child script of envcheck/inside/ and the helpers it imports (SMOKE_SCRIPTS, BENCH_SCRIPTS) into
    run_dir; return the script's path. source: another script in place of scripts[0] (tests)."""
    for name in scripts:
        origin = source if source is not None and name == scripts[0] else INSIDE / f"{name}.py"
        (run_dir / _copied_name(scripts, name)).write_text(origin.read_text(encoding="utf-8"), encoding="utf-8")
    return run_dir / _copied_name(scripts, scripts[0])


@dataclass(frozen=True)
class ChildEnd:
    """How the child process ended."""

    returncode: Optional[int]
    timed_out: bool
    elapsed_s: float
    pid: Optional[int] = None  # its process (and process group) id


def run_child(argv: list[str], env: Mapping[str, str], cwd: Path, log: TextIO, timeout: float, started=None) -> ChildEnd:
    """Run argv (no shell) in a new session writing to log; on timeout kill its whole process group.

    started: called with the child's pid once it runs (bench watches the GPU for processes that are not its own)."""
    began = time.monotonic()
    process = subprocess.Popen(
        argv, env=dict(env), cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    if started is not None:
        started(process.pid)
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        stop_group(process, KILL_GRACE)
    finally:
        if process.poll() is None:  # interrupted while waiting: take the child down with us
            kill_group(process.pid)
            process.wait()
        kill_group(process.pid)  # helpers it left behind (Inductor's compile workers)
    return ChildEnd(None if timed_out else process.returncode, timed_out, round(time.monotonic() - began, 3), process.pid)


def warm_compile(counters: Optional[Mapping[str, int]]) -> Optional[bool]:
    """From the Inductor counters a child reports for one compile: True when its FX graph came from the cache (hits,
    no miss), False when it was compiled, None when the counters do not say."""
    counters = counters or {}
    if "fxgraph_cache_hit" not in counters and "fxgraph_cache_miss" not in counters:
        return None
    return counters.get("fxgraph_cache_hit", 0) > 0 and not counters.get("fxgraph_cache_miss", 0)


def versions_of(result: Optional[Mapping]) -> tuple[tuple[str, str], ...]:
    """The (distribution, version) pairs a child's result names, sorted; the ones it could not read left out."""
    return tuple(sorted((str(k), str(v)) for k, v in ((result or {}).get("versions") or {}).items() if v))

